import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { emptyTranscript, type TaskTranscript } from '../../../src/shared/domain/transcript';
import type { SubtaskHandle } from '../../../src/core/runtime/wiring';
import { end, start, textTurn, toolBlock, toolTurn } from '../helpers/scriptedEvents';
import { wiredTask } from '../helpers/wiredTask';
import { settled as quiet } from '../helpers/changes';

/**
 * A subtask's answer takes the short way back: the parent task's `subtask` actor starts (or finds)
 * the child, waits for it to settle and sends SUBTASK_DONE to its own task machine, which hands
 * the result to its turn. These drive that actor through a wired task with a child behind the
 * SubtaskHandle interface.
 */
const task = toolTurn('k1', 'Task', { description: 'count', prompt: 'count the files' });

function child(status: 'completed' | 'failed', text: string): SubtaskHandle & { cancelled: number; release(): void } {
  let release = () => undefined as void;
  const done = new Promise<TaskEvent & { type: 'done' }>((resolve) => {
    release = () => resolve({ type: 'done', taskId: 'c', status, stopReason: null });
  });
  const transcript: TaskTranscript = { ...emptyTranscript('c', 'c', 'm'), items: [{ kind: 'assistant', id: 'a', model: 'm', text, thinking: '', streaming: false }] };
  const handle = {
    cancelled: 0,
    release: () => release(),
    settled: () => done,
    transcript: () => transcript,
    cancel: () => {
      handle.cancelled++;
    },
  };
  return handle;
}

const lastResult = (requests: { messages: { content: unknown[] }[] }[]) => requests.at(-1)!.messages.at(-1)!.content[0];

describe('a subtask’s result reaches its parent’s turn through the parent’s own machine', () => {
  it('the child’s last answer is the Task call’s result, and the parent continues once', async () => {
    const c = child('completed', 'there are 3 files');
    const { actor, provider, settled, events } = wiredTask([task, textTurn('parent done')], { startSubtask: () => c });
    actor.start();
    actor.send({ type: 'START', text: 'delegate' });
    await new Promise<void>((resolve) => actor.subscribe((s) => s.matches({ running: { subtasks: 'waitingForSubtask' } }) && resolve()));
    expect(provider.requests).toHaveLength(1);
    c.release();
    await settled(1);
    expect(provider.requests).toHaveLength(2);
    expect(lastResult(provider.requests)).toMatchObject({ type: 'tool_result', tool_use_id: 'k1', content: 'there are 3 files' });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ id: 'k1', is_error: false, summary: 'subtask completed' });
    actor.stop();
  });

  it('a child that failed is an error result with its last words', async () => {
    const c = child('failed', 'could not count');
    c.release();
    const { actor, provider, settled } = wiredTask([task, textTurn('parent done')], { startSubtask: () => c });
    actor.start();
    actor.send({ type: 'START', text: 'delegate' });
    await settled(1);
    expect(lastResult(provider.requests)).toMatchObject({ tool_use_id: 'k1', is_error: true, content: 'The subtask ended failed: could not count' });
    actor.stop();
  });

  it('a child that cannot be started is an error result; the parent goes on', async () => {
    const { actor, provider, settled } = wiredTask([task, textTurn('parent done')], {
      startSubtask: () => {
        throw new Error('the store is full');
      },
    });
    actor.start();
    actor.send({ type: 'START', text: 'delegate' });
    await settled(1);
    expect(actor.getSnapshot().matches('completed')).toBe(true);
    expect(lastResult(provider.requests)).toMatchObject({ tool_use_id: 'k1', is_error: true, content: 'The subtask could not be started: the store is full' });
    actor.stop();
  });

  it('cancelling the parent while it waits cancels the child, and a late answer moves nothing', async () => {
    const c = child('completed', 'too late');
    const { actor, provider, settled } = wiredTask([task], { startSubtask: () => c });
    actor.start();
    actor.send({ type: 'START', text: 'delegate' });
    await new Promise<void>((resolve) => actor.subscribe((s) => s.matches({ running: { subtasks: 'waitingForSubtask' } }) && resolve()));
    actor.send({ type: 'CANCEL' });
    await settled(1);
    expect(actor.getSnapshot().matches('aborted')).toBe(true);
    expect(c.cancelled).toBe(1);
    c.release();
    await quiet();
    expect(actor.getSnapshot().matches('aborted')).toBe(true);
    expect(provider.requests).toHaveLength(1);
    actor.stop();
  });

  /** One answer with three Task calls (k1, k2, k3). */
  const threeTasks = [start(), ...toolBlock(0, 'k1', 'Task', { description: 'a', prompt: 'pa' }), ...toolBlock(1, 'k2', 'Task', { description: 'b', prompt: 'pb' }), ...toolBlock(2, 'k3', 'Task', { description: 'c', prompt: 'pc' }), ...end('tool_use')];

  it('three Task calls of one answer start three children at once; the parent resumes once, with the results in call order', async () => {
    const children = [child('completed', 'answer one'), child('failed', 'answer two'), child('completed', 'answer three')];
    const started: string[] = [];
    const { actor, provider, settled } = wiredTask([threeTasks, textTurn('parent done')], {
      startSubtask: (sub) => {
        started.push(sub.toolCallId);
        return children[started.length - 1]!;
      },
    });
    actor.start();
    actor.send({ type: 'START', text: 'delegate' });
    // Every child starts before any has answered.
    await new Promise<void>((resolve) => actor.subscribe(() => started.length === 3 && resolve()));
    expect(started).toEqual(['k1', 'k2', 'k3']);
    expect(actor.getSnapshot().matches({ running: { subtasks: 'waitingForSubtask' } })).toBe(true);
    // They answer in another order; the parent sends nothing until the last one has.
    children[2]!.release();
    children[0]!.release();
    await quiet();
    expect(provider.requests).toHaveLength(1);
    children[1]!.release();
    await settled(1);
    expect(actor.getSnapshot().matches('completed')).toBe(true);
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatchObject([
      { tool_use_id: 'k1', content: 'answer one' },
      { tool_use_id: 'k2', content: 'The subtask ended failed: answer two', is_error: true },
      { tool_use_id: 'k3', content: 'answer three' },
    ]);
    actor.stop();
  });

  it('cancelling the parent cancels every child still running; their late answers move nothing', async () => {
    const children = [child('completed', 'one'), child('completed', 'two'), child('completed', 'three')];
    let n = 0;
    const { actor, provider, settled } = wiredTask([threeTasks], { startSubtask: () => children[n++]! });
    actor.start();
    actor.send({ type: 'START', text: 'delegate' });
    await new Promise<void>((resolve) => actor.subscribe(() => n === 3 && resolve()));
    children[0]!.release();
    await quiet();
    actor.send({ type: 'CANCEL' });
    await settled(1);
    expect(actor.getSnapshot().matches('aborted')).toBe(true);
    // The one that had answered is not cancelled; the two still running are.
    expect(children.map((c) => c.cancelled)).toEqual([0, 1, 1]);
    children[1]!.release();
    children[2]!.release();
    await quiet();
    expect(actor.getSnapshot().matches('aborted')).toBe(true);
    expect(provider.requests).toHaveLength(1);
    actor.stop();
  });
});
