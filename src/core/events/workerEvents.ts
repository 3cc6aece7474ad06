import type { WorkerEmitted } from '../machines/worker/worker.machine';
import type { PoolStatus } from '../workers/poolStatus';
import type { EventBus } from './eventBus';
import type { BusEventInit } from './types';

/** What the bridge needs of a worker pool (src/core/workers/pool.ts implements it). */
export interface WorkerEventSource {
  /** Called with every event a worker machine announces, after the pool acted on it; returns the unsubscribe function. */
  onWorkerEvent(listener: (e: WorkerEmitted) => void): () => void;
  status(): PoolStatus;
}

export type WorkerBusEvent = Extract<BusEventInit, { kind: 'WorkerStateChanged' }>;

/** What the bridge remembers of a worker between its events (its pid and task outlive its row in the pool's status). */
export interface KnownWorker {
  pid: number | null;
  taskId?: string;
}

/**
 * The `WorkerStateChanged` one worker announcement stands for. `known`: what was known of the
 * worker before (its pid once ready, the task it was bound to), `row`: its row in the pool's
 * status now, if it still has one (a stopped worker has none). Pure.
 */
export function workerBusEvent(e: WorkerEmitted, known: KnownWorker | undefined, row: { pid: number | null; taskId: string | null } | undefined): WorkerBusEvent {
  const pid = e.type === 'worker:ready' ? e.pid : (row?.pid ?? known?.pid ?? null);
  const taskId = row?.taskId ?? known?.taskId;
  const base = { kind: 'WorkerStateChanged' as const, workerId: e.workerId, workerPid: pid, ...(taskId ? { taskId } : {}) };
  switch (e.type) {
    case 'worker:ready':
      return { ...base, state: 'ready' };
    case 'worker:busy':
      return { ...base, state: 'busy', queryId: e.queryId };
    case 'worker:idle':
      return { ...base, state: 'idle', queriesProcessed: e.queriesProcessed };
    case 'worker:crashed':
      return { ...base, state: 'crashed', reason: e.reason, ...(e.queryId ? { queryId: e.queryId } : {}) };
    case 'worker:stopped':
      return { ...base, state: 'stopped', reason: e.reason };
  }
}

/**
 * Publishes every worker announcement of `pool` on `bus`, in the order the pool acted on them,
 * with the worker's pid and task. Returns the function that stops it. Never throws into the pool.
 */
export function bridgeWorkerEvents(bus: EventBus, pool: WorkerEventSource, onError: (err: unknown) => void = () => undefined): () => void {
  const known = new Map<string, KnownWorker>();
  return pool.onWorkerEvent((e) => {
    try {
      const row = pool.status().workers.find((w) => w.id === e.workerId);
      const event = workerBusEvent(e, known.get(e.workerId), row);
      if (e.type === 'worker:stopped') known.delete(e.workerId);
      else known.set(e.workerId, { pid: event.workerPid, ...(event.taskId ? { taskId: event.taskId } : {}) });
      bus.publish(event);
    } catch (err) {
      onError(err);
    }
  });
}
