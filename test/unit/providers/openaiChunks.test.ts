import { describe, expect, it } from 'vitest';
import { ChatChunkTranslator } from '../../../src/core/providers/openaiChunks';
import { toolInputs } from './helpers';

describe('ChatChunkTranslator (servers that bend the OpenAI format)', () => {
  it('accepts arguments sent as an object and usage on the finish chunk', () => {
    const t = new ChatChunkTranslator('llama');
    const events = [
      ...t.push({ id: 'c1', choices: [{ delta: { tool_calls: [{ index: 0, id: 'x1', function: { name: 'bash', arguments: { command: 'ls' } } }] } }] }),
      ...t.push({ choices: [{ delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 2 } }),
    ];
    expect(t.finished).toBe(true);
    const all = [...events, ...t.end()];
    expect(toolInputs(all)).toEqual([{ id: 'x1', name: 'bash', input: { command: 'ls' } }]);
    expect(all.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 5, output_tokens: 2 } });
  });

  it('is not finished without a finish_reason, and a call with no arguments gets {}', () => {
    const t = new ChatChunkTranslator('m');
    t.push({ choices: [{ delta: { tool_calls: [{ function: { name: 'list' } }] } }] });
    expect(t.finished).toBe(false);
    expect(toolInputs(t.end())).toMatchObject([{ name: 'list', input: {} }]);
  });

  it('content_filter is a refusal; interleaved reasoning and text open new blocks in order', () => {
    const t = new ChatChunkTranslator('m');
    const events = [
      ...t.push({ choices: [{ delta: { reasoning: 'a' } }] }),
      ...t.push({ choices: [{ delta: { content: 'b' } }] }),
      ...t.push({ choices: [{ delta: { content: 'c' }, finish_reason: 'content_filter' }] }),
      ...t.end(),
    ];
    expect(events.map((e) => e.type + ('index' in e ? `#${e.index}` : ''))).toEqual([
      'message_start',
      'content_block_start#0', 'content_block_delta#0',
      'content_block_stop#0', 'content_block_start#1', 'content_block_delta#1',
      'content_block_delta#1',
      'content_block_stop#1', 'message_delta', 'message_stop',
    ]);
    expect(events.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'refusal' } });
  });
});
