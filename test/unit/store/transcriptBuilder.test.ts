import fc from 'fast-check';
import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { applyTaskEvent, emptyTranscript, type TranscriptItem } from '../../../src/shared/domain/transcript';
import { TranscriptBuilder } from '../../../src/core/store/transcriptBuilder';

const T = 'task-1';
const ids = fc.constantFrom('a', 'b', 'c');
const event: fc.Arbitrary<TaskEvent> = fc.oneof(
  fc.constantFrom('running', 'completed', 'awaitingUser').map((state): TaskEvent => ({ type: 'task', taskId: T, state, title: `t-${state}` })),
  fc.nat(5).map((turn): TaskEvent => ({ type: 'turn', taskId: T, state: 'streaming', turn })),
  fc.string().map((text): TaskEvent => ({ type: 'user_message', taskId: T, id: `u-${text.length}`, text })),
  fc.constantFrom('requesting', 'responding', 'thinking').map((mode): TaskEvent => ({ type: 'stream', taskId: T, mode: mode as 'requesting' })),
  fc.constantFrom('', 'model-b').map((model): TaskEvent => ({ type: 'assistant_start', taskId: T, messageId: `m-${model}`, model })),
  fc.string().map((delta): TaskEvent => ({ type: 'text', taskId: T, delta })),
  fc.string().map((delta): TaskEvent => ({ type: 'thinking', taskId: T, delta })),
  ids.map((id): TaskEvent => ({ type: 'tool_call', taskId: T, id, name: 'Read', input: { id } })),
  fc.tuple(ids, fc.string()).map(([id, chunk]): TaskEvent => ({ type: 'tool_output', taskId: T, id, chunk })),
  fc.tuple(ids, fc.boolean()).map(([id, is_error]): TaskEvent => ({ type: 'tool_result', taskId: T, id, is_error, summary: 's' })),
  fc.tuple(ids, fc.constantFrom('allow', 'deny', 'ask'), fc.option(fc.string(), { nil: undefined })).map(
    ([toolCallId, decision, reason]): TaskEvent => ({ type: 'permission', taskId: T, requestId: 'r', toolCallId, tool: 'Read', decision: decision as 'allow', ...(reason ? { reason } : {}) }),
  ),
  fc.nat(100).map((n): TaskEvent => ({ type: 'usage', taskId: T, inputTokens: n, outputTokens: 1, cacheReadTokens: 2, cacheWriteTokens: 3, costUsd: 0.1, totalCostUsd: n / 10 })),
  fc.constant<TaskEvent>({ type: 'retry', taskId: T, attempt: 1, delayMs: 1, code: 'overloaded', message: 'Overloaded.' }),
  fc.nat(3000).map((quietMs): TaskEvent => ({ type: 'waiting', taskId: T, quietMs, stallAfterMs: 4 * quietMs })),
  fc.constant<TaskEvent>({ type: 'waiting_ended', taskId: T }),
  fc.constant<TaskEvent>({ type: 'error', taskId: T, code: 'overloaded', message: 'x', retryable: true }),
  fc.constant<TaskEvent>({ type: 'done', taskId: T, status: 'completed', stopReason: 'end_turn' }),
  fc.constant<TaskEvent>({ type: 'done', taskId: T, status: 'aborted', stopReason: null }),
  fc.constant<TaskEvent>({ type: 'message', taskId: T, message: { role: 'user', content: [{ type: 'text', text: 'x' }] } }),
  fc.tuple(ids, fc.boolean()).map(([toolCallId, kept]): TaskEvent => ({ type: 'checkpoint', taskId: T, toolCallId, files: [{ path: 'f', kept }], storedBytes: 10 })),
  fc.tuple(fc.nat(3), fc.boolean(), fc.boolean()).map(
    ([n, withItems, streaming]): TaskEvent => ({
      type: 'rewind',
      taskId: T,
      id: `rw-${n}`,
      action: 'rewind',
      step: n + 1,
      stepId: 'a',
      scope: withItems ? 'both' : 'files',
      label: 'Rewound',
      files: [],
      ...(withItems
        ? {
            items: (
              [
                { kind: 'user', id: 'u-0', text: 'x' },
                { kind: 'assistant', id: 'm-x', model: 'm', text: 'said', thinking: '', streaming },
                { kind: 'tool', id: 'a', name: 'Read', input: {}, output: 'kept' },
              ] satisfies TranscriptItem[]
            ).slice(0, n + 1),
          }
        : {}),
    }),
  ),
  fc.tuple(ids, fc.string()).map(([id, text]): TaskEvent => ({ type: 'queued', taskId: T, message: { id, text, attachments: [{ kind: 'git', label: 'git', note: 'cut' }] } })),
  fc.tuple(fc.subarray(['a', 'b', 'c']), fc.constantFrom('sent', 'withdrawn', 'returned')).map(([ids, outcome]): TaskEvent => ({ type: 'unqueued', taskId: T, ids, outcome: outcome as 'sent' })),
  fc.string().map((text): TaskEvent => ({ type: 'user_message', taskId: T, id: 'u-a', text, attachments: [{ kind: 'file', label: 'a.ts', failed: true, note: 'not found' }] })),
);

