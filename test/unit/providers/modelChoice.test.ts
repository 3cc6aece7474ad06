import { describe, expect, it } from 'vitest';
import { normalizeModelId, resolveModel } from '../../../src/core/providers/modelChoice';
import { CLAUDE_FAMILIES, DEFAULT_MODELS } from '../../../src/shared/domain/models';

describe('which model a run uses', () => {
  it('the override beats the selection, which beats the provider default', () => {
    expect(resolveModel({})).toBe(DEFAULT_MODELS.anthropic);
    expect(resolveModel({ providerDefault: 'llama3.2' })).toBe('llama3.2');
    expect(resolveModel({ userModel: 'opus', providerDefault: 'llama3.2' })).toBe(CLAUDE_FAMILIES.opus);
    expect(resolveModel({ userModel: 'opus', envModel: ' Claude-Haiku-5-5 ' })).toBe('claude-haiku-5-5');
  });

  it('plan mode uses the plan model when one is set, even over the override; other modes never do', () => {
    const input = { envModel: 'haiku', userModel: 'sonnet', planModel: 'opus' };
    expect(resolveModel({ ...input, planMode: true })).toBe(CLAUDE_FAMILIES.opus);
    expect(resolveModel({ ...input, planMode: false })).toBe(CLAUDE_FAMILIES.haiku);
    expect(resolveModel({ userModel: 'sonnet', planModel: '  ', planMode: true })).toBe(CLAUDE_FAMILIES.sonnet);
  });

  it('an empty or blank choice counts as none; other providers keep their id case', () => {
    expect(resolveModel({ envModel: '', userModel: '  ', providerDefault: 'Qwen2.5-Coder:7B' })).toBe('Qwen2.5-Coder:7B');
    expect(resolveModel({ providerDefault: '' })).toBe(DEFAULT_MODELS.anthropic);
    expect(normalizeModelId('  ')).toBeNull();
    expect(normalizeModelId(' Sonnet ')).toBe(CLAUDE_FAMILIES.sonnet);
    expect(normalizeModelId('Claude-Opus-4-1')).toBe('claude-opus-4-1');
  });
});
