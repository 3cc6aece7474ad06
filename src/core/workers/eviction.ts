/**
 * Which idle worker to evict from the task it is bound to when the pool is at capacity and a task
 * needs a worker none of the idle ones is bound to; the same process then serves the new task
 * (machines/pool/poolDecisions.ts). Only idle (`ready`) workers are ever candidates: a busy worker is running a
 * query, a starting one is about to, a shutting-down one is leaving anyway.
 *  - `lru`: the one whose last activity is oldest;
 *  - `oldest`: the one created first;
 *  - `least_used`: the one that processed the fewest queries.
 * Ties go to the earlier created, then the smaller id, so a choice is always the same for the
 * same pool.
 */
export const EVICTION_STRATEGIES = ['lru', 'oldest', 'least_used'] as const;
export type EvictionStrategy = (typeof EVICTION_STRATEGIES)[number];

export type PoolWorkerState = 'starting' | 'ready' | 'busy' | 'shuttingDown';

export interface EvictionCandidate {
  id: string;
  state: PoolWorkerState;
  createdAt: number;
  lastActivityAt: number;
  queriesProcessed: number;
}

const KEYS: Record<EvictionStrategy, (w: EvictionCandidate) => number> = {
  lru: (w) => w.lastActivityAt,
  oldest: (w) => w.createdAt,
  least_used: (w) => w.queriesProcessed,
};

/** The worker to take over, or null when no eligible worker is idle. Pure. */
export function pickVictim<W extends EvictionCandidate>(workers: readonly W[], strategy: EvictionStrategy, eligible: (w: W) => boolean = () => true): string | null {
  const key = KEYS[strategy];
  let best: W | null = null;
  for (const w of workers) {
    if (w.state !== 'ready' || !eligible(w)) continue;
    if (best === null || compare(w, best, key) < 0) best = w;
  }
  return best?.id ?? null;
}

function compare(a: EvictionCandidate, b: EvictionCandidate, key: (w: EvictionCandidate) => number): number {
  return key(a) - key(b) || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
