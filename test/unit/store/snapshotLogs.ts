import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ConversationMessage } from '../../../src/shared/domain/messages';
import type { TaskStore } from '../../../src/core/store/taskStore';

/**
 * Event logs for the snapshot tests: what real tasks record — streamed text and thinking, tool
 * rounds with permissions (allowed and denied), tool output, results of realistic size, a Task
 * call (a sub-agent's answer comes back as its tool result), retries and errors, compactions
 * that replace the conversation, interruptions and resumes, runs that end, run phases and memory.
 */
export const T = 'snap-task';
const ids = fc.constantFrom('toolu_a', 'toolu_b', 'toolu_c');
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('x'.repeat(3000), 'line\n'.repeat(400)));
const user = (t: string): ConversationMessage => ({ role: 'user', content: [{ type: 'text', text: t }] });

export const taskEvent: fc.Arbitrary<TaskEvent> = fc.oneof(
  fc.constantFrom('initializing', 'running', 'waitingForSubtask', 'completed', 'awaitingUser', 'interrupted', 'reconstructing', 'aborted').map((state): TaskEvent => ({ type: 'task', taskId: T, state, title: `t-${state}` })),
  fc.constantFrom('checkingContext', 'streaming', 'executingTool', 'assembling', 'done').map((state): TaskEvent => ({ type: 'turn', taskId: T, state, turn: 1 })),
  // Some typed as a command (`typed`: what the person typed, `text`: what it sent).
  fc.tuple(text, fc.option(fc.constantFrom('/review a.ts', '/git:ship now'), { nil: undefined })).map(
    ([t, typed]): TaskEvent => ({ type: 'user_message', taskId: T, id: `u-${t.length}`, text: t, ...(typed !== undefined ? { typed } : {}) }),
  ),
  fc.constantFrom('requesting', 'responding', 'thinking', 'toolInput').map((mode): TaskEvent => ({ type: 'stream', taskId: T, mode: mode as 'requesting' })),
  fc.constantFrom('', 'claude-b').map((model): TaskEvent => ({ type: 'assistant_start', taskId: T, messageId: `m-${model}`, model })),
  text.map((delta): TaskEvent => ({ type: 'text', taskId: T, delta })),
  text.map((delta): TaskEvent => ({ type: 'thinking', taskId: T, delta })),
  fc.tuple(ids, fc.constantFrom('Read', 'Bash', 'Task')).map(([id, name]): TaskEvent => ({ type: 'tool_call', taskId: T, id, name, input: { id } })),
  fc.tuple(ids, text).map(([id, chunk]): TaskEvent => ({ type: 'tool_output', taskId: T, id, chunk })),
  fc.tuple(ids, fc.boolean()).map(([id, is_error]): TaskEvent => ({ type: 'tool_result', taskId: T, id, is_error, summary: 's' })),
  fc.tuple(ids, fc.constantFrom('allow', 'deny', 'ask')).map(([toolCallId, decision]): TaskEvent => ({ type: 'permission', taskId: T, requestId: `r-${toolCallId}`, toolCallId, tool: 'Read', decision: decision as 'allow', reason: 'rule' })),
  fc.nat(1000).map((n): TaskEvent => ({ type: 'usage', taskId: T, inputTokens: n, outputTokens: 1, cacheReadTokens: 2, cacheWriteTokens: 3, costUsd: 0.1, totalCostUsd: n / 10 })),
  fc.constant<TaskEvent>({ type: 'retry', taskId: T, attempt: 1, delayMs: 1000, code: 'overloaded', message: 'Overloaded.' }),
  fc.constant<TaskEvent>({ type: 'error', taskId: T, code: 'server_error', message: 'x', retryable: true }),
  fc.constantFrom('completed', 'aborted', 'failed').map((status): TaskEvent => ({ type: 'done', taskId: T, status: status as 'completed', stopReason: null })),
  text.map((t): TaskEvent => ({ type: 'message', taskId: T, message: user(t) })),
  fc.tuple(fc.subarray(['toolu_a', 'toolu_b', 'toolu_c'], { minLength: 1 }), text).map(
    ([calls, t]): TaskEvent => ({ type: 'message', taskId: T, message: { role: 'assistant', content: [{ type: 'text', text: t }, ...calls.map((id) => ({ type: 'tool_use' as const, id, name: 'Task', input: { prompt: 'look' } }))] } }),
  ),
  fc.tuple(ids, text).map(([id, t]): TaskEvent => ({ type: 'message', taskId: T, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: t }] } })),
  fc.tuple(text, fc.boolean()).map(([t, summary]): TaskEvent => ({ type: 'compacted', taskId: T, messages: [user('task'), user(`[Summary of the earlier conversation]\n${t}`)], summary })),
  // Run phases, instructions, memories and the gatekeeper fold into the transcript too.
  fc.tuple(fc.constantFrom('memorySearch', 'runnerRunning', 'completed', 'failed'), fc.nat(50)).map(([phase, ms]): TaskEvent => ({ type: 'phase', taskId: T, run: 1, phase: phase as 'completed', previous: 'initializing', ms })),
  fc.constant<TaskEvent>({ type: 'instructions', taskId: T, run: 1, files: ['CLAUDE.md'] }),
  fc.constant<TaskEvent>({ type: 'memory', taskId: T, run: 1, hits: [{ file: 'a.md', title: 'A', score: 2 }], tokens: 40 }),
  fc.constant<TaskEvent>({ type: 'gatekeeper', taskId: T, run: 1, decision: 'saved', rule: 'kept', reasons: ['new'], file: 'b.md', title: 'B' }),
);

