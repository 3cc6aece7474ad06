import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { TaskHandle } from '../../../src/core/runtime/types';
import { ListProvider, textTurn, toolTurn, type Step } from '../helpers/scriptedEvents';

/**
 * The call machine registers one continuation key per model call in the runtime's LockManager
 * (to drop duplicates). Those keys must not pile up for the life of the process: a task's keys go
 * when its run ends, when it is forgotten, and when the runtime is disposed.
 */
function setup(steps: Step[], delayMs = 0) {
  const provider = new ListProvider(steps, delayMs);
  const runtime = new TaskRuntime({ workspace: mkdtempSync(join(tmpdir(), 'keel-cont-')), providerFactory: () => provider, limits: { retryBaseMs: 1 } });
  return { runtime, provider };
}

const model = { provider: 'anthropic' as const, model: 'm' };

/** Resolves once the model's answer has begun (the call, and its key, exist: the budget's admission comes before). */
function streaming(task: TaskHandle): Promise<void> {
  return new Promise((resolve) => {
    const off = task.subscribe((e: TaskEvent) => {
      if (e.type === 'assistant_start') {
        off();
        resolve();
      }
    });
  });
}

describe('continuation keys are released', () => {
  it('when tasks (and their subtasks) finish', async () => {
    const { runtime } = setup([textTurn('one'), textTurn('two'), toolTurn('k1', 'Task', { description: 'd', prompt: 'p' }), textTurn('child answer'), textTurn('parent done')]);
    for (const prompt of ['a', 'b', 'delegate']) expect((await runtime.startTask({ prompt, provider: model }).settled()).status).toBe('completed');
    expect(runtime.locks.continuationScopes()).toBe(0);
    runtime.dispose();
  });

  it('when a running task is forgotten', async () => {
    const { runtime } = setup([textTurn('a slow answer that will never be finished')], 200);
    const task = runtime.startTask({ prompt: 'slow', provider: model });
    await streaming(task);
    expect(runtime.locks.continuationScopes()).toBe(1);
    runtime.forget(task.id);
    expect(runtime.locks.continuationScopes()).toBe(0);
    runtime.dispose();
  });

  it('when the runtime is disposed with tasks running', async () => {
    const { runtime } = setup([textTurn('a slow answer'), textTurn('another slow answer')], 200);
    const tasks = [runtime.startTask({ prompt: 'one', provider: model }), runtime.startTask({ prompt: 'two', provider: model })];
    await Promise.all(tasks.map(streaming));
    expect(runtime.locks.continuationScopes()).toBe(2);
    runtime.dispose();
    expect(runtime.locks.continuationScopes()).toBe(0);
  });
});
