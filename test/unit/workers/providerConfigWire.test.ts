import { describe, expect, it } from 'vitest';
import { providerConfigSchema, turnLimitsSchema } from '../../../src/core/workers/domainSchemas';
import { DEFAULT_LIMITS } from '../../../src/core/runtime/limits';

/**
 * What the host sends a worker with a query arrives whole: zod drops a key its schema does not
 * name, so a field the schema lacked reached the worker as unset and the worker's provider ran
 * with its default (a person's raised response timeout was lost on the default path, workers).
 */
describe('the provider config and limits on the wire to a worker', () => {
  it('keep the waits the person set', () => {
    const config = { provider: 'openai-compatible' as const, model: 'qwen3', baseUrl: 'http://127.0.0.1:11434/v1', stallTimeoutMs: 2000, headerTimeoutMs: 600_000 };
    expect(providerConfigSchema.parse(config)).toEqual(config);
  });

  it('refuse a wait that is not a positive number', () => {
    expect(providerConfigSchema.safeParse({ provider: 'anthropic', model: 'm', headerTimeoutMs: 0 }).success).toBe(false);
    expect(providerConfigSchema.safeParse({ provider: 'anthropic', model: 'm', stallTimeoutMs: -1 }).success).toBe(false);
  });

  it("keep the cap on a retry's wait", () => {
    const limits = { ...DEFAULT_LIMITS, maxRetryDelayMs: 300 };
    expect(turnLimitsSchema.parse(limits)).toEqual(limits);
  });
});