/**
 * Whole fragments as the machines publish them, so a snapshot often falls inside one: an answer
 * streamed with thinking and a tool input, a tool round, an interruption and its resume.
 */
const fragment: fc.Arbitrary<TaskEvent[]> = fc.oneof(
  fc.tuple(text, text).map(([th, t]): TaskEvent[] => [
    { type: 'assistant_start', taskId: T, messageId: 'm-s', model: 'claude-b' },
    { type: 'stream', taskId: T, mode: 'thinking' },
    { type: 'thinking', taskId: T, delta: th },
    { type: 'stream', taskId: T, mode: 'responding' },
    { type: 'text', taskId: T, delta: t },
    { type: 'stream', taskId: T, mode: 'toolInput' },
  ]),
  fc.tuple(ids, text, fc.constantFrom('allow', 'deny')).map(([id, out, decision]): TaskEvent[] => [
    { type: 'message', taskId: T, message: { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } }] } },
    { type: 'tool_call', taskId: T, id, name: 'Bash', input: { command: 'ls' } },
    { type: 'permission', taskId: T, requestId: `r-${id}`, toolCallId: id, tool: 'Bash', decision: decision as 'allow' },
    { type: 'turn', taskId: T, state: 'executingTool', turn: 1 },
    { type: 'tool_output', taskId: T, id, chunk: out },
    { type: 'tool_result', taskId: T, id, is_error: decision === 'deny', summary: 'ran' },
  ]),
  fc.constant<TaskEvent[]>([
    { type: 'task', taskId: T, state: 'interrupted' },
    { type: 'task', taskId: T, state: 'reconstructing' },
    { type: 'task', taskId: T, state: 'running' },
  ]),
);

/** A log: single events and whole fragments, flattened. */
export const taskLog: fc.Arbitrary<TaskEvent[]> = fc
  .array(fc.oneof({ arbitrary: taskEvent.map((e) => [e]), weight: 3 }, { arbitrary: fragment, weight: 1 }), { minLength: 1, maxLength: 25 })
  .map((parts) => parts.flat());

/** Records `events` through the real recorder (deltas merged, durable states synced), then closes the task. */
export async function recordTask(store: TaskStore, events: TaskEvent[], id = T): Promise<void> {
  const rec = store.create({ id, title: 'snapshot test', model: 'claude-a', workspace: '/ws', owner: 'test' });
  for (const e of events) rec.record({ ...e, taskId: id });
  await rec.close();
}

/** Byte offsets of every line end after the header: where a snapshot may refer to. */
export function lineEnds(root: string, id = T): number[] {
  const buf = readFileSync(join(root, 'tasks', id, 'events.jsonl'));
  const ends: number[] = [];
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) ends.push(i + 1);
  return ends.slice(1);
}
