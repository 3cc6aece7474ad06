import { pickVictim, type EvictionStrategy, type PoolWorkerState } from '../../workers/eviction';

/**
 * What the pool machine decides, as pure functions of its context: the guards of its decision
 * transitions (pool.machine.ts) ask `nextDecision` which kind of step comes next, and the action
 * of the one that holds performs it. Nothing here acts.
 *
 * A worker is bound to the task it last served (its caches are warm for that task's next query).
 * Waiting requests are looked at in order of arrival; the first one that can move decides:
 *  1. it ran out of tries (its workers died before they were ready more than `spawnRetries`
 *     times) → **reject** it with the last reason;
 *  2. an idle worker bound to its task, else an idle unbound one → **grant** it;
 *  3. a worker is already starting for it → it waits;
 *  4. fewer than `max` workers are alive → **start** one for it;
 *  5. at capacity, an idle worker bound to another task that no waiting request wants → **take it
 *     over** (the strategy picks which: `lru`, `oldest`, `least_used`): the same process now serves
 *     the new task — never a fresh process for it (a `keel batch` of many tasks runs on its first
 *     `max` workers);
 *  6. a sub-agent's request (`overflow`: its parent holds a worker while it waits) that found
 *     nothing above → **start** one beyond `max` (else parents waiting for their children could
 *     hold every worker and no child could ever run);
 *  7. otherwise it waits until a worker frees up — for as long as it takes.
 * A busy, starting or leaving worker is never taken.
 */
export interface PoolWorker {
  id: string;
  state: PoolWorkerState;
  /** The task this worker is bound to (null: free for any task). */
  taskId: string | null;
  /** The request this worker was started for (until it is ready). */
  spawnedFor: string | null;
  /** The request it is serving while busy. */
  requestId: string | null;
  pid: number | null;
  createdAt: number;
  lastActivityAt: number;
  queriesProcessed: number;
}

export interface PoolRequest {
  requestId: string;
  taskId: string;
  at: number;
  /** Workers started for it that died before they were ready. */
  failedSpawns: number;
  lastFailure: string | null;
  /** May start a worker beyond `max` (see above). */
  overflow?: boolean;
}

export interface PoolDecisionState {
  max: number;
  strategy: EvictionStrategy;
  spawnRetries: number;
  workers: readonly PoolWorker[];
  requests: readonly PoolRequest[];
}

export type PoolDecision =
  | { kind: 'reject'; requestId: string; reason: string }
  | { kind: 'grant'; requestId: string; taskId: string; workerId: string }
  | { kind: 'takeOver'; requestId: string; taskId: string; workerId: string; from: string }
  | { kind: 'start'; requestId: string; taskId: string; beyondMax: boolean };

/** Workers that count toward `max`: every one not already on its way out. */
export function liveCount(workers: readonly PoolWorker[]): number {
  return workers.filter((w) => w.state !== 'shuttingDown').length;
}

/** The next step the pool takes for its waiting requests, or null when every one of them waits. Pure. */
export function nextDecision(s: PoolDecisionState): PoolDecision | null {
  const wanted = new Set(s.requests.map((r) => r.taskId));
  for (const r of s.requests) {
    if (r.failedSpawns > s.spawnRetries) return { kind: 'reject', requestId: r.requestId, reason: r.lastFailure ?? 'no worker could be started' };
    const idle = s.workers.find((w) => w.state === 'ready' && w.taskId === r.taskId) ?? s.workers.find((w) => w.state === 'ready' && w.taskId === null);
    if (idle) return { kind: 'grant', requestId: r.requestId, taskId: r.taskId, workerId: idle.id };
    if (s.workers.some((w) => w.state === 'starting' && w.spawnedFor === r.requestId)) continue;
    if (liveCount(s.workers) < s.max) return { kind: 'start', requestId: r.requestId, taskId: r.taskId, beyondMax: false };
    // Never a worker bound to a task that a waiting request of its own could use.
    const victim = pickVictim(s.workers, s.strategy, (w) => w.taskId !== null && !wanted.has(w.taskId));
    if (victim !== null) return { kind: 'takeOver', requestId: r.requestId, taskId: r.taskId, workerId: victim, from: s.workers.find((w) => w.id === victim)!.taskId! };
    if (r.overflow) return { kind: 'start', requestId: r.requestId, taskId: r.taskId, beyondMax: true };
  }
  return null;
}

/** The pool's context after `d` (the worker it gives is busy with the request; a started one is `starting` for it). */
export function applyDecision(s: PoolDecisionState & { nextWorker: number }, d: PoolDecision, now: number): { workers: PoolWorker[]; requests: PoolRequest[]; nextWorker: number } {
  const requests = s.requests.filter((r) => d.kind === 'start' || r.requestId !== d.requestId);
  switch (d.kind) {
    case 'reject':
      return { workers: [...s.workers], requests, nextWorker: s.nextWorker };
    case 'grant':
    case 'takeOver':
      return {
        workers: s.workers.map((w) => (w.id === d.workerId ? { ...w, state: 'busy' as const, taskId: d.taskId, requestId: d.requestId, lastActivityAt: now } : w)),
        requests,
        nextWorker: s.nextWorker,
      };
    case 'start': {
      const worker: PoolWorker = {
        id: startedWorkerId(s),
        state: 'starting',
        taskId: d.taskId,
        spawnedFor: d.requestId,
        requestId: null,
        pid: null,
        createdAt: now,
        lastActivityAt: now,
        queriesProcessed: 0,
      };
      return { workers: [...s.workers, worker], requests, nextWorker: s.nextWorker + 1 };
    }
  }
}

/** The id the next started worker gets. */
export function startedWorkerId(s: { nextWorker: number }): string {
  return `w${s.nextWorker}`;
}
