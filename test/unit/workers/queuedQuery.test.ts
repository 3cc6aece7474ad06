import { createActor, toPromise } from 'xstate';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { denyingAsker } from '../../../src/core/permissions/gate';
import { WorkerPool } from '../../../src/core/workers/pool';
import { remoteTurn } from '../../../src/core/workers/remoteTurn';
import { fakeWorker, queryParts, turnInput, waitForSnapshot } from './fakeWorker';

/**
 * A queued task waits for a worker for as long as the person lets it (issue 26, item 2: it was
 * failed after 5 minutes, "No worker became free in time", and `keel batch` lost its tail). A
 * pool of one real worker held by another task; the query's clock is advanced by hours (fake
 * timers: the wait itself is the behaviour under test), then the person cancels it.
 */
const pools: WorkerPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
});

describe('a query waiting for a worker', () => {
  it('is still waiting after hours, and a cancel ends it cancelled', async () => {
    const pool = new WorkerPool({ command: fakeWorker(), max: 1, shutdownGraceMs: 2000, healthIntervalMs: 24 * 3_600_000 });
    pools.push(pool);
    const blocker = await pool.acquire('other-task');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const actor = createActor(remoteTurn({ pool, queryParts, host: { asker: denyingAsker, publish: () => undefined } }), { input: turnInput('t1', 'hello') });
    actor.start();
    expect(actor.getSnapshot().value).toBe('pending');
    vi.advanceTimersByTime(6 * 3_600_000);
    expect(actor.getSnapshot().value).toBe('pending');
    expect(pool.status().waiting).toBe(1);
    vi.useRealTimers();
    actor.send({ type: 'CANCEL' });
    const output = await toPromise(actor);
    expect(output.error?.code).toBe('cancelled');
    await waitForSnapshot(actor, (s) => s.status === 'done');
    // Withdrawn: the pool no longer holds the request, and its worker serves the next task.
    expect(pool.status().waiting).toBe(0);
    blocker.release();
    const next = await pool.acquire('third-task');
    expect(next.workerId).toBe(blocker.workerId);
  });
});
