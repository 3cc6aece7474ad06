import { describe, expect, it } from 'vitest';
import { parseRunArgs, providerFor, UsageError } from '../../../src/cli/args';

describe('keel run arguments', () => {
  it('picks the model through the model-selection machine: --model > KEEL_MODEL > default', () => {
    expect(parseRunArgs(['hi'], {}).provider.model).toBe('claude-sonnet-5-5');
    expect(parseRunArgs(['hi'], { KEEL_MODEL: 'haiku' }).provider.model).toBe('claude-haiku-5-5');
    expect(parseRunArgs(['hi', '--model', 'opus'], { KEEL_MODEL: 'haiku' }).provider.model).toBe('claude-opus-5-5');
    expect(parseRunArgs(['hi', '--mode', 'plan'], { KEEL_PLAN_MODEL: 'opus' }).provider.model).toBe('claude-opus-5-5');
    expect(parseRunArgs(['hi', '--provider', 'openai-compatible', '--model', 'Qwen2.5-Coder:7B'], {}).provider.model).toBe('Qwen2.5-Coder:7B');
  });

  it('the model follows the mode a task starts in, decided after parsing (settings files, a batch line)', () => {
    const args = parseRunArgs(['hi'], { KEEL_PLAN_MODEL: 'opus', KEEL_MODEL: 'haiku' });
    expect(args.provider.model).toBe('claude-haiku-5-5');
    expect(providerFor(args, 'plan').model).toBe('claude-opus-5-5');
    expect(providerFor(args, 'acceptEdits').model).toBe('claude-haiku-5-5');
    const planned = parseRunArgs(['hi', '--mode', 'plan'], { KEEL_PLAN_MODEL: 'opus' });
    expect(providerFor(planned, 'default').model).toBe('claude-sonnet-5-5');
    // Without a plan model, plan mode keeps the run's model; the demo provider has one model.
    expect(providerFor(parseRunArgs(['hi', '--model', 'haiku'], {}), 'plan').model).toBe('claude-haiku-5-5');
    expect(providerFor(parseRunArgs(['hi', '--provider', 'demo'], { KEEL_PLAN_MODEL: 'opus' }), 'plan').model).toBe(parseRunArgs(['hi', '--provider', 'demo'], {}).provider.model);
  });

  it('takes the key from the environment only', () => {
    expect(parseRunArgs(['hi'], { ANTHROPIC_API_KEY: 'k' }).provider.apiKey).toBe('k');
    expect(parseRunArgs(['hi', '--provider', 'openai-compatible'], { ANTHROPIC_API_KEY: 'k' }).provider.apiKey).toBeUndefined();
  });

  it('rejects bad usage with a message', () => {
    expect(() => parseRunArgs([], {})).toThrow(UsageError);
    expect(() => parseRunArgs(['hi', '--mode', 'yolo'], {})).toThrow(/--mode must be one of/);
    expect(() => parseRunArgs(['hi', '--max-turns', '0'], {})).toThrow(/positive integer/);
    expect(() => parseRunArgs(['hi', '--provider', 'gpt'], {})).toThrow(/--provider/);
    expect(() => parseRunArgs(['hi', '--pass-env', 'A=B'], {})).toThrow(/--pass-env: "A=B" is not an environment variable name/);
  });

  it('--stall-timeout and --response-timeout set the provider\'s waits, in seconds; absent, the provider\'s defaults', () => {
    const set = parseRunArgs(['hi', '--stall-timeout', '2', '--response-timeout', '600'], {});
    expect(set.provider).toMatchObject({ stallTimeoutMs: 2000, headerTimeoutMs: 600_000 });
    expect(parseRunArgs(['hi', '--stall-timeout=2.5'], {}).provider.stallTimeoutMs).toBe(2500);
    const unset = parseRunArgs(['hi'], {}).provider;
    expect('stallTimeoutMs' in unset || 'headerTimeoutMs' in unset).toBe(false);
    // Every mode's provider keeps them (plan mode changes only the model).
    expect(providerFor(parseRunArgs(['hi', '--stall-timeout', '300'], { KEEL_PLAN_MODEL: 'opus' }), 'plan')).toMatchObject({ model: 'claude-opus-5-5', stallTimeoutMs: 300_000 });
  });

  it.each([
    ['--stall-timeout', '0'],
    ['--stall-timeout', '-5'],
    ['--stall-timeout', 'NaN'],
    ['--stall-timeout', '10s'],
    ['--stall-timeout', '3601'],
    ['--response-timeout', '0.5'],
    ['--response-timeout', '1e3'],
  ])('%s %s is bad usage that names the flag, the range and what was given', (flag, value) => {
    expect(() => parseRunArgs(['hi', flag, value], {})).toThrow(UsageError);
    expect(() => parseRunArgs(['hi', flag, value], {})).toThrow(`${flag} must be a number of seconds from 1 to 3600, such as 120 (got "${value}")`);
  });

  it('--stall-timeout without its number is bad usage, not the prompt taken as one', () => {
    expect(() => parseRunArgs(['hi', '--stall-timeout'], {})).toThrow(/--stall-timeout needs a value/);
    expect(() => parseRunArgs(['--stall-timeout', '--mode', 'plan', 'hi'], {})).toThrow(/--stall-timeout needs a value/);
  });

  it('collects --pass-env names, repeated, without duplicates', () => {
    expect(parseRunArgs(['hi'], {}).passEnv).toEqual([]);
    expect(parseRunArgs(['hi', '--pass-env', 'NPM_TOKEN', '--pass-env', 'GIT_SSH_COMMAND', '--pass-env', 'NPM_TOKEN'], {}).passEnv).toEqual(['NPM_TOKEN', 'GIT_SSH_COMMAND']);
  });

  it('runs on workers by default, as VS Code does (4); --workers N, else KEEL_WORKERS, chooses; 0 is in this process', () => {
    expect(parseRunArgs(['hi'], {}).workers).toBe(4);
    expect(parseRunArgs(['hi'], { KEEL_WORKERS: '2' }).workers).toBe(2);
    expect(parseRunArgs(['hi', '--workers', '0'], { KEEL_WORKERS: '2' }).workers).toBe(0);
    expect(parseRunArgs(['hi'], { KEEL_WORKERS: '0' }).workers).toBe(0);
    expect(parseRunArgs(['hi'], { KEEL_WORKERS: '' }).workers).toBe(4);
    expect(() => parseRunArgs(['hi'], { KEEL_WORKERS: 'many' })).toThrow(/KEEL_WORKERS must be an integer from 0 to 64 \(got "many"\)/);
    expect(() => parseRunArgs(['hi', '--workers', '1.5'], {})).toThrow(/--workers must be an integer/);
  });
});
