import type { TaskEvent } from '../../../src/shared/domain/events';
import { type TaskTranscript, emptyTranscript } from '../../../src/shared/domain/transcript';
import type { ChatConfig } from '../../../src/shared/protocol/toWebview';

/** Shared sample data for protocol tests. */
export const CONFIG: ChatConfig = { provider: 'demo', providerLabel: 'Demo', model: 'demo model', mode: 'default' };

export function transcript(taskId = 't1'): TaskTranscript {
  return emptyTranscript(taskId, 'Fix the bug', 'demo model');
}

/** One valid event of every TaskEvent type. */
export const ALL_EVENTS: TaskEvent[] = [
  { type: 'task', taskId: 't1', state: 'running', title: 'Fix the bug' },
  { type: 'task', taskId: 't1', state: 'running' },
  { type: 'turn', taskId: 't1', state: 'streaming', turn: 1 },
  { type: 'user_message', taskId: 't1', id: 'u1', text: 'hello' },
  { type: 'stream', taskId: 't1', mode: 'responding' },
  { type: 'assistant_start', taskId: 't1', messageId: 'm1', model: 'demo model' },
  { type: 'text', taskId: 't1', delta: 'Hi' },
  { type: 'thinking', taskId: 't1', delta: 'hmm' },
  { type: 'tool_call', taskId: 't1', id: 'c1', name: 'Bash', input: { command: 'ls', nested: { a: [1] } } },
  { type: 'tool_output', taskId: 't1', id: 'c1', chunk: 'a.txt\n' },
  { type: 'tool_result', taskId: 't1', id: 'c1', is_error: false, summary: 'exit 0' },
  { type: 'todos', taskId: 't1', todos: [{ content: 'Run the tests', status: 'in_progress', activeForm: 'Running the tests' }, { content: 'Fix', status: 'pending' }] },
  { type: 'budget', taskId: 't1', capUsd: 1, spentUsd: 0.25 },
  { type: 'user_message', taskId: 't1', id: 'u2', text: 'look', images: [{ name: 'shot.png', mediaType: 'image/png', bytes: 1200 }] },
  // Typed as a command: views show `typed`, the model read `text`.
  { type: 'user_message', taskId: 't1', id: 'u3', text: 'Review a.ts carefully.', typed: '/review a.ts' },
  { type: 'queued', taskId: 't1', message: { id: 'q1', text: 'Review b.ts carefully.', typed: '/review b.ts' } },
  { type: 'permission', taskId: 't1', requestId: 'p1', toolCallId: 'c1', tool: 'Bash', decision: 'allow', reason: 'rule' },
  { type: 'usage', taskId: 't1', inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.001, totalCostUsd: 0.002 },
  { type: 'retry', taskId: 't1', attempt: 1, delayMs: 500, code: 'overloaded', message: 'Anthropic is overloaded (529).' },
  { type: 'waiting', taskId: 't1', quietMs: 7500, stallAfterMs: 30000 },
  { type: 'waiting_ended', taskId: 't1' },
  { type: 'error', taskId: 't1', code: 'no_api_key', message: 'No API key', retryable: false },
  { type: 'done', taskId: 't1', status: 'completed', stopReason: 'end_turn' },
  { type: 'done', taskId: 't1', status: 'aborted', stopReason: null },
];
