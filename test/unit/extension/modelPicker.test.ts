import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listServerModels } from '../../../src/core/providers/serverModels';
import { modelPicker } from '../../../src/extension/models';
import { resolveProviderConfig } from '../../../src/extension/providerConfig';
import { parseRunArgs } from '../../../src/cli/args';
import { DEFAULT_MODELS, PROVIDER_MODELS } from '../../../src/shared/domain/models';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const labels = (p: ReturnType<typeof modelPicker>) => (p.kind === 'pick' ? p.items.map((i) => i.label) : []);

describe('Select Model lists the models of the configured provider', () => {
  it('Anthropic: the Claude models, the default and the current one marked, then Custom…', () => {
    const p = modelPicker('anthropic', '');
    expect(labels(p)).toEqual([...PROVIDER_MODELS.anthropic.known.map((m) => m.id), 'Custom…']);
    expect(p.kind === 'pick' && p.items[0]!.description).toBe('Balanced · default · current');
    const opus = modelPicker('anthropic', 'claude-opus-5-5');
    expect(opus.kind === 'pick' && opus.items.find((i) => i.id === 'claude-opus-5-5')?.description).toBe('Most capable · current');
    expect(labels(modelPicker('anthropic', 'claude-custom-1'))).toContain('claude-custom-1');
  });

  it('demo: only the demo model (no Claude model), and a way to another provider', () => {
    const p = modelPicker('demo', 'claude-opus-5-5');
    expect(labels(p)).toEqual(['demo model', 'Use another provider…']);
    expect(labels(p).some((l) => l.startsWith('claude'))).toBe(false);
  });

  it("OpenAI-compatible: the server's own list when it answers, else typing an id (with why)", () => {
    const listed = modelPicker('openai-compatible', 'qwen2.5-coder:7b', { ok: true, models: ['llama3.2', 'qwen2.5-coder:7b'] });
    expect(labels(listed)).toEqual(['llama3.2', 'qwen2.5-coder:7b', 'Custom…']);
    expect(labels(listed).some((l) => l.startsWith('claude'))).toBe(false);
    expect(labels(modelPicker('openai-compatible', 'mistral', { ok: true, models: ['llama3.2'] }))[0]).toBe('mistral');
    const down = modelPicker('openai-compatible', '', { ok: false, reason: 'nothing answers at http://localhost:11434/v1 (is the server running?).' });
    expect(down).toMatchObject({ kind: 'type', value: '', placeHolder: `e.g. ${DEFAULT_MODELS['openai-compatible']}` });
    expect(down.kind === 'type' && down.prompt).toContain('is the server running?');
  });

  it('the CLI and the extension default to the same model per provider (one table)', () => {
    const settings = { provider: 'openai-compatible', model: '', anthropicBaseUrl: '', openaiBaseUrl: '', defaultMode: '' };
    expect(resolveProviderConfig(settings, undefined, {}).model).toBe(parseRunArgs(['hi', '--provider', 'openai-compatible'], {}).provider.model);
    expect(resolveProviderConfig({ ...settings, provider: 'anthropic' }, 'k', {}).model).toBe(parseRunArgs(['hi'], {}).provider.model);
  });
});

describe('listServerModels (through the openai SDK)', () => {
  let server: FakeModelServer;

  it('lists what a real loopback server serves, sorted, with the key it needs', async () => {
    server = await startFakeModelServer({ models: ['qwen2.5-coder:7b', 'llama3.2'], requireApiKey: 'sk-local' });
    closers.push(() => server.close());
    expect(await listServerModels({ baseUrl: `${server.url}/v1`, apiKey: 'sk-local' })).toEqual({ ok: true, models: ['llama3.2', 'qwen2.5-coder:7b'] });
    const refused = await listServerModels({ baseUrl: `${server.url}/v1`, apiKey: 'wrong' });
    expect(refused).toMatchObject({ ok: false, reason: expect.stringContaining('refused the API key') });
    expect(server.requests.filter((r) => r.path === '/v1/models')).toHaveLength(2);
  });

  it('a server without the list, a closed port, or one that never answers: a reason, no throw', async () => {
    server = await startFakeModelServer();
    closers.push(() => server.close());
    expect(await listServerModels({ baseUrl: `${server.url}/v1` })).toMatchObject({ ok: false, reason: expect.stringContaining('HTTP 404') });

    const closed = await startFakeModelServer();
    const url = `${closed.url}/v1`;
    await closed.close();
    expect(await listServerModels({ baseUrl: url })).toMatchObject({ ok: false, reason: expect.stringContaining('nothing answers') });

    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => { silent.closeAllConnections(); silent.close(() => r()); }));
    const port = (silent.address() as AddressInfo).port;
    expect(await listServerModels({ baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 300 })).toMatchObject({ ok: false, reason: expect.stringContaining('did not answer') });
  });
});
