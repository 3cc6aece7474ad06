import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { exportMarkdown } from '../../../src/core/store/exportTask';
import { TaskStore } from '../../../src/core/store/taskStore';
import { TranscriptBuilder } from '../../../src/core/store/transcriptBuilder';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../../../src/shared/domain/transcript';
import { ListProvider, end, midStreamError, start, textBlock, textTurn, toolBlock } from '../helpers/scriptedEvents';

/**
 * How an answer cut off before its end is marked, live (applyTaskEvent), rebuilt from the log
 * (TranscriptBuilder) and reopened from the store: an attempt given up for a retry is `retried`
 * (its retry follows; nothing to resume), never `interrupted` (the run ended with it unfinished);
 * and Keel's wait on a quiet answer is a passing state of the transcript, never an item.
 */
const T = 't1';
const fold = (events: TaskEvent[]): TaskTranscript => events.reduce(applyTaskEvent, emptyTranscript(T, 'title', 'm'));
function build(events: TaskEvent[]): TaskTranscript {
  const b = new TranscriptBuilder(T, 'title', 'm');
  for (const e of events) b.apply(e);
  return b.build();
}

const STREAMING: TaskEvent[] = [
  { type: 'user_message', taskId: T, id: 'u1', text: 'q' },
  { type: 'assistant_start', taskId: T, messageId: 'a1', model: 'm' },
  { type: 'text', taskId: T, delta: 'The first words' },
];
const RETRY: TaskEvent = { type: 'retry', taskId: T, attempt: 1, delayMs: 1000, code: 'stream_stalled', message: 'Anthropic sent no part of the answer for 2 s; the answer was abandoned.' };
const WAITING: TaskEvent = { type: 'waiting', taskId: T, quietMs: 500, stallAfterMs: 2000 };

describe('an answer given up for a retry', () => {
  it('is marked retried, not interrupted, live and rebuilt from the log alike', () => {
    const events: TaskEvent[] = [
      ...STREAMING,
      RETRY,
      { type: 'assistant_start', taskId: T, messageId: 'a2', model: 'm' },
      { type: 'text', taskId: T, delta: 'Answered on the retry.' },
      { type: 'done', taskId: T, status: 'completed', stopReason: 'end_turn' },
    ];
    for (const t of [fold(events), build(events)]) {
      const [first, second] = t.items.filter((i) => i.kind === 'assistant');
      expect(first).toMatchObject({ text: 'The first words', streaming: false, retried: true });
      expect(first).not.toHaveProperty('interrupted');
      expect(second).toMatchObject({ text: 'Answered on the retry.', streaming: false });
      expect(second).not.toHaveProperty('retried');
    }
    expect(build(events)).toEqual(fold(events));
  });

  it('an answer an error ended stays interrupted; one the log ends in is interrupted when rebuilt', () => {
    const failed = [...STREAMING, { type: 'error', taskId: T, code: 'auth_failed', message: 'Bad key.', retryable: false } as TaskEvent];
    for (const t of [fold(failed), build(failed)]) {
      expect(t.items[1]).toMatchObject({ kind: 'assistant', interrupted: true });
      expect(t.items[1]).not.toHaveProperty('retried');
    }
    const b = new TranscriptBuilder(T, 'title', 'm');
    for (const e of STREAMING) b.apply(e);
    b.markInterrupted();
    expect(b.build().items[1]).toMatchObject({ interrupted: true });
  });

  it('a real run that fails mid-answer and is retried: the attempt reads retried, live, reopened from the store and exported', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-retried-'));
    const storageDir = mkdtempSync(join(tmpdir(), 'keel-retried-store-'));
    const runtime = new TaskRuntime({ workspace, storageDir, providerFactory: () => new ListProvider([midStreamError(), textTurn('Recovered answer.')], 0), limits: { retryBaseMs: 1 } });
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    expect((await task.settled()).status).toBe('completed');
    const live = task.transcript().items.filter((i) => i.kind === 'assistant');
    expect(live[0]).toMatchObject({ retried: true, streaming: false });
    expect(live[0]).not.toHaveProperty('interrupted');
    runtime.dispose();
    const stored = await new TaskStore(storageDir).load(task.id);
    expect(stored.replay.transcript.items).toEqual(task.transcript().items);
    const md = exportMarkdown(stored);
    expect(md).toContain('— abandoned: retried below');
    expect(md).not.toContain('interrupted');
  });
});

