import { describe, expect, it } from 'vitest';
import { createDemoProvider } from '../../../src/core/providers/demo';
import { ScriptedProvider } from '../../../src/core/providers/scripted';
import { collect, errorOf, request, stopReasonOf, textOf, toolInputs } from './helpers';

describe('ScriptedProvider', () => {
  it('plays queued turns in order through the provider grammar, then the fallback', async () => {
    const p = new ScriptedProvider([
      { blocks: [{ type: 'thinking', thinking: 'hmm' }, { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } }], chunkSize: 2 },
      { blocks: [{ type: 'text', text: 'done' }], usage: { input_tokens: 3, output_tokens: 4 } },
    ]);
    const first = await collect(p, request());
    expect(toolInputs(first)).toEqual([{ id: 't1', name: 'read', input: { path: 'a' } }]);
    expect(stopReasonOf(first)).toBe('tool_use');
    expect(first.some((e) => e.type === 'content_block_delta' && e.delta.type === 'signature_delta')).toBe(true);
    const second = await collect(p, request());
    expect(textOf(second)).toBe('done');
    expect(second.find((e) => e.type === 'message_delta')).toMatchObject({ usage: { input_tokens: 3, output_tokens: 4 } });
    expect(textOf(await collect(p, request()))).toContain('no scripted turn');
    expect(p.requests).toHaveLength(3);
  });

  it('ends with the scripted error after the given number of events', async () => {
    const error = { code: 'overloaded' as const, message: 'busy', phase: 'mid-stream' as const, retryable: true };
    const p = new ScriptedProvider([{ blocks: [{ type: 'text', text: 'abcdefgh' }], chunkSize: 2, error: { afterEvents: 4, error } }]);
    const events = await collect(p, request());
    expect(events.map((e) => e.type)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'provider_error']);
    expect(errorOf(events)).toEqual(error);
  });

  it('honours abort between delayed events with cancelled', async () => {
    const p = new ScriptedProvider([{ blocks: [{ type: 'text', text: 'a long answer that keeps going' }], chunkSize: 1, delayMs: 10 }]);
    const controller = new AbortController();
    const events = await collect(p, request(), controller.signal, (e) => {
      if (e.type === 'content_block_delta') controller.abort();
    });
    expect(errorOf(events)).toMatchObject({ code: 'cancelled' });
    expect(textOf(events)).toBe('a');
  });
});

describe('demo provider', () => {
  it('is labelled "demo model" and starts its tour in small chunks (the tour itself: demoTour.test.ts)', async () => {
    const p = createDemoProvider({ delayMs: 0 });
    expect(p.id).toBe('demo');
    expect(p.label).toBe('demo model');
    const events = await collect(p, request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Refactor utils.ts please' }] }] }));
    expect(textOf(events)).toContain('**demo model**');
    expect(toolInputs(events)).toMatchObject([{ name: 'Read', input: { file_path: 'src/greet.ts' } }]);
    expect(events.filter((e) => e.type === 'content_block_delta').length).toBeGreaterThan(20);
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('streams with a visible delay by default, and stops when aborted', async () => {
    const p = createDemoProvider();
    const controller = new AbortController();
    let deltas = 0;
    const events = await collect(p, request(), controller.signal, (e) => {
      if (e.type === 'content_block_delta' && ++deltas === 3) controller.abort();
    });
    expect(errorOf(events)).toMatchObject({ code: 'cancelled' });
    expect(deltas).toBe(3);
  });
});
