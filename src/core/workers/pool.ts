import { randomUUID } from 'node:crypto';
import { createActor, fromCallback, toPromise, type Actor, type EventObject, type InspectionEvent } from 'xstate';
import { poolMachine, type PoolEvent } from '../machines/pool/pool.machine';
import type { WorkerEmitted } from '../machines/worker/worker.machine';
import type { EvictionStrategy } from './eviction';
import type { PoolStatus, WorkerStatus } from './poolStatus';
import { DEFAULT_MAX_LINE_BYTES } from './protocol';
import { createTurnQueue } from './turnQueue';
import type { WorkerCommand } from './spawnWorker';
import { WorkerHandle, type WorkerTimeouts } from './workerHandle';
import { WORKER_NICENESS } from './workerPriority';
import { errorMessage } from '../../shared/domain/errors';

/**
 * A pool of worker processes that run queries (one run of a task's turn loop each) for the host
 * that owns the tasks. The pool machine decides (which request gets which worker, when to start,
 * take over or reap one: its guards, machines/pool/poolDecisions.ts); this class performs its
 * decisions and keeps the handles.
 *
 * Contract: `acquire` resolves with a lease on a ready worker bound to the task — waiting for one
 * as long as it takes — or rejects with the reason none could be had (its workers keep dying
 * before they are ready, the pool is shutting down, the signal aborted). A leased worker runs one query at a time. `shutdown` stops every
 * worker (gracefully, killing the process group of one that does not stop in time) and resolves
 * once all are gone. Listeners of `onChange` are called after every change of the pool or of a
 * worker (never re-entrantly from within `acquire`).
 */
export interface WorkerPoolOptions {
  command: WorkerCommand;
  /** Workers alive at most (default 4). */
  max?: number;
  strategy?: EvictionStrategy;
  /** Ready within (default 30 s). */
  readyTimeoutMs?: number;
  /** Graceful stop within, then SIGKILL of the process group (default 10 s). */
  shutdownGraceMs?: number;
  /** An idle worker is stopped after (default 15 min). */
  idleTimeoutMs?: number;
  /** Health check every (default 30 s), answered within (default 5 s). */
  healthIntervalMs?: number;
  healthAnswerMs?: number;
  /** The answer limit while a worker runs a query (default 60 s; workerHandle.ts, healthClock). */
  busyHealthAnswerMs?: number;
  /** Fresh workers tried for one query after one died before it was ready (default 1). */
  spawnRetries?: number;
  maxLineBytes?: number;
  /** Lines waiting from one worker before reading from it pauses. */
  highWater?: number;
  /**
   * The CPU priority (nice value) workers run at, so that the host stays responsive while they
   * work (default WORKER_NICENESS, 10: below the host; workerPriority.ts); null: the host's own.
   */
  niceness?: number | null;
  /** Who owns the pool, for `keel workers` ("VS Code window 123", "keel batch"). */
  owner?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** xstate inspection of the pool's and its workers' machines (tests measure coverage with it). */
  inspect?: (event: InspectionEvent) => void;
}

/**
 * Worker handles are created at most one per turn of the event loop, for every pool of this
 * process: creating one (its machine actor, its channel, sending its spawn to the spawner
 * thread) costs the host a few ms, and a pool asked for four workers at once (four tasks
 * started together) made one turn pay for all four (docs/benchmarks.md, pool: the start turn).
 */
const startHandle = createTurnQueue();

export const POOL_DEFAULTS = {
  max: 4,
  strategy: 'lru' as EvictionStrategy,
  readyTimeoutMs: 30_000,
  shutdownGraceMs: 10_000,
  idleTimeoutMs: 15 * 60_000,
  healthIntervalMs: 30_000,
  healthAnswerMs: 5_000,
  busyHealthAnswerMs: 60_000,
  spawnRetries: 1,
};

/** A worker granted to one query. `release` hands it back if the query never used it. */
export interface PoolLease {
  workerId: string;
  pid: number | null;
  handle: WorkerHandle;
  release(): void;
}

interface Waiter {
  resolve(lease: PoolLease): void;
  reject(err: Error): void;
}

export class WorkerPool {
  private readonly actor: Actor<typeof poolMachine>;
  private readonly handles = new Map<string, WorkerHandle>();
  /** Workers decided but not created yet (see `spawn`): each creates its handle now when called. */
  private readonly pendingSpawns = new Map<string, () => void>();
  private readonly crashed = new Set<string>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly listeners = new Set<() => void>();
  private readonly workerListeners = new Set<(e: WorkerEmitted) => void>();
  private readonly timeouts: WorkerTimeouts;
  private readonly log: NonNullable<WorkerPoolOptions['log']>;
  private notifyScheduled = false;

