import { describe, expect, it } from 'vitest';
import { StatusBoard } from '../../../src/core/agents/board';
import type { ActivityEvent, ActivitySource } from '../../../src/core/events/activityFeed';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import { agentItems } from '../../../src/extension/agentsRows';
import type { ViewTaskEvent } from '../../../src/shared/domain/events';

/** The status board fed as the process's activity feed feeds it: a loop with two iterations. */
function feed() {
  const listeners: ((e: ActivityEvent) => void)[] = [];
  const source: ActivitySource = { subscribe: (l) => (listeners.push(l), () => undefined) };
  const emit = (e: ActivityEvent) => listeners.forEach((l) => l(e));
  const task = (event: ViewTaskEvent) => emit({ kind: 'task', at: 0, event, title: 'count-to-two-and-then-some-more: iteration' });
  return { source, emit, task };
}

const usage = (taskId: string, inputTokens: number, outputTokens: number, costUsd: number): ViewTaskEvent => ({
  type: 'usage',
  taskId,
  inputTokens,
  outputTokens,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd,
  totalCostUsd: costUsd,
});

describe('the status board: a loop and its iterations', () => {
  it('a loop counts its iterations’ tokens and cost; each iteration is named by its number under the loop', () => {
    const f = feed();
    const board = new StatusBoard(f.source, { now: () => 0 });
    const name = 'count-to-two-and-then-some-more';
    f.emit({ kind: 'loop', at: 0, event: { type: 'loop', name, state: 'started', iteration: 0 } });
    for (const [n, id] of [[1, 'it1'], [2, 'it2']] as const) {
      f.emit({ kind: 'loop', at: 0, event: { type: 'loop', name, state: 'iteration', iteration: n, taskId: id } });
      // The iteration's own task events carry its task title, which must not rename the row.
      for (const state of ['initializing', 'running', 'completed']) f.task({ type: 'task', taskId: id, state, title: `${name}: iteration ${n}`, tags: taskStateTags(state) });
      f.task(usage(id, 1000 * n, 200, 0.01 * n));
    }
    const rows = board.rows();
    const loop = rows.find((r) => r.kind === 'loop')!;
    expect(loop.tokens).toBe(1200 + 2200);
    expect(loop.costUsd).toBeCloseTo(0.03);
    const [item] = agentItems(rows, 0);
    expect(item!.label).toBe(`Loop ${name}`);
    expect(item!.description).toContain('3.4k tok');
    expect(item!.children.map((c) => c.label)).toEqual(['Iteration 1', 'Iteration 2']);
    expect(item!.children[1]!.description).toContain('2.2k tok');
    board.dispose();
  });
});
