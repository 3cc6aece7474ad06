import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { recordingOf } from '../../../src/core/replay/recording';
import { RecordedModel } from '../../../src/core/replay/playback';
import type { ProviderEvent } from '../../../src/core/providers/types';
import { attachmentText, summaryOf } from '../../../src/shared/domain/attachments';

/**
 * What a replay reads out of a log whose run was stopped (docs/persistence.md, "Deterministic
 * replay"): where the comparison stops, where the person cancelled, the call that was cut off and
 * how it is played back, and a run that could not start.
 */
const T = 'task-1';
const start: TaskEvent[] = [
  { type: 'user_message', taskId: T, id: `${T}-u1`, text: 'go' },
  { type: 'message', taskId: T, message: { role: 'user', content: [{ type: 'text', text: 'go' }] } },
  { type: 'task', taskId: T, state: 'initializing', title: 'go' },
  { type: 'task', taskId: T, state: 'running', title: 'go' },
  { type: 'turn', taskId: T, state: 'streaming', turn: 0 },
  { type: 'stream', taskId: T, mode: 'requesting' },
  { type: 'assistant_start', taskId: T, messageId: 'msg_1', model: 'm' },
  { type: 'stream', taskId: T, mode: 'thinking' },
  { type: 'thinking', taskId: T, delta: 'hmm' },
  { type: 'stream', taskId: T, mode: 'responding' },
  { type: 'text', taskId: T, delta: 'The answ' },
];

async function played(model: RecordedModel, abortAfter: number): Promise<ProviderEvent[]> {
  const controller = new AbortController();
  const out: ProviderEvent[] = [];
  for await (const e of model.stream({ taskId: T, model: 'm', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }], tools: [], maxTokens: 10 }, controller.signal)) {
    out.push(e);
    if (out.length === abortAfter) setImmediate(() => controller.abort());
  }
  return out;
}

describe('recordingOf a stopped run', () => {
  it('an interruption: the comparison stops before what stopping recorded, and the cut-off answer plays back, then waits to be stopped', async () => {
    const events: TaskEvent[] = [
      ...start,
      { type: 'phase', taskId: T, run: 1, phase: 'failed', previous: 'runnerRunning', ms: 3, failure: 'runnerRunning: the task was stopped' },
      { type: 'error', taskId: T, code: 'worker_lost', message: 'The worker stopped.', retryable: true },
      { type: 'task', taskId: T, state: 'interrupted', title: 'go' },
      { type: 'done', taskId: T, status: 'interrupted', stopReason: null },
    ];
    const rec = recordingOf(events);
    expect(rec.interruptedAt).toBe(start.length);
    expect(rec.interruptedBecause).toBe('interrupted');
    // The lost worker's error is not a model failure to play back.
    const calls = [...rec.calls.values()].flat();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ kind: 'cut', started: { messageId: 'msg_1' } });
    const out = await played(new RecordedModel([rec]), 6);
    expect(out.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'provider_error']);
    expect(out.at(-1)).toMatchObject({ error: { code: 'cancelled' } });
  });

  it('a log that just ends mid-run (kill -9) is compared up to its end', () => {
    const rec = recordingOf(start);
    expect(rec.interruptedAt).toBe(start.length);
    expect(rec.interruptedBecause).toBe('log-ends');
    expect([...rec.calls.values()].flat()[0]).toMatchObject({ kind: 'cut' });
  });

  it('a cancel: its first effect is the turn loop ending, and the command that ran is cut off', () => {
    const events: TaskEvent[] = [
      ...start.slice(0, 5),
      { type: 'stream', taskId: T, mode: 'requesting' },
      { type: 'assistant_start', taskId: T, messageId: 'msg_1', model: 'm' },
      { type: 'message', taskId: T, message: { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'Bash', input: { command: 'sleep 9' } }] } },
      { type: 'tool_call', taskId: T, id: 'tu1', name: 'Bash', input: { command: 'sleep 9' } },
      { type: 'turn', taskId: T, state: 'executingTool', turn: 1 },
      { type: 'tool_output', taskId: T, id: 'tu1', chunk: 'z' },
      { type: 'turn', taskId: T, state: 'error', turn: 1 },
      { type: 'task', taskId: T, state: 'aborted', title: 'go' },
      { type: 'done', taskId: T, status: 'aborted', stopReason: null },
    ];
    const rec = recordingOf(events);
    expect(rec.interruptedAt).toBe(-1);
    expect(rec.cancels).toEqual([11]);
    expect(rec.tools.get('tu1')).toMatchObject({ cut: true, outputs: ['z'] });
  });

  it('a run that could not start (no API key): its failure without the host advice, and the advice apart', () => {
    const events: TaskEvent[] = [
      ...start.slice(0, 3),
      { type: 'phase', taskId: T, run: 1, phase: 'initializing', previous: 'idle', ms: 0 },
      { type: 'phase', taskId: T, run: 1, phase: 'failed', previous: 'initializing', ms: 1, failure: 'initializing: No Anthropic API key is set.' },
      { type: 'task', taskId: T, state: 'awaitingUser', title: 'go' },
      { type: 'error', taskId: T, code: 'no_api_key', message: 'No Anthropic API key is set. Set ANTHROPIC_API_KEY=… in the environment.', retryable: false },
      { type: 'done', taskId: T, status: 'failed', stopReason: null },
    ];
    const rec = recordingOf(events);
    expect(rec.interruptedAt).toBe(-1);
    expect(rec.runStarts).toEqual([{ code: 'no_api_key', message: 'No Anthropic API key is set.', retryable: false }]);
    expect(rec.advice.get('no_api_key')).toBe('Set ANTHROPIC_API_KEY=… in the environment.');
  });
});

describe('recordingOf a message with images and mentions', () => {
  it('takes the images from the conversation record (they come first), then each mention after the text', () => {
    const a = { kind: 'file' as const, label: 'src/a.ts', content: 'export const a = 1;' };
    const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'iVBORw0KGgo=' } };
    const info = { name: 'shot.png', mediaType: 'image/png', bytes: 8 };
    const events: TaskEvent[] = [
      { type: 'user_message', taskId: T, id: `${T}-u1`, text: 'look', images: [info], attachments: [summaryOf(a)] },
      { type: 'message', taskId: T, message: { role: 'user', content: [image, { type: 'text', text: 'look' }, { type: 'text', text: attachmentText(a) }] } },
    ];
    const [prompt] = recordingOf(events).prompts;
    expect(prompt!.images).toEqual([{ block: image, info }]);
    expect(prompt!.attachments).toEqual([a]);
  });
});
