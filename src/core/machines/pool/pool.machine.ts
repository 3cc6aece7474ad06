import { assign, enqueueActions, fromCallback, setup, type EventObject } from 'xstate';
import type { EvictionStrategy } from '../../workers/eviction';
import { applyDecision, liveCount, nextDecision, startedWorkerId, type PoolDecision, type PoolRequest, type PoolWorker } from './poolDecisions';

export type { PoolRequest, PoolWorker };

/**
 * The worker pool: idle (no worker) → active → atCapacity (`max` workers alive) → active → idle;
 * SHUTDOWN_ALL from any state → shuttingDown → stopped. Its decisions are its own transitions:
 * while open, after every event, guards say what the waiting requests get next
 * (`requestOutOfTries` → reject, `idleWorkerFree` → grant, `idleWorkerToTakeOver` → at capacity,
 * an idle worker of another task serves the new one, `roomForWorker` → start one; in that order,
 * for the first request that can move: poolDecisions.ts), until none holds and every request left
 * waits — for as long as it takes, or until its query withdraws it (WITHDRAW: cancelled). The
 * machine performs them through named actions the pool provides: `spawnWorker`,
 * `shutdownWorker`, `grant`, `reject`. Idle workers are reaped after `idleTimeoutMs` (REAP comes
 * from `reaper`).
 */
export interface PoolInput {
  max: number;
  strategy: EvictionStrategy;
  idleTimeoutMs: number;
  /** Fresh workers tried for one request after one died before it was ready. */
  spawnRetries: number;
}

export interface PoolContext extends PoolInput {
  workers: PoolWorker[];
  requests: PoolRequest[];
  nextWorker: number;
  stats: { spawned: number; evicted: number; crashed: number; reaped: number; rejected: number };
}

export type PoolEvent =
  /** `overflow`: a sub-agent's request, which may start a worker beyond `max` (see planDispatch). */
  | { type: 'REQUEST'; requestId: string; taskId: string; overflow?: boolean }
  | { type: 'WITHDRAW'; requestId: string }
  | { type: 'WORKER_READY'; workerId: string; pid: number }
  | { type: 'WORKER_IDLE'; workerId: string; queriesProcessed: number }
  | { type: 'WORKER_GONE'; workerId: string; crashed: boolean; reason: string }
  /** The task is gone (forgotten, interrupted): its workers are free for any task. */
  | { type: 'RELEASE_TASK'; taskId: string }
  | { type: 'REAP' }
  | { type: 'SHUTDOWN_ALL' };

const full = (c: PoolContext) => liveCount(c.workers) >= c.max;

/**
 * The pool's decisions, taken while it is open (idle, active, atCapacity): each is an eventless
 * transition whose guard says it is the next step for the waiting requests; its `decide` action
 * performs it, and the next one is looked at, until none holds.
 */
const DECISIONS = [
  { guard: 'requestOutOfTries', actions: 'decide' },
  { guard: 'idleWorkerFree', actions: 'decide' },
  { guard: 'idleWorkerToTakeOver', actions: 'decide' },
  { guard: 'roomForWorker', actions: 'decide' },
] as const;

/** The pool's counters after decision `d` (a take-over counts as an eviction of the worker's last task). */
function countOf(stats: PoolContext['stats'], d: PoolDecision): PoolContext['stats'] {
  if (d.kind === 'reject') return { ...stats, rejected: stats.rejected + 1 };
  if (d.kind === 'start') return { ...stats, spawned: stats.spawned + 1 };
  if (d.kind === 'takeOver') return { ...stats, evicted: stats.evicted + 1 };
  return stats;
}