  constructor(private readonly options: WorkerPoolOptions) {
    this.log = options.log ?? (() => undefined);
    this.timeouts = {
      readyMs: options.readyTimeoutMs ?? POOL_DEFAULTS.readyTimeoutMs,
      shutdownGraceMs: options.shutdownGraceMs ?? POOL_DEFAULTS.shutdownGraceMs,
      healthIntervalMs: options.healthIntervalMs ?? POOL_DEFAULTS.healthIntervalMs,
      healthAnswerMs: options.healthAnswerMs ?? POOL_DEFAULTS.healthAnswerMs,
      busyHealthAnswerMs: options.busyHealthAnswerMs ?? options.healthAnswerMs ?? POOL_DEFAULTS.busyHealthAnswerMs,
    };
    const idleTimeoutMs = options.idleTimeoutMs ?? POOL_DEFAULTS.idleTimeoutMs;
    const machine = poolMachine.provide({
      actors: {
        reaper: fromCallback<EventObject, { idleTimeoutMs: number }>(({ sendBack }) => {
          const t = setInterval(() => sendBack({ type: 'REAP' } satisfies PoolEvent), Math.max(50, Math.min(60_000, Math.floor(idleTimeoutMs / 4))));
          t.unref();
          return () => clearInterval(t);
        }),
      },
      actions: {
        // Performed after the pool's transition, never inside it: they drive other actors, whose
        // own transitions must not run within this machine's action (xstate forbids that).
        spawnWorker: (_, p) => queueMicrotask(() => this.spawn(p.workerId)),
        shutdownWorker: (_, p) =>
          queueMicrotask(() => {
            // A worker not created yet is created now, as if it had been at once, then stopped.
            this.pendingSpawns.get(p.workerId)?.();
            this.handles.get(p.workerId)?.shutdown(p.graceful, p.reason);
          }),
        grant: (_, p) => queueMicrotask(() => this.grant(p.requestId, p.workerId)),
        reject: (_, p) => queueMicrotask(() => this.reject(p.requestId, p.reason)),
      },
    });
    this.actor = createActor(machine, {
      input: {
        max: Math.max(1, options.max ?? POOL_DEFAULTS.max),
        strategy: options.strategy ?? POOL_DEFAULTS.strategy,
        idleTimeoutMs,
        spawnRetries: options.spawnRetries ?? POOL_DEFAULTS.spawnRetries,
      },
      ...(options.inspect ? { inspect: options.inspect } : {}),
    });
    this.actor.subscribe({ next: () => this.changed(), error: (err) => this.log('error', `worker pool machine error: ${errorMessage(err)}`) });
    this.actor.start();
  }

