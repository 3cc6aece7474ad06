import type { WorkerStatus } from '../core/workers/poolStatus';
import type { TaskWorker } from '../shared/protocol/toWebview';

/** What the chat needs of the window's worker pool (the core's WorkerPool satisfies it). */
export interface PoolView {
  /** The worker bound to `taskId` (serving it now or last), if any. */
  workerOf(taskId: string): WorkerStatus | undefined;
  /** Called after every change of the pool; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** The worker the chat header shows for `taskId`: null without a pool, a task, or a live worker bound to it. */
function taskWorkerOf(pool: PoolView | null | undefined, taskId: string | undefined): TaskWorker | null {
  if (!pool || !taskId) return null;
  const w = pool.workerOf(taskId);
  return w ? { id: w.id, state: w.state, pid: w.pid } : null;
}

function sameTaskWorker(a: TaskWorker | null, b: TaskWorker | null): boolean {
  return a === b || (a !== null && b !== null && a.id === b.id && a.state === b.state && a.pid === b.pid);
}

/**
 * Follows the worker of the task the chat shows: `changed` is called with the task's id and its
 * worker whenever that worker changes (another worker, another state, gone), never twice with
 * the same value. `watch(pool)` once the runtime (and its pool) exists; `follow(taskId)` when the
 * chat shows another task (it does not call `changed`: the snapshot carries `current()`).
 */
export class TaskWorkerWatch {
  private pool: PoolView | null = null;
  private unsubscribe: (() => void) | undefined;
  private taskId: string | undefined;
  private last: TaskWorker | null = null;

  constructor(private readonly changed: (taskId: string, worker: TaskWorker | null) => void) {}

  watch(pool: PoolView | null): void {
    this.unsubscribe?.();
    this.pool = pool;
    this.unsubscribe = pool?.onChange(() => this.poolChanged());
    this.poolChanged();
  }

  follow(taskId: string | undefined): void {
    this.taskId = taskId;
    this.last = taskWorkerOf(this.pool, taskId);
  }

  /** The shown task's worker now (what a snapshot carries). */
  current(): TaskWorker | null {
    return this.last;
  }

  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.pool = null;
  }

  private poolChanged(): void {
    const now = taskWorkerOf(this.pool, this.taskId);
    if (sameTaskWorker(now, this.last)) return;
    this.last = now;
    if (this.taskId) this.changed(this.taskId, now);
  }
}
