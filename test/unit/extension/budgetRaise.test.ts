import { describe, expect, it } from 'vitest';
import { ChatController } from '../../../src/extension/chatController';
import { ViewConnection } from '../../../src/extension/viewConnection';
import { stateLook } from '../../../src/shared/words/task';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import { fakeHost, recordingPort } from './fakes';

/** A task paused at its budget: the header's words say so, and the person is offered to raise it, which continues the task. */
describe('a task paused at its budget in the chat', () => {
  it('reads "Budget reached" and offers a raise; the raised cap goes to the task', async () => {
    const h = fakeHost();
    const asked: { capUsd: number | null; spentUsd: number }[] = [];
    h.host.raiseBudget = async (b) => {
      asked.push(b);
      return 2;
    };
    const c = new ChatController(h.host);
    const conn = new ViewConnection('v1', 'sidebar', recordingPort().post, h.log);
    c.attach(conn);
    await c.handle(conn, conn.receive({ type: 'ready' })!);
    await c.handle(conn, conn.receive({ type: 'prompt', text: 'spend a lot' })!);
    const task = h.runtime.tasks[0]!;
    task.emit({ type: 'budget', taskId: task.id, capUsd: 0.4, spentUsd: 0.315 });
    task.emit({ type: 'task', taskId: task.id, state: 'pausedForBudget' });
    await new Promise((r) => setImmediate(r));
    expect(asked).toEqual([{ capUsd: 0.4, spentUsd: 0.315 }]);
    expect(task.budgets).toEqual([2]);
    expect(stateLook('pausedForBudget', taskStateTags('pausedForBudget')).label).toBe('Budget reached');
  });

  it('leaving the offer keeps the task paused', async () => {
    const h = fakeHost();
    h.host.raiseBudget = async () => null;
    const c = new ChatController(h.host);
    const conn = new ViewConnection('v1', 'sidebar', recordingPort().post, h.log);
    c.attach(conn);
    await c.handle(conn, conn.receive({ type: 'ready' })!);
    await c.handle(conn, conn.receive({ type: 'prompt', text: 'spend a lot' })!);
    const task = h.runtime.tasks[0]!;
    task.emit({ type: 'task', taskId: task.id, state: 'pausedForBudget' });
    await new Promise((r) => setImmediate(r));
    expect(task.budgets).toEqual([]);
  });
});