export const poolMachine = setup({
  types: {
    context: {} as PoolContext,
    input: {} as PoolInput,
    events: {} as PoolEvent,
  },
  actors: {
    /** Sends REAP now and then (provided by the pool; the default never does). */
    reaper: fromCallback<EventObject, { idleTimeoutMs: number }>(() => () => undefined),
  },
  actions: {
    spawnWorker: (_: unknown, _p: { workerId: string; taskId: string; requestId: string }) => {},
    shutdownWorker: (_: unknown, _p: { workerId: string; reason: string; graceful: boolean }) => {},
    grant: (_: unknown, _p: { requestId: string; workerId: string; taskId: string }) => {},
    reject: (_: unknown, _p: { requestId: string; reason: string }) => {},
    /** Performs the decision the guards chose (poolDecisions.ts): the context first, then the pool's action. */
    decide: enqueueActions(({ context, enqueue }) => {
      const d = nextDecision(context);
      if (!d) return;
      const workerId = d.kind === 'start' ? startedWorkerId(context) : null;
      enqueue.assign({ ...applyDecision(context, d, Date.now()), stats: countOf(context.stats, d) });
      if (d.kind === 'reject') enqueue({ type: 'reject', params: { requestId: d.requestId, reason: d.reason } });
      else if (d.kind === 'start') enqueue({ type: 'spawnWorker', params: { workerId: workerId!, taskId: d.taskId, requestId: d.requestId } });
      else enqueue({ type: 'grant', params: { requestId: d.requestId, workerId: d.workerId, taskId: d.taskId } });
    }),
    reapIdle: enqueueActions(({ context, enqueue }) => {
      const now = Date.now();
      const old = context.workers.filter((w) => w.state === 'ready' && now - w.lastActivityAt >= context.idleTimeoutMs);
      if (old.length === 0) return;
      enqueue.assign({
        workers: context.workers.map((w) => (old.includes(w) ? { ...w, state: 'shuttingDown' as const } : w)),
        stats: { ...context.stats, reaped: context.stats.reaped + old.length },
      });
      for (const w of old) enqueue({ type: 'shutdownWorker', params: { workerId: w.id, reason: `idle for ${Math.round(context.idleTimeoutMs / 1000)} s`, graceful: true } });
    }),
    shutdownEveryone: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ workers: context.workers.map((w) => ({ ...w, state: 'shuttingDown' as const })), requests: [] });
      for (const w of context.workers) if (w.state !== 'shuttingDown') enqueue({ type: 'shutdownWorker', params: { workerId: w.id, reason: 'the pool is shutting down', graceful: true } });
      for (const r of context.requests) enqueue({ type: 'reject', params: { requestId: r.requestId, reason: 'the worker pool is shutting down' } });
    }),
  },
  guards: {
    /** A waiting request's workers kept dying before they were ready: it is refused. */
    requestOutOfTries: ({ context }) => nextDecision(context)?.kind === 'reject',
    /** An idle worker bound to a waiting request's task, or bound to none, serves it. */
    idleWorkerFree: ({ context }) => nextDecision(context)?.kind === 'grant',
    /** At capacity: an idle worker of a task nobody waits for serves a waiting request (by the strategy). */
    idleWorkerToTakeOver: ({ context }) => nextDecision(context)?.kind === 'takeOver',
    /** Below `max` (or a sub-agent with nothing to take): a worker starts for a waiting request. */
    roomForWorker: ({ context }) => nextDecision(context)?.kind === 'start',
    hasWorkers: ({ context }) => context.workers.length > 0,
    noWorkers: ({ context }) => context.workers.length === 0,
    full: ({ context }) => full(context),
    notFull: ({ context }) => !full(context),
  },
}).createMachine({
  id: 'pool',
  context: ({ input }) => ({ ...input, workers: [], requests: [], nextWorker: 1, stats: { spawned: 0, evicted: 0, crashed: 0, reaped: 0, rejected: 0 } }),
  invoke: { src: 'reaper', input: ({ context }) => ({ idleTimeoutMs: context.idleTimeoutMs }) },
  on: {
    REQUEST: {
      actions: [
        assign({
          requests: ({ context, event }) => [
            ...context.requests,
            { requestId: event.requestId, taskId: event.taskId, at: Date.now(), failedSpawns: 0, lastFailure: null, overflow: event.overflow === true },
          ],
        }),
      ],
    },
    WITHDRAW: {
      actions: [
        assign({
          requests: ({ context, event }) => context.requests.filter((r) => r.requestId !== event.requestId),
          // A worker started for it stays, free for whoever comes next.
          workers: ({ context, event }) => context.workers.map((w) => (w.spawnedFor === event.requestId ? { ...w, spawnedFor: null, taskId: null } : w)),
        }),
      ],
    },
    WORKER_READY: {
      actions: [
        assign({
          workers: ({ context, event }) =>
            context.workers.map((w) => {
              if (w.id !== event.workerId || w.state !== 'starting') return w;
              const stillWanted = context.requests.some((r) => r.requestId === w.spawnedFor);
              return { ...w, state: 'ready' as const, pid: event.pid, spawnedFor: null, taskId: stillWanted ? w.taskId : null, lastActivityAt: Date.now() };
            }),
        }),
      ],
    },
    WORKER_IDLE: {
      actions: [
        assign({
          workers: ({ context, event }) =>
            context.workers.map((w) =>
              w.id === event.workerId && w.state === 'busy' ? { ...w, state: 'ready' as const, requestId: null, queriesProcessed: event.queriesProcessed, lastActivityAt: Date.now() } : w,
            ),
        }),
      ],
    },
    WORKER_GONE: {
      actions: [
        assign(({ context, event }) => {
          const gone = context.workers.find((w) => w.id === event.workerId);
          const diedStarting = gone?.state === 'starting' && gone.spawnedFor !== null;
          return {
            workers: context.workers.filter((w) => w.id !== event.workerId),
            requests: diedStarting
              ? context.requests.map((r) => (r.requestId === gone!.spawnedFor ? { ...r, failedSpawns: r.failedSpawns + 1, lastFailure: event.reason } : r))
              : context.requests,
            stats: { ...context.stats, crashed: context.stats.crashed + (event.crashed ? 1 : 0) },
          };
        }),
      ],
    },
    RELEASE_TASK: {
      actions: [
        assign({ workers: ({ context, event }) => context.workers.map((w) => (w.taskId === event.taskId && w.state !== 'busy' ? { ...w, taskId: null } : w)) }),
      ],
    },
    REAP: { actions: ['reapIdle'] },
    SHUTDOWN_ALL: { target: '.shuttingDown' },
  },
  initial: 'idle',
  states: {
    idle: { always: [...DECISIONS, { guard: 'hasWorkers', target: 'active' }] },
    active: {
      always: [...DECISIONS, { guard: 'noWorkers', target: 'idle' }, { guard: 'full', target: 'atCapacity' }],
    },
    atCapacity: {
      always: [...DECISIONS, { guard: 'noWorkers', target: 'idle' }, { guard: 'notFull', target: 'active' }],
    },
    shuttingDown: {
      entry: 'shutdownEveryone',
      always: { guard: 'noWorkers', target: 'stopped' },
      on: {
        REQUEST: { actions: { type: 'reject', params: ({ event }) => ({ requestId: event.requestId, reason: 'the worker pool is shutting down' }) } },
        WORKER_GONE: { actions: assign({ workers: ({ context, event }) => context.workers.filter((w) => w.id !== event.workerId) }) },
        WITHDRAW: {},
        WORKER_READY: {},
        WORKER_IDLE: {},
        RELEASE_TASK: {},
        REAP: {},
        SHUTDOWN_ALL: {},
      },
    },
    stopped: { type: 'final' },
  },
});
