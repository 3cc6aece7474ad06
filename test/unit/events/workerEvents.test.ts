import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type BusDelivery, type BusEventOf } from '../../../src/core/events/eventBus';
import { bridgeWorkerEvents } from '../../../src/core/events/workerEvents';
import { WorkerPool, type PoolLease } from '../../../src/core/workers/pool';
import { eventually, fakeWorker, runOn } from '../workers/fakeWorker';

/**
 * The worker pool's announcements on the event bus, with a real pool of real worker processes
 * (the fake worker fixture): a queued bus subscriber sees each worker become ready, busy, idle,
 * crash and stop, in that order, with its pid and task.
 */
const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).filter((p) => p.status().state !== 'stopped').map((p) => p.shutdown()));
});

function run(lease: PoolLease, queryId: string, taskId: string, text: string): Promise<string> {
  return runOn(lease.handle, queryId, taskId, text).done.then((kinds) => kinds.at(-1)!);
}

type WorkerEvent = BusEventOf<'WorkerStateChanged'>;

describe('worker events on the bus (real worker processes)', () => {
  it('each worker goes ready → busy → idle → busy → crashed → stopped on a queued subscriber, with its pid and task; a fresh one stops at shutdown', async () => {
    const bus = new EventBus();
    const pool = new WorkerPool({ command: fakeWorker(), max: 1, shutdownGraceMs: 2000, healthIntervalMs: 600_000 });
    pools.push(pool);
    const seen: BusDelivery[] = [];
    bus.subscribe((d) => void seen.push(d), { name: 'test' });
    const stop = bridgeWorkerEvents(bus, pool);
    const workerEvents = () => seen.filter((d): d is WorkerEvent => d.kind === 'WorkerStateChanged');

    const a = await pool.acquire('task-a');
    expect(await run(a, 'q1', 'task-a', 'hello')).toBe('complete');
    const again = await pool.acquire('task-a');
    expect(again.workerId).toBe(a.workerId);
    expect(await run(again, 'q2', 'task-a', 'crash')).toMatch(/^lost/);
    await eventually(() => workerEvents().some((e) => e.state === 'stopped'), 10_000, 'the crashed worker to stop');
    await bus.drained();
    const pidA = a.pid!;
    expect(workerEvents().map((e) => [e.workerId, e.state, e.workerPid, e.taskId])).toEqual([
      // Started for task-a: bound to it from the start.
      [a.workerId, 'ready', pidA, 'task-a'],
      [a.workerId, 'busy', pidA, 'task-a'],
      [a.workerId, 'idle', pidA, 'task-a'],
      [a.workerId, 'busy', pidA, 'task-a'],
      [a.workerId, 'crashed', pidA, 'task-a'],
      // Gone from the pool's status by now: its pid and task are the ones the bridge remembered.
      [a.workerId, 'stopped', pidA, 'task-a'],
    ]);
    const [, busy1, idle, busy2, crashed] = workerEvents();
    expect(busy1).toMatchObject({ queryId: 'q1' });
    expect(idle).toMatchObject({ queriesProcessed: 1 });
    expect(busy2).toMatchObject({ queryId: 'q2' });
    expect(crashed).toMatchObject({ queryId: 'q2', reason: expect.stringMatching(/SIGKILL/) });

    // A fresh worker for the next query; the pool's shutdown stops it, and the bus says why.
    const b = await pool.acquire('task-b');
    expect(b.pid).not.toBe(pidA);
    await pool.shutdown();
    await bus.drained();
    const last = workerEvents().slice(6);
    expect(last.map((e) => [e.workerId, e.state, e.workerPid, e.taskId])).toEqual([
      [b.workerId, 'ready', b.pid, 'task-b'],
      [b.workerId, 'stopped', b.pid, 'task-b'],
    ]);
    expect(last[1]!.reason).toBeTruthy();
    // Numbered by the bus in the order the pool acted on them.
    const seqs = workerEvents().map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    stop();
  });
});