describe('TranscriptBuilder', () => {
  it('gives exactly what folding through applyTaskEvent gives, for any event sequence', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), (events) => {
        const b = new TranscriptBuilder(T, 'title', 'model-a');
        let t = emptyTranscript(T, 'title', 'model-a');
        for (const e of events) {
          b.apply(e);
          t = applyTaskEvent(t, e);
        }
        expect(b.build()).toEqual(t);
      }),
      { numRuns: 400 },
    );
  });

  it('restored from its state (as a snapshot keeps it), folds the rest exactly as the builder that folded everything', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), fc.nat(), (events, cut) => {
        const at = events.length === 0 ? 0 : cut % (events.length + 1);
        const whole = new TranscriptBuilder(T, 'title', 'model-a');
        const first = new TranscriptBuilder(T, 'title', 'model-a');
        events.forEach((e, i) => {
          whole.apply(e);
          if (i < at) first.apply(e);
        });
        const restored = TranscriptBuilder.fromState(deserialize(serialize(first.exportState())) as ReturnType<TranscriptBuilder['exportState']>);
        for (const e of events.slice(at)) restored.apply(e);
        expect(restored.build()).toEqual(whole.build());
      }),
      { numRuns: 400 },
    );
  });

  it('restored from its state, finds a tool call however far back it is, without a stored index', () => {
    // 150 tool calls: the first ones are far behind the newest items a restored builder looks through first.
    const calls: TaskEvent[] = Array.from({ length: 150 }, (_, i) => ({ type: 'tool_call', taskId: T, id: `call-${i}`, name: 'Read', input: { i } }));
    const later: TaskEvent[] = [
      { type: 'tool_result', taskId: T, id: 'call-149', is_error: false, summary: 'newest' },
      { type: 'tool_output', taskId: T, id: 'call-3', chunk: 'late output of an old call' },
      { type: 'permission', taskId: T, requestId: 'r', toolCallId: 'call-0', tool: 'Read', decision: 'deny' },
      { type: 'tool_result', taskId: T, id: 'no-such-call', is_error: true, summary: 'ignored' },
      { type: 'tool_call', taskId: T, id: 'call-150', name: 'Read', input: {} },
      { type: 'tool_result', taskId: T, id: 'call-150', is_error: false, summary: 'after the index was built' },
    ];
    const whole = new TranscriptBuilder(T, 'title', 'm');
    const first = new TranscriptBuilder(T, 'title', 'm');
    for (const e of calls) {
      whole.apply(e);
      first.apply(e);
    }
    const state = first.exportState();
    expect(Object.keys(state).sort()).toEqual(['header', 'items', 'lastAssistant']);
    const restored = TranscriptBuilder.fromState(deserialize(serialize(state)) as typeof state);
    for (const e of later) {
      whole.apply(e);
      restored.apply(e);
    }
    const items = restored.build().items;
    expect(items).toEqual(whole.build().items);
    expect(items[3]).toMatchObject({ id: 'call-3', output: 'late output of an old call' });
    expect(items[0]).toMatchObject({ id: 'call-0', permission: { decision: 'deny' } });
    expect(items[150]).toMatchObject({ id: 'call-150', result: { summary: 'after the index was built' } });
  });

  it('marks an answer cut off by the end of the log as interrupted', () => {
    const b = new TranscriptBuilder(T, 'title', 'm');
    b.apply({ type: 'assistant_start', taskId: T, messageId: 'x', model: 'm' });
    b.apply({ type: 'text', taskId: T, delta: 'half an ans' });
    expect(b.isStreaming()).toBe(true);
    b.markInterrupted();
    expect(b.build().items[0]).toMatchObject({ kind: 'assistant', text: 'half an ans', streaming: false, interrupted: true });
  });
});
