import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { fakeWorker } from './fakeWorker';

/**
 * A task whose worker died (here the fake worker SIGKILLs itself on "crash") is interrupted in the
 * window that runs it; Resume there continues it from its log on a fresh worker — its dead handle
 * is let go of, never "resumed" as a no-op (what the VS Code chat's Resume did before).
 */
describe('TaskRuntime with workers: resuming a task whose worker died, in the same runtime', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('crash → interrupted (worker_lost, recorded); get/inspect see a stored task; resume runs it again, once, on a new worker', async () => {
    const storageDir = mkdtempSync(join(tmpdir(), 'keel-rwl-'));
    const workspace = mkdtempSync(join(tmpdir(), 'keel-rwl-ws-'));
    cleanup.push(() => rmSync(storageDir, { recursive: true, force: true }), () => rmSync(workspace, { recursive: true, force: true }));
    const runtime = new TaskRuntime({
      workspace,
      storageDir,
      ownerLabel: 'test',
      asker: { ask: async () => ({ decision: 'deny' }) },
      workers: { command: fakeWorker(), max: 1, strategy: 'lru' },
    });
    cleanup.push(async () => {
      runtime.dispose();
      await runtime.shutdownWorkers();
    });
    const provider = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5', apiKey: 'k', baseUrl: 'http://127.0.0.1:9' };

    const task = runtime.startTask({ prompt: 'crash', provider });
    const events: TaskEvent[] = [];
    task.subscribe((e) => events.push(e));
    const done = await task.settled();
    expect(done.status).toBe('interrupted');
    expect(events.find((e) => e.type === 'error')).toMatchObject({ code: 'worker_lost', retryable: true });
    expect(runtime.workerPool()!.status().stats.crashed).toBe(1);

    // The dead handle is let go of: the task is a stored, interrupted one now.
    expect(runtime.get(task.id)).toBeUndefined();
    const inspected = await runtime.inspect(task.id);
    expect(inspected.kind).toBe('stored');
    expect(inspected.kind === 'stored' && inspected.summary.status).toBe('interrupted');

    // Resume: a new live handle, rebuilt from the log, whose query runs on a fresh worker.
    const resumed = await runtime.resume(task.id, { provider });
    expect(resumed).not.toBe(task);
    const states: string[] = [];
    resumed.subscribe((e) => e.type === 'task' && states.push(e.state));
    const again = await resumed.settled();
    expect(again.status).toBe('completed');
    expect(states.slice(0, 3)).toEqual(['interrupted', 'reconstructing', 'initializing']);
    // The recorded worker_lost error stays; the resumed run starts from the resume note.
    const items = resumed.transcript().items;
    expect(items.map((i) => i.kind)).toEqual(['user', 'error', 'user']);
    expect(JSON.stringify(items[2])).toMatch(/interrupted .* and is now resumed/);
    expect(runtime.get(task.id)).toBe(resumed);
    expect(runtime.workerPool()!.status().stats.spawned).toBe(2);
  });
});
