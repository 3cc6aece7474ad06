import type { InspectionEvent } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerPool, type PoolLease } from '../../../src/core/workers/pool';
import { eventually, fakeWorker, gone, runOn } from './fakeWorker';

/**
 * The health check judges silence, and gives a worker that runs a query longer (issue 26, item 4:
 * a worker below the host's priority, handling a 50 MB answer on a loaded machine, went silent
 * for 10 s and was killed). Real processes: the fake worker never answers a check
 * (`--silent-health`) and, with "hang", runs a query that says nothing.
 */
const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
});

function pool(opts: Partial<ConstructorParameters<typeof WorkerPool>[0]>): { pool: WorkerPool; checks: () => number } {
  let checks = 0;
  const inspect = (e: InspectionEvent) => {
    if (e.type === '@xstate.event' && e.event.type === 'SEND_HEALTH_CHECK') checks++;
  };
  const p = new WorkerPool({ command: fakeWorker('--silent-health'), max: 1, shutdownGraceMs: 2000, healthIntervalMs: 50, healthAnswerMs: 150, inspect, ...opts });
  pools.push(p);
  return { pool: p, checks: () => checks };
}

function hang(lease: PoolLease): { lost: () => string | null } {
  const r = runOn(lease.handle, 'q1', 'task-a', 'hang');
  return { lost: () => r.lost };
}

describe('the health check', () => {
  it('a worker running a query is not killed for a late answer within the busy limit', async () => {
    const { pool: p, checks } = pool({ busyHealthAnswerMs: 600_000 });
    const lease = await p.acquire('task-a');
    const q = hang(lease);
    await eventually(() => checks() >= 1 && p.status().workers[0]?.state === 'busy', 10_000, 'a check sent to the busy worker');
    const first = checks();
    // A clock for "the idle limit has passed since that check": an idle silent worker, checked
    // after it, being killed for its silence.
    const other = pool({});
    const idle = await other.pool.acquire('task-b');
    const idlePid = idle.pid!;
    idle.release();
    await eventually(() => gone(idlePid), 10_000, 'the idle silent worker to be killed');
    expect(q.lost()).toBeNull();
    expect(p.status().workers[0]?.state).toBe('busy');
    // One check outstanding at a time: none other was sent while the busy worker's answer is due.
    expect(checks()).toBe(first);
  });

  it('past the busy limit a silent busy worker is killed; an idle one past the idle limit', async () => {
    const busy = pool({ busyHealthAnswerMs: 400 });
    const lease = await busy.pool.acquire('task-a');
    const pid = lease.pid!;
    const q = hang(lease);
    await eventually(() => q.lost() !== null, 10_000, 'the busy worker to be killed');
    expect(q.lost()).toMatch(/did not answer a health check, or send anything, within 400 ms/);
    await eventually(() => gone(pid), 10_000, 'its process to be gone');

    const idle = pool({ busyHealthAnswerMs: 600_000 });
    const l2 = await idle.pool.acquire('task-b');
    const idlePid = l2.pid!;
    l2.release();
    await eventually(() => gone(idlePid), 10_000, 'the idle silent worker to be killed');
    expect(idle.pool.status().stats.crashed).toBe(1);
  });
});
