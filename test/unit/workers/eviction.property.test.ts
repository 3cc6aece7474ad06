import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVICTION_STRATEGIES, type EvictionStrategy } from '../../../src/core/workers/eviction';
import { nextDecision, type PoolWorker } from '../../../src/core/machines/pool/poolDecisions';

/**
 * Property: when the pool is at capacity and a task needs a worker that no idle worker can give
 * (none is free or bound to it), the strategy gives it exactly the right idle worker of another
 * task — the oldest last activity (lru), the first created (oldest), the fewest queries
 * (least_used), ties to the first created — taken over as it is (no process is started for it),
 * and never a busy, starting or leaving one. With no idle worker, the request waits.
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
        const d = nextDecision({ max: live, strategy, spawnRetries: 1, workers, requests: [{ requestId: 'new', taskId: 'newcomer', at: 0, failedSpawns: 0, lastFailure: null }] });
        const idle = workers.filter((w) => w.state === 'ready');
        if (idle.length === 0) {
          // Nothing to take and no room: it waits (no decision).
          expect(d).toBeNull();
          return;
        }
        const best = [...idle].sort((a, b) => key[strategy](a) - key[strategy](b) || a.createdAt - b.createdAt || a.id.localeCompare(b.id, 'en', { numeric: true }))[0]!;
        expect(d).toEqual({ kind: 'takeOver', requestId: 'new', taskId: 'newcomer', workerId: best.id, from: best.taskId });
      }),
      { numRuns: 500 },
    );
  });

  it('a sub-agent (overflow) that finds no idle worker starts one beyond the size; others wait', () => {
    const busy: PoolWorker = { id: 'w1', state: 'busy', taskId: 'parent', spawnedFor: null, requestId: 'q0', pid: 1, createdAt: 0, lastActivityAt: 0, queriesProcessed: 1 };
    const base = { max: 1, strategy: 'lru' as const, spawnRetries: 1, workers: [busy] };
    expect(nextDecision({ ...base, requests: [{ requestId: 'c', taskId: 'child', at: 0, failedSpawns: 0, lastFailure: null, overflow: true }] })).toEqual({
      kind: 'start',
      requestId: 'c',
      taskId: 'child',
      beyondMax: true,
    });
    expect(nextDecision({ ...base, requests: [{ requestId: 'o', taskId: 'other', at: 0, failedSpawns: 0, lastFailure: null }] })).toBeNull();
  });

  it('a worker bound to a task that has a waiting request of its own is never taken for another', () => {
    const idle = (id: string, taskId: string, lastActivityAt: number): PoolWorker => ({ id, state: 'ready', taskId, spawnedFor: null, requestId: null, pid: 1, createdAt: 0, lastActivityAt, queriesProcessed: 1 });
    const d = nextDecision({
      max: 2,
      strategy: 'lru',
      spawnRetries: 1,
      workers: [idle('w1', 'a', 0), { ...idle('w2', 'b', 5), state: 'busy', requestId: 'q' }],
      requests: [
        { requestId: 'r1', taskId: 'c', at: 0, failedSpawns: 0, lastFailure: null },
        { requestId: 'r2', taskId: 'a', at: 1, failedSpawns: 0, lastFailure: null },
      ],
    });
    // r1 cannot take w1 (task a waits for it): r2 gets its own worker first.
    expect(d).toEqual({ kind: 'grant', requestId: 'r2', taskId: 'a', workerId: 'w1' });
  });
});
