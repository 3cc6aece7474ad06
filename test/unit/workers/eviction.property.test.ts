import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVICTION_STRATEGIES, type EvictionStrategy } from '../../../src/core/workers/eviction';
import { planDispatch, type PoolWorker } from '../../../src/core/workers/poolPlan';

/**
 * Property: when the pool is at capacity and a task needs a worker that no idle worker can give
 * (none is free or bound to it), the strategy evicts exactly the right idle worker — the oldest
 * last activity (lru), the first created (oldest), the fewest queries (least_used), ties to the
 * first created — and never a busy, starting or leaving one. With no idle worker, nothing is
 * evicted and the request waits.
 */
const STATES = ['starting', 'ready', 'busy', 'shuttingDown'] as const;

const worker = fc.record({
  state: fc.constantFrom(...STATES),
  createdAt: fc.integer({ min: 0, max: 1000 }),
  lastActivityAt: fc.integer({ min: 0, max: 1000 }),
  queriesProcessed: fc.integer({ min: 0, max: 20 }),
});

const key: Record<EvictionStrategy, (w: PoolWorker) => number> = {
  lru: (w) => w.lastActivityAt,
  oldest: (w) => w.createdAt,
  least_used: (w) => w.queriesProcessed,
};

describe('eviction at capacity', () => {
  it('picks the right idle worker, never a busy one', () => {
    fc.assert(
      fc.property(fc.array(worker, { minLength: 1, maxLength: 8 }), fc.constantFrom(...EVICTION_STRATEGIES), (raw, strategy) => {
        const workers: PoolWorker[] = raw.map((w, i) => ({
          id: `w${i + 1}`,
          state: w.state,
          // Each worker bound to a task of its own: none can serve the newcomer without eviction.
          taskId: `task-${i}`,
          spawnedFor: w.state === 'starting' ? `other-${i}` : null,
          requestId: w.state === 'busy' ? `q-${i}` : null,
          pid: 100 + i,
          createdAt: w.createdAt,
          lastActivityAt: w.lastActivityAt,
          queriesProcessed: w.queriesProcessed,
        }));
        const live = workers.filter((w) => w.state !== 'shuttingDown').length;
        fc.pre(live > 0);
        const plan = planDispatch(
          { max: live, strategy, spawnRetries: 1, workers, requests: [{ requestId: 'new', taskId: 'newcomer', at: 0, failedSpawns: 0, lastFailure: null }], nextWorker: 99 },
          2000,
        );
        const idle = workers.filter((w) => w.state === 'ready');
        if (idle.length === 0) {
          expect(plan.evictions).toEqual([]);
          expect(plan.spawns).toEqual([]);
          expect(plan.requests.map((r) => r.requestId)).toEqual(['new']);
          return;
        }
        const best = [...idle].sort((a, b) => key[strategy](a) - key[strategy](b) || a.createdAt - b.createdAt || a.id.localeCompare(b.id, 'en', { numeric: true }))[0]!;
        expect(plan.evictions.map((e) => e.workerId)).toEqual([best.id]);
        const victim = workers.find((w) => w.id === best.id)!;
        expect(victim.state).toBe('ready');
        // A replacement starts for the newcomer; the pool never grows past its size.
        expect(plan.spawns.map((s) => s.taskId)).toEqual(['newcomer']);
        expect(plan.workers.filter((w) => w.state !== 'shuttingDown').length).toBe(live);
      }),
      { numRuns: 500 },
    );
  });

  it('a sub-agent (overflow) that finds no idle worker starts one beyond the size; others wait', () => {
    const busy: PoolWorker = { id: 'w1', state: 'busy', taskId: 'parent', spawnedFor: null, requestId: 'q0', pid: 1, createdAt: 0, lastActivityAt: 0, queriesProcessed: 1 };
    const base = { max: 1, strategy: 'lru' as const, spawnRetries: 1, workers: [busy], nextWorker: 2 };
    const child = planDispatch({ ...base, requests: [{ requestId: 'c', taskId: 'child', at: 0, failedSpawns: 0, lastFailure: null, overflow: true }] }, 1);
    expect(child.spawns.map((x) => x.taskId)).toEqual(['child']);
    expect(child.evictions).toEqual([]);
    const other = planDispatch({ ...base, requests: [{ requestId: 'o', taskId: 'other', at: 0, failedSpawns: 0, lastFailure: null }] }, 1);
    expect(other.spawns).toEqual([]);
    expect(other.requests.map((r) => r.requestId)).toEqual(['o']);
  });
});
