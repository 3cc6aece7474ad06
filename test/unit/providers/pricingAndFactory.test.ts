import { describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../../src/core/providers/anthropic';
import { DEFAULT_ANTHROPIC_MODEL, isModelProvider } from '../../../src/core/providers/index';
import { loadProvider } from '../../../src/core/providers/load';
import { OpenAICompatibleProvider } from '../../../src/core/providers/openai';
import { costUsd, priceOf } from '../../../src/core/providers/pricing';

const million = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 };

describe('costUsd', () => {
  it('prices Claude families per million tokens, including cache reads and writes', () => {
    expect(costUsd('claude-sonnet-4-5-20250929', { ...million, cacheReadTokens: 0, cacheWriteTokens: 0 })).toBeCloseTo(18);
    expect(costUsd('claude-sonnet-4-5', million)).toBeCloseTo(3 + 15 + 0.3 + 3.75);
    expect(costUsd('claude-opus-4-1-20250805', { inputTokens: 1000, outputTokens: 1000, cacheReadTokens: 0, cacheWriteTokens: 0 })).toBeCloseTo(0.09);
    expect(priceOf('claude-opus-4-5')).toMatchObject({ input: 5, output: 25 });
    expect(priceOf('claude-haiku-4-5')).toMatchObject({ input: 1, output: 5 });
    expect(priceOf('claude-3-5-haiku-latest')).toMatchObject({ input: 0.8, output: 4 });
    expect(priceOf('claude-3-7-sonnet-20250219')).toMatchObject({ input: 3, output: 15 });
    expect(priceOf('us.anthropic.claude-3-haiku-20240307-v1:0')).toMatchObject({ input: 0.25 });
  });

  it('unknown models cost 0', () => {
    expect(costUsd('llama3.1', million)).toBe(0);
    expect(costUsd('demo', million)).toBe(0);
  });
});

describe('loadProvider: the one way a host or a worker builds a provider', () => {
  it('anthropic without a key is a no_api_key error that states the fact; how to set a key is the host’s advice', async () => {
    const result = await loadProvider({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(isModelProvider(result)).toBe(false);
    expect(result).toMatchObject({ code: 'no_api_key', retryable: false });
    if (!isModelProvider(result)) expect(result.message).toBe('No Anthropic API key is set.');
  });

  it('builds each provider from its config, and says what is wrong with one that cannot work', async () => {
    const a = await loadProvider({ provider: 'anthropic', model: '', apiKey: 'sk' });
    expect(a).toBeInstanceOf(AnthropicProvider);
    expect(isModelProvider(a) && a.label).toBe(DEFAULT_ANTHROPIC_MODEL);
    expect(await loadProvider({ provider: 'openai-compatible', model: 'llama3.1', baseUrl: 'http://localhost:11434/v1' })).toBeInstanceOf(OpenAICompatibleProvider);
    expect(await loadProvider({ provider: 'openai-compatible', model: '' })).toMatchObject({ code: 'invalid_input' });
    expect(await loadProvider({ provider: 'anthropic', model: 'x', apiKey: 'sk', baseUrl: 'ftp://example.invalid' })).toMatchObject({ code: 'invalid_input' });
    const demo = await loadProvider({ provider: 'demo', model: '' });
    expect(isModelProvider(demo) && [demo.id, demo.label]).toEqual(['demo', 'demo model']);
  });
});