describe('waiting on a quiet answer', () => {
  const cases: [string, TaskEvent][] = [
    ['the next part of the answer', { type: 'text', taskId: T, delta: ' and more' }],
    ['a part with no view event of its own (a tool input)', { type: 'waiting_ended', taskId: T }],
    ['a retry', RETRY],
    ['an error', { type: 'error', taskId: T, code: 'overloaded', message: 'x', retryable: true }],
    ['the run ending', { type: 'done', taskId: T, status: 'completed', stopReason: 'end_turn' }],
    ['a cancel', { type: 'done', taskId: T, status: 'aborted', stopReason: null }],
    ['the task leaving its running states', { type: 'task', taskId: T, state: 'interrupted', tags: taskStateTags('interrupted') }],
  ];

  it('is set by `waiting` and kept through events that are not about the answer, with no item added', () => {
    const waiting = fold([...STREAMING, WAITING]);
    expect(waiting.waiting).toEqual({ quietMs: 500, stallAfterMs: 2000 });
    expect(waiting.items).toEqual(fold(STREAMING).items);
    const later = fold([...STREAMING, WAITING, { type: 'budget', taskId: T, capUsd: null, spentUsd: 0.1 }, { type: 'task', taskId: T, state: 'running', tags: taskStateTags('running') }]);
    expect(later.waiting).toEqual({ quietMs: 500, stallAfterMs: 2000 });
  });

  it.each(cases)('is cleared by %s, live and rebuilt from the log alike', (_, e) => {
    const events = [...STREAMING, WAITING, e];
    expect(fold(events)).not.toHaveProperty('waiting');
    expect(build(events)).not.toHaveProperty('waiting');
    expect(build(events)).toEqual(fold(events));
  });

  it('in a real run, ends as soon as any part of the answer comes, a tool’s input included (which has no view event until it is whole)', async () => {
    const quiet = { type: 'waiting' as const, quietMs: 500, stallAfterMs: 2000 };
    const tool = toolBlock(1, 'r1', 'Read', { file_path: 'notes.md' });
    // Quiet in the middle of a tool's input, after its first piece; then the rest of it.
    const turn = [start(), ...textBlock(0, 'Looking.'), ...tool.slice(0, 2), quiet, ...tool.slice(2), ...end('tool_use')];
    const workspace = mkdtempSync(join(tmpdir(), 'keel-waiting-'));
    const runtime = new TaskRuntime({ workspace, providerFactory: () => new ListProvider([turn, textTurn('Read it.')], 0), limits: { retryBaseMs: 1 } });
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    const seen: { type: string; waiting: boolean }[] = [];
    task.subscribe((e) => {
      if (e.type === 'waiting' || e.type === 'waiting_ended' || e.type === 'tool_call') seen.push({ type: e.type, waiting: task.transcript().waiting !== undefined });
    });
    expect((await task.settled()).status).toBe('completed');
    runtime.dispose();
    expect(seen).toEqual([
      { type: 'waiting', waiting: true },
      { type: 'waiting_ended', waiting: false },
      { type: 'tool_call', waiting: false },
    ]);
    expect(task.transcript()).not.toHaveProperty('waiting');
  });

  it('a log that ends while waiting is rebuilt without it (the stored task is not waiting)', () => {
    const b = new TranscriptBuilder(T, 'title', 'm');
    for (const e of [...STREAMING, WAITING]) b.apply(e);
    expect(b.build().waiting).toEqual({ quietMs: 500, stallAfterMs: 2000 });
    b.markInterrupted();
    expect(b.build()).not.toHaveProperty('waiting');
  });
});
