import { pickVictim, type EvictionStrategy, type PoolWorkerState } from './eviction';

/**
 * The pool's decisions as a pure function of its state: which waiting request gets which worker,
 * which workers to start, which idle worker to evict. The pool machine calls it after every
 * event and performs what it returns.
 *
 * A worker is bound to the task it last served (its caches are warm for that task's next query)
 * until the task lets it go. A request is served, in order of arrival, by:
 *  1. an idle worker bound to its task; 2. an idle unbound worker (bound from now on);
 *  3. waiting for a worker already starting for it; 4. a new worker when fewer than `max` are
 *  alive; 5. at capacity, evicting an idle worker bound to another task (the strategy picks it)
 *  and starting a replacement; 6. otherwise waiting until a worker frees up.
 * A request whose worker died before it was ready is retried on a fresh worker `spawnRetries`
 * times, then rejected with the reason. An `overflow` request (a sub-agent whose parent holds a
 * worker while it waits for it) that finds no idle worker to evict starts one beyond `max`: else
 * parents waiting for their children could hold every worker and no child could ever run.
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

export interface PoolPlanState {
  max: number;
  strategy: EvictionStrategy;
  spawnRetries: number;
  workers: PoolWorker[];
  requests: PoolRequest[];
  nextWorker: number;
}

export interface PoolPlan {
  workers: PoolWorker[];
  requests: PoolRequest[];
  nextWorker: number;
  spawns: { workerId: string; taskId: string; requestId: string }[];
  evictions: { workerId: string; reason: string }[];
  grants: { requestId: string; workerId: string; taskId: string }[];
  rejections: { requestId: string; reason: string }[];
}

/** Workers that count toward `max`: every one not already on its way out. */
export function liveCount(workers: readonly PoolWorker[]): number {
  return workers.filter((w) => w.state !== 'shuttingDown').length;
}

export function planDispatch(s: PoolPlanState, now: number): PoolPlan {
  const workers = s.workers.map((w) => ({ ...w }));
  const waiting: PoolRequest[] = [];
  const plan: PoolPlan = { workers, requests: waiting, nextWorker: s.nextWorker, spawns: [], evictions: [], grants: [], rejections: [] };
  for (const r of s.requests) {
    if (r.failedSpawns > s.spawnRetries) {
      plan.rejections.push({ requestId: r.requestId, reason: r.lastFailure ?? 'no worker could be started' });
      continue;
    }
    const idle = workers.find((w) => w.state === 'ready' && w.taskId === r.taskId) ?? workers.find((w) => w.state === 'ready' && w.taskId === null);
    if (idle) {
      idle.state = 'busy';
      idle.taskId = r.taskId;
      idle.requestId = r.requestId;
      idle.lastActivityAt = now;
      plan.grants.push({ requestId: r.requestId, workerId: idle.id, taskId: r.taskId });
      continue;
    }
    waiting.push(r);
    if (workers.some((w) => w.state === 'starting' && w.spawnedFor === r.requestId)) continue;
    if (liveCount(workers) >= s.max) {
      // Never evict a worker another waiting request of its own task could use.
      const wanted = new Set(waiting.map((q) => q.taskId));
      const victim = pickVictim(workers, s.strategy, (w) => w.taskId !== null && !wanted.has(w.taskId));
      if (victim === null) {
        if (!r.overflow) continue;
      } else {
        const v = workers.find((w) => w.id === victim)!;
        v.state = 'shuttingDown';
        plan.evictions.push({ workerId: victim, reason: `evicted (${s.strategy}) for task ${r.taskId}` });
      }
    }
    const id = `w${plan.nextWorker++}`;
    workers.push({ id, state: 'starting', taskId: r.taskId, spawnedFor: r.requestId, requestId: null, pid: null, createdAt: now, lastActivityAt: now, queriesProcessed: 0 });
    plan.spawns.push({ workerId: id, taskId: r.taskId, requestId: r.requestId });
  }
  return plan;
}
