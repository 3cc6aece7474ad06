import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, type EventObject } from 'xstate';
import type { TaskEvent, TaskStatus } from '../../../src/shared/domain/events';
import { ZERO_USAGE } from '../../../src/shared/domain/messages';
import { queryMachine, type QueryEvent, type QueryInput, type WorkerLease } from '../../../src/core/machines/query/query.machine';
import { taskMachine, type RunStartInput } from '../../../src/core/machines/task/task.machine';

/**
 * The task machine holds a task's whole lifecycle (issue 25 item 2): the owner's interrupt, a
 * worker's death, a failed record and a settled run's finishing are its events and states, not
 * flags and made-up events of the object that runs it. The turn loop, the run's phases and the
 * record are stood in for here (their interfaces: the machine's actors and actions); the CLI's
 * signals, workerFaults and recordFailure tests drive the same paths for real.
 */
type Marker = { type: 'phasesStopped' } | { type: 'released' };

/** How the run's turn loop (a query on a stand-in worker) ends: answered, its worker died, or not at all. */
type Turn = 'complete' | 'lost' | 'hang';

function lifecycle(opts: { turn?: Turn } = {}) {
  const seen: (TaskEvent | Marker)[] = [];
  let finish!: () => void;
  const finishing: TaskStatus[] = [];
  const worker = queryMachine.provide({
    actors: {
      acquire: fromPromise<WorkerLease, { queryId: string; taskId: string }>(async () => ({ workerId: 'w1', pid: null })),
      execute: fromCallback<EventObject, { queryId: string; lease: WorkerLease; input: QueryInput }>(({ sendBack }) => {
        if (opts.turn === 'lost') sendBack({ type: 'WORKER_LOST', reason: 'it was killed' } satisfies QueryEvent);
        if (opts.turn === 'complete') {
          const output = { status: 'done' as const, stopReason: 'end_turn' as const, error: null, usage: ZERO_USAGE, costUsd: 0, compactionFailures: 0, messageCount: 1 };
          sendBack({ type: 'QUERY_COMPLETE', output } satisfies QueryEvent);
        }
      }),
    },
  });
  const machine = taskMachine.provide({
    actors: {
      initialize: fromPromise<void, RunStartInput>(async () => undefined),
      workerTurn: worker,
      finishRun: fromPromise<void, { status: TaskStatus }>(({ input }) => {
        finishing.push(input.status);
        return new Promise<void>((resolve) => (finish = resolve));
      }),
    },
    actions: {
      publish: (_, e) => void (e && seen.push(e)),
      stopPhases: () => void seen.push({ type: 'phasesStopped' }),
      release: () => void seen.push({ type: 'released' }),
    },
  });
  const actor = createActor(machine, {
    input: { taskId: 't', title: 't', model: 'm', mode: 'default', limits: { maxTurns: 5, maxTokens: 100, contextLimit: 1e9, retryLimit: 0, retryBaseMs: 1, lockTimeoutMs: 0 }, runner: 'worker' },
  });
  actor.start();
  const kinds = () => seen.map((e) => ('state' in e ? `${e.type}:${e.state}` : 'status' in e ? `done:${e.status}` : 'code' in e ? `error:${e.code}` : e.type));
  return { actor, seen, kinds, finishing, finish: () => finish() };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('the task machine holds the lifecycle', () => {
  it('a settled run’s done waits until its phases and its record are over (finishing), and stays its last event', async () => {
    const t = lifecycle({ turn: 'complete' });
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    expect(t.actor.getSnapshot().matches({ completed: 'finishing' })).toBe(true);
    expect(t.finishing).toEqual(['completed']);
    expect(t.kinds().filter((k) => k.startsWith('done'))).toEqual([]);
    expect(t.actor.getSnapshot().context.lastDone).toBeNull();
    t.finish();
    await tick();
    expect(t.actor.getSnapshot().matches({ completed: 'settled' })).toBe(true);
    expect(t.kinds().at(-1)).toBe('done:completed');
    expect(t.actor.getSnapshot().context.lastDone).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('a new message while the last run finishes publishes that run’s done before the next run starts', async () => {
    const t = lifecycle({ turn: 'complete' });
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    t.actor.send({ type: 'USER_MESSAGE', text: 'more' });
    const k = t.kinds();
    expect(k.slice(k.indexOf('done:completed'))).toEqual(['done:completed', 'task:initializing']);
    expect(k.filter((x) => x === 'done:completed')).toHaveLength(1);
  });

  it('closing a task while its run finishes publishes its done; a cancel then cuts its phases short', async () => {
    const t = lifecycle({ turn: 'complete' });
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    t.actor.send({ type: 'CANCEL' });
    expect(t.kinds().at(-1)).toBe('phasesStopped');
    t.actor.send({ type: 'CLOSE' });
    expect(t.kinds().at(-1)).toBe('done:completed');
  });

  it('INTERRUPT in a running state: the phases end first, then interrupted (resumable), no done; a settled task ignores it', async () => {
    const t = lifecycle();
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    expect(t.actor.getSnapshot().hasTag('running')).toBe(true);
    t.actor.send({ type: 'INTERRUPT' });
    expect(t.kinds().slice(-2)).toEqual(['phasesStopped', 'task:interrupted']);
    expect(t.seen.at(-1)).toMatchObject({ tags: ['settled', 'interrupted'] });
    expect(t.kinds().some((k) => k.startsWith('done') || k === 'released')).toBe(false);
    const settled = lifecycle({ turn: 'complete' });
    settled.actor.send({ type: 'START', text: 'hi' });
    await tick();
    settled.finish();
    await tick();
    const before = settled.kinds().length;
    settled.actor.send({ type: 'INTERRUPT' });
    expect(settled.actor.getSnapshot().matches({ completed: 'settled' })).toBe(true);
    expect(settled.kinds()).toHaveLength(before);
  });

  it('a worker that died under the turn loop: phases end, the reason is told, interrupted, done interrupted, and the task is let go', async () => {
    const t = lifecycle({ turn: 'lost' });
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    expect(t.actor.getSnapshot().value).toBe('interrupted');
    expect(t.kinds().slice(-5)).toEqual(['phasesStopped', 'error:worker_lost', 'task:interrupted', 'done:interrupted', 'released']);
    expect(t.finishing).toEqual([]);
    expect(t.seen.find((e) => e.type === 'error')).toMatchObject({ code: 'worker_lost', retryable: true });
    // Resumable: RESUME rebuilds it from its log.
    t.actor.send({ type: 'RESUME', note: 'go on' });
    expect(t.actor.getSnapshot().value).toBe('reconstructing');
  });

  it('a record that fails during a run ends it failed (phases first, done last) and lets the task go; after the run, it is only told', async () => {
    const t = lifecycle();
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    t.actor.send({ type: 'RECORD_FAILED', failure: 'the disk is full' });
    expect(t.actor.getSnapshot().value).toBe('failed');
    expect(t.kinds().slice(-5)).toEqual(['phasesStopped', 'error:record_failed', 'task:failed', 'done:failed', 'released']);
    expect(t.seen.find((e) => e.type === 'error')).toMatchObject({ message: 'The disk is full. The run was stopped; what was saved before that is kept.' });

    // While finishing: the held done is never published as completed.
    const finishingRun = lifecycle({ turn: 'complete' });
    finishingRun.actor.send({ type: 'START', text: 'hi' });
    await tick();
    finishingRun.actor.send({ type: 'RECORD_FAILED', failure: 'the disk is full' });
    expect(finishingRun.kinds().filter((k) => k.startsWith('done'))).toEqual(['done:failed']);

    const after = lifecycle({ turn: 'complete' });
    after.actor.send({ type: 'START', text: 'hi' });
    await tick();
    after.finish();
    await tick();
    after.actor.send({ type: 'RECORD_FAILED', failure: 'the disk is full' });
    expect(after.actor.getSnapshot().matches({ completed: 'settled' })).toBe(true);
    expect(after.kinds().slice(-1)).toEqual(['error:record_failed']);
    expect(after.seen.at(-1)).toMatchObject({ message: 'The disk is full. The run had ended, but its record is incomplete.' });
  });
});
