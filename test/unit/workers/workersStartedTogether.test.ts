import { afterEach, describe, expect, it } from 'vitest';
import { WorkerPool, type PoolLease } from '../../../src/core/workers/pool';
import type { WorkerHandle } from '../../../src/core/workers/workerHandle';
import { eventually, fakeWorker, gone, runOn, type QueryRun } from './fakeWorker';

/**
 * Workers started together, with real processes (the fake worker). All worker handles of a host
 * share one worker machine and one ipcConnection machine (provided once per process, each actor
 * finding its own process and socket: actorWiring.ts), and a pool asked for several workers at
 * once creates their handles over several turns. What a user relies on stays: each task's worker
 * is its own process, its replies reach only its own query, one worker's death touches no other,
 * and a pool stopped before it has created every worker still stops them all.
 */
const pools: WorkerPool[] = [];
function pool(max: number): WorkerPool {
  const p = new WorkerPool({ command: fakeWorker(), max, shutdownGraceMs: 2000, healthIntervalMs: 600_000 });
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
});

/** Runs `text` as one query on the lease, recording what came for it and whether it was lost. */
function run(lease: PoolLease, queryId: string, taskId: string, text: string): QueryRun {
  return runOn(lease.handle, queryId, taskId, text);
}

/** The text of the last assistant message a completed query sent. */
function answer(r: QueryRun): string {
  if (!r.replies.includes('complete')) return '';
  // The conversation comes as `message` events (the answer does not repeat it).
  const messages = r.events.flatMap((e) => (e.type === 'message' && e.message.role === 'assistant' ? [e.message] : []));
  const block = messages.at(-1)?.content.find((b) => b.type === 'text');
  return block && block.type === 'text' ? block.text : '';
}

describe('workers started together', () => {
  it('each task gets its own worker process, its own replies only, and a killed worker loses only its own query', async () => {
    const p = pool(3);
    const tasks = ['task-a', 'task-b', 'task-c'];
    // Asked in one turn: the pool decides three workers at once.
    const leases = await Promise.all(tasks.map((t) => p.acquire(t)));
    const pids = leases.map((l) => l.pid);
    expect(new Set(pids).size).toBe(3);
    for (const l of leases) {
      expect(l.pid).not.toBeNull();
      // The pid the handle saw spawned is the one its own worker announced in `ready`.
      expect(l.handle.pid).toBe(l.pid);
      expect(p.status().workers.find((w) => w.id === l.workerId)?.pid).toBe(l.pid);
    }
    // Each worker streams a first event, then waits for a cancel before it answers.
    const runs = leases.map((l, i) => run(l, `q-${tasks[i]}`, tasks[i]!, `hold answer for ${tasks[i]}`));
    await eventually(() => runs.every((r) => r.replies.length > 0), 20_000, 'every query to stream');
    process.kill(leases[1]!.pid!, 'SIGKILL');
    await runs[1]!.done;
    expect(runs[1]!.lost).toMatch(/SIGKILL/);
    await eventually(() => gone(pids[1]!), 10_000, 'the killed worker to be gone');
    expect(runs[0]!.lost).toBeNull();
    expect(runs[2]!.lost).toBeNull();
    leases[0]!.handle.cancelQuery('q-task-a');
    leases[2]!.handle.cancelQuery('q-task-c');
    await Promise.all([runs[0]!.done, runs[2]!.done]);
    expect(answer(runs[0]!)).toBe('echo: answer for task-a');
    expect(answer(runs[2]!)).toBe('echo: answer for task-c');
    // Each query got only its own worker's messages (one for another query would have broken the connection).
    for (const r of runs) expect(r.events.every((e) => e.taskId === r.events[0]?.taskId)).toBe(true);
    expect(runs.map((r) => r.events[0]?.taskId)).toEqual(tasks);
    expect(p.status().workers.map((w) => [w.pid, w.state]).sort()).toEqual(
      [
        [pids[0], 'ready'],
        [pids[2], 'ready'],
      ].sort(),
    );
    expect(p.status().stats.crashed).toBe(1);
  });

  it('a pool shut down in the turn it was asked for four workers stops every one of them', async () => {
    const p = pool(4);
    const pending = ['a', 'b', 'c', 'd'].map((t) =>
      p.acquire(`task-${t}`).then(
        (lease) => `granted ${lease.workerId}`,
        (err: Error) => err.message,
      ),
    );
    const stopped = new Set<string>();
    const handles = new Map<string, WorkerHandle>();
    p.onWorkerEvent((e) => {
      if (e.type === 'worker:stopped') stopped.add(e.workerId);
    });
    p.onChange(() => {
      for (const w of p.status().workers) {
        const h = p.handle(w.id);
        if (h) handles.set(w.id, h);
      }
    });
    await Promise.resolve();
    await p.shutdown();
    expect(p.status().state).toBe('stopped');
    expect(p.status().workers).toEqual([]);
    // No task was given a worker, and every worker the pool had decided on was stopped.
    for (const outcome of await Promise.all(pending)) expect(outcome).not.toMatch(/^granted/);
    expect(stopped.size).toBe(4);
    for (const h of handles.values()) await eventually(() => gone(h.pid), 10_000, `worker ${h.id}'s process to be gone`);
  });
});