  /**
   * A worker for one query of `taskId`. Rejects when the pool cannot provide one (see the class
   * contract) or `signal` aborts first (the request is withdrawn; a worker granted at that moment
   * goes back to the pool). `overflow` (a sub-agent's query) may start a worker beyond `max`.
   */
  acquire(taskId: string, signal?: AbortSignal, opts: { overflow?: boolean } = {}): Promise<PoolLease> {
    if (signal?.aborted) return Promise.reject(new Error('cancelled before a worker was found'));
    const requestId = randomUUID();
    return new Promise<PoolLease>((resolve, reject) => {
      const onAbort = () => {
        if (!this.waiters.delete(requestId)) return;
        this.actor.send({ type: 'WITHDRAW', requestId });
        reject(new Error('cancelled before a worker was found'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(requestId, {
        resolve: (lease) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(lease);
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      });
      this.actor.send({ type: 'REQUEST', requestId, taskId, ...(opts.overflow ? { overflow: true } : {}) });
    });
  }

  /** The task is gone: its workers may serve any task (they stay warm, unbound). */
  releaseTask(taskId: string): void {
    this.actor.send({ type: 'RELEASE_TASK', taskId });
  }

  /** The worker bound to `taskId` (serving it now or last), if any. */
  workerOf(taskId: string): WorkerStatus | undefined {
    return this.status().workers.find((w) => w.taskId === taskId);
  }

  status(): PoolStatus {
    const snap = this.actor.getSnapshot();
    const c = snap.context;
    const workers: WorkerStatus[] = c.workers.map((w) => {
      const h = this.handles.get(w.id);
      const wc = h?.actor.getSnapshot().context;
      return {
        id: w.id,
        state: h ? h.state : w.state,
        pid: h?.pid ?? w.pid,
        taskId: w.taskId,
        startedAt: wc?.startedAt ?? w.createdAt,
        lastActivityAt: wc?.lastActivityAt ?? w.lastActivityAt,
        queriesProcessed: wc?.queriesProcessed ?? w.queriesProcessed,
        rssBytes: h?.health?.rssBytes ?? null,
      };
    });
    return {
      state: typeof snap.value === 'string' ? snap.value : JSON.stringify(snap.value),
      ownerPid: process.pid,
      owner: this.options.owner ?? 'Keel',
      max: c.max,
      strategy: c.strategy,
      workers,
      waiting: c.requests.length,
      stats: { ...c.stats },
      at: Date.now(),
    };
  }

  /** Asks every live worker for a health answer (memory, uptime), waiting at most `ms`. */
  async refreshHealth(ms = 1000): Promise<PoolStatus> {
    await Promise.all([...this.handles.values()].map((h) => h.refreshHealth(ms)));
    return this.status();
  }

  /** Called after every change (coalesced to one call per turn of the event loop). Returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` with every event a worker machine announces, after the pool acted on it (the event bus's worker events). Returns the unsubscribe function. */
  onWorkerEvent(listener: (e: WorkerEmitted) => void): () => void {
    this.workerListeners.add(listener);
    return () => this.workerListeners.delete(listener);
  }

  /** The handle of a live worker (tests, the bench). */
  handle(workerId: string): WorkerHandle | undefined {
    return this.handles.get(workerId);
  }

  /** Stops every worker; resolves when all are gone. Idempotent. */
  async shutdown(): Promise<void> {
    this.actor.send({ type: 'SHUTDOWN_ALL' });
    await toPromise(this.actor).catch(() => undefined);
  }

  /**
   * Starts the worker the pool machine decided to start: its handle (machine actor, channel,
   * process launch) is created at once if no handle was created in this turn of the
   * event loop, else on a following turn, one per turn (startHandle). Until then the pool
   * machine's record of it answers for it (status: starting); a stop for it creates it first.
   */
  private spawn(workerId: string): void {
    let created = false;
    const create = () => {
      created = true;
      this.pendingSpawns.delete(workerId);
      this.createHandle(workerId);
    };
    const withdraw = startHandle(create);
    if (created) return;
    this.pendingSpawns.set(workerId, () => {
      withdraw();
      create();
    });
  }

  private createHandle(workerId: string): void {
    const handle = new WorkerHandle(workerId, {
      command: this.options.command,
      timeouts: this.timeouts,
      maxLineBytes: this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      ...(this.options.highWater ? { highWater: this.options.highWater } : {}),
      niceness: this.options.niceness === undefined ? WORKER_NICENESS : this.options.niceness,
      log: this.log,
      onEmitted: (e) => this.onWorker(e),
      ...(this.options.inspect ? { inspect: this.options.inspect } : {}),
    });
    this.handles.set(workerId, handle);
    handle.start();
  }

  private onWorker(e: WorkerEmitted): void {
    switch (e.type) {
      case 'worker:ready':
        this.actor.send({ type: 'WORKER_READY', workerId: e.workerId, pid: e.pid });
        break;
      case 'worker:idle':
        this.actor.send({ type: 'WORKER_IDLE', workerId: e.workerId, queriesProcessed: e.queriesProcessed });
        break;
      case 'worker:crashed':
        this.crashed.add(e.workerId);
        this.log('warn', `worker ${e.workerId} died: ${e.reason}`);
        break;
      case 'worker:stopped': {
        const crashed = this.crashed.delete(e.workerId);
        this.handles.delete(e.workerId);
        this.actor.send({ type: 'WORKER_GONE', workerId: e.workerId, crashed, reason: e.reason });
        break;
      }
      case 'worker:busy':
        break;
    }
    this.changed();
    for (const l of this.workerListeners) l(e);
  }

  private grant(requestId: string, workerId: string): void {
    const waiter = this.waiters.get(requestId);
    const handle = this.handles.get(workerId);
    this.waiters.delete(requestId);
    if (!handle) return;
    // Whether the lease was used is the worker machine's own record: a query assigned since the
    // grant left it busy, or counted once done.
    const processedAtGrant = handle.actor.getSnapshot().context.queriesProcessed;
    let released = false;
    const lease: PoolLease = {
      workerId,
      pid: handle.pid,
      handle,
      release: () => {
        if (released) return;
        released = true;
        const { context } = handle.actor.getSnapshot();
        // Never used for a query: the worker machine never went busy; the pool must hear it is free.
        if (handle.state === 'ready' && context.queriesProcessed === processedAtGrant) this.actor.send({ type: 'WORKER_IDLE', workerId, queriesProcessed: context.queriesProcessed });
      },
    };
    if (waiter) waiter.resolve(lease);
    else lease.release();
  }

  private reject(requestId: string, reason: string): void {
    const waiter = this.waiters.get(requestId);
    this.waiters.delete(requestId);
    waiter?.reject(new Error(reason));
  }

  private changed(): void {
    if (this.notifyScheduled || this.listeners.size === 0) return;
    this.notifyScheduled = true;
    queueMicrotask(() => {
      this.notifyScheduled = false;
      for (const l of this.listeners) {
        try {
          l();
        } catch (err) {
          this.log('warn', `a pool listener threw: ${errorMessage(err)}`);
        }
      }
    });
  }
}
