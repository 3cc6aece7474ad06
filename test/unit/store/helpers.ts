import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { TaskStore } from '../../../src/core/store/taskStore';

export function tempStore(): { root: string; store: TaskStore; logs: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'keel-store-'));
  const logs: string[] = [];
  const store = new TaskStore(root, { log: (level, m) => logs.push(`${level}: ${m}`) });
  return { root, store, logs };
}

/** A short but complete task: prompt, a Read tool round, an answer, done. */
export function completedTaskEvents(taskId: string): TaskEvent[] {
  return [
    { type: 'user_message', taskId, id: `${taskId}-u1`, text: 'read a.txt' },
    { type: 'message', taskId, message: { role: 'user', content: [{ type: 'text', text: 'read a.txt' }] } },
    { type: 'task', taskId, state: 'running', title: 'read a.txt' },
    { type: 'turn', taskId, state: 'streaming', turn: 0 },
    { type: 'assistant_start', taskId, messageId: 'm1', model: 'claude-x' },
    { type: 'usage', taskId, inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.01, totalCostUsd: 0.01 },
    { type: 'message', taskId, message: { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a.txt' } }] } },
    { type: 'tool_call', taskId, id: 't1', name: 'Read', input: { file_path: 'a.txt' } },
    { type: 'permission', taskId, requestId: 'r1', toolCallId: 't1', tool: 'Read', decision: 'allow', reason: 'read-only' },
    { type: 'turn', taskId, state: 'executingTool', turn: 1 },
    { type: 'tool_result', taskId, id: 't1', is_error: false, summary: '1 line' },
    { type: 'turn', taskId, state: 'assembling', turn: 1 },
    { type: 'message', taskId, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'hello' }] } },
    { type: 'assistant_start', taskId, messageId: 'm2', model: 'claude-x' },
    { type: 'text', taskId, delta: 'It says ' },
    { type: 'text', taskId, delta: 'hello.' },
    { type: 'usage', taskId, inputTokens: 120, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.02, totalCostUsd: 0.03 },
    { type: 'message', taskId, message: { role: 'assistant', content: [{ type: 'text', text: 'It says hello.' }] } },
    { type: 'turn', taskId, state: 'done', turn: 2 },
    { type: 'task', taskId, state: 'completed', title: 'read a.txt' },
    { type: 'done', taskId, status: 'completed', stopReason: 'end_turn' },
  ];
}
