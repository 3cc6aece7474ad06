import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STALL_TIMEOUT_MS, TIMEOUT_SECONDS } from '../../../src/core/providers/timeouts';
import { type KeelSettings, resolveProviderConfig, TIMEOUT_SETTINGS } from '../../../src/extension/providerConfig';

/**
 * `keel.timeouts.stallSeconds` and `keel.timeouts.responseSeconds`: the person's waits on a slow
 * model server reach the provider config every run reads (and so the worker that runs it), with
 * the CLI's check; a value that cannot be used is said, never silently replaced.
 */
const settings = (over: Partial<KeelSettings> = {}): KeelSettings => ({
  provider: 'openai-compatible',
  model: 'qwen3',
  anthropicBaseUrl: '',
  openaiBaseUrl: 'http://localhost:11434/v1',
  defaultMode: 'default',
  ...over,
});

function resolve(over: Partial<KeelSettings>) {
  const notices: string[] = [];
  const config = resolveProviderConfig(settings(over), undefined, {}, undefined, (m) => notices.push(m));
  return { config, notices };
}

describe('the timeout settings', () => {
  it('set the provider config in milliseconds', () => {
    const { config, notices } = resolve({ stallSeconds: 120, responseSeconds: 900 });
    expect(config).toMatchObject({ provider: 'openai-compatible', stallTimeoutMs: 120_000, headerTimeoutMs: 900_000 });
    expect(notices).toEqual([]);
    expect(resolve({ stallSeconds: 2.5 }).config.stallTimeoutMs).toBe(2500);
  });

  it('unset or null: left out, so the provider uses its default, and nothing is said', () => {
    for (const over of [{}, { stallSeconds: null, responseSeconds: null }]) {
      const { config, notices } = resolve(over);
      expect('stallTimeoutMs' in config || 'headerTimeoutMs' in config).toBe(false);
      expect(notices).toEqual([]);
    }
  });

  it.each([0, -1, 0.5, 3601, Number.NaN, '60', true])('%j is not used, and the person is told which setting, what it holds and what applies', (bad) => {
    const { config, notices } = resolve({ stallSeconds: bad, responseSeconds: bad });
    expect('stallTimeoutMs' in config || 'headerTimeoutMs' in config).toBe(false);
    const shown = JSON.stringify(bad);
    expect(notices).toEqual([
      `keel.timeouts.stallSeconds ${shown} is not a number of seconds from 1 to 3600; Keel waits the default, 30 s, until you correct it`,
      `keel.timeouts.responseSeconds ${shown} is not a number of seconds from 1 to 3600; Keel waits the default, 2 min, until you correct it`,
    ]);
  });

  it("the response default named is the provider's own (Anthropic 30 s); one bad setting leaves the other in force", () => {
    const { config, notices } = resolve({ provider: 'anthropic', stallSeconds: 45, responseSeconds: 0 });
    expect(config).toMatchObject({ stallTimeoutMs: 45_000 });
    expect('headerTimeoutMs' in config).toBe(false);
    expect(notices).toEqual(['keel.timeouts.responseSeconds 0 is not a number of seconds from 1 to 3600; Keel waits the default, 30 s, until you correct it']);
  });

  it('the demo provider waits on no server: nothing set, nothing said', () => {
    const { config, notices } = resolve({ provider: 'demo', stallSeconds: 0 });
    expect(config).toEqual({ provider: 'demo', model: expect.any(String) });
    expect(notices).toEqual([]);
  });
});

describe('their declaration in package.json', () => {
  const manifest = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { scope?: string; minimum?: number; maximum?: number; default?: unknown }> } };
  };
  const props = manifest.contributes.configuration.properties;

  it('declares both, user settings only, with the range the code checks and the default the provider uses', () => {
    for (const key of Object.values(TIMEOUT_SETTINGS)) {
      expect(props[key], key).toMatchObject({ scope: 'application', minimum: TIMEOUT_SECONDS.min, maximum: TIMEOUT_SECONDS.max });
    }
    expect(props[TIMEOUT_SETTINGS.stall]!.default).toBe(DEFAULT_STALL_TIMEOUT_MS / 1000);
    // The response default depends on the provider: null means "the provider's".
    expect(props[TIMEOUT_SETTINGS.response]!.default).toBeNull();
  });

  it('no setting sits under another setting (VS Code ignores keel.provider.x while keel.provider holds a value)', () => {
    const keys = Object.keys(props);
    expect(keys.filter((k) => keys.some((other) => k.startsWith(`${other}.`)))).toEqual([]);
  });
});
