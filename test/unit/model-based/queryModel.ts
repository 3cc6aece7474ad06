import type { AnyMachineSnapshot, InspectionEvent } from 'xstate';
import { createActor, toPromise } from 'xstate';
import { queryMachine, type TurnResult } from '../../../src/core/machines/query/query.machine';
import type { TurnOutput } from '../../../src/core/machines/turn/types';
import { denyingAsker } from '../../../src/core/permissions/gate';
import { WorkerPool, type PoolLease } from '../../../src/core/workers/pool';
import { remoteTurn } from '../../../src/core/workers/remoteTurn';
import { fakeWorker, MISSING_WORKER, queryParts, turnInput, waitForSnapshot } from '../workers/fakeWorker';
import type { CoverageRecorder } from './coverage';
import { dedupe, doneEvent, errorEvent, invokeIds, transitionPaths, type ModelEvent, type ModelPath } from './paths';

/**
 * The query machine's model, replayed through a real WorkerPool of fake-worker processes and the
 * real `acquire` / `execute` actors (remoteTurn): a granted lease is a worker becoming ready, a
 * failed one a pool whose workers cannot start, a CANCEL while pending a pool of one worker held
 * by another task; the worker's replies (events, complete, error) come from the process, steered by
 * the query's text; WORKER_LOST is the worker killing itself, or being killed after ignoring a
 * cancel for the grace period.
 */
// As a worker reports it: the conversation (one user message) is the host's own fold.
const OUTPUT: TurnResult = { status: 'done', stopReason: 'end_turn', messageCount: 1, error: null, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, compactionFailures: 0 };

export function queryPaths(): ModelPath[] {
  return transitionPaths(queryMachine, {
    input: turnInput('t1', 'x'),
    events: (s: AnyMachineSnapshot) => {
      if (s.value === 'pending') return [...invokeIds(s).flatMap((id) => [doneEvent(id, { workerId: 'w1', pid: 1 }, 'granted'), errorEvent(id, new Error('no worker'))]), { type: 'CANCEL' }];
      const evs: ModelEvent[] = [
        { type: 'QUERY_COMPLETE', output: OUTPUT, tag: 'done' },
        { type: 'QUERY_COMPLETE', output: { ...OUTPUT, status: 'error', error: { code: 'cancelled', message: 'c', retryable: false } }, tag: 'cancelled' },
        { type: 'QUERY_COMPLETE', output: { ...OUTPUT, messageCount: 999 }, tag: 'differs' },
        { type: 'QUERY_FAILED', error: { code: 'internal', message: 'x', retryable: false } },
        { type: 'WORKER_LOST', reason: 'x' },
      ];
      if (!s.context.cancelRequested) evs.push({ type: 'CANCEL' });
      if (s.value === 'processing') evs.push({ type: 'WORKER_EVENT', event: { type: 'text', taskId: 't1', delta: 'x' } });
      return evs;
    },
    context: (s) => s.context.cancelRequested,
  }).filter((p) => ['"complete"', '"error"', '"cancelled"', '"rejected"'].includes(JSON.stringify(p.values.at(-1))));
}

/** The query's text (what the fake worker will do, see its header) from the path's events. */
function textFor(events: ModelEvent[]): string {
  const last = events.at(-1)!;
  const iCancel = events.findIndex((e) => e.type === 'CANCEL');
  const iEvent = events.findIndex((e) => e.type === 'WORKER_EVENT');
  const cancelled = iCancel >= 0;
  let cmd = 'hello';
  if (last.type === 'QUERY_COMPLETE' && last.tag === 'cancelled') cmd = cancelled ? 'cancelled' : 'hang';
  if (last.type === 'QUERY_COMPLETE' && last.tag === 'differs') cmd = 'miscount';
  if (last.type === 'QUERY_FAILED') cmd = 'refuse';
  if (last.type === 'WORKER_LOST') cmd = cancelled ? 'deaf' : 'crash';
  const mods: string[] = [];
  if (iEvent < 0) mods.push('quiet');
  if (cancelled) mods.push(iEvent < 0 || iCancel < iEvent ? 'late' : 'hold');
  return [...mods, cmd].join(' ');
}

export interface QueryReplay {
  observed: string[];
  expected: string[];
  output: TurnOutput;
  published: string[];
}

export async function replayQuery(path: ModelPath, recorder: CoverageRecorder): Promise<QueryReplay> {
  const types = path.events.map((e) => e.type);
  const rejected = types.some((t) => t.startsWith('xstate.error.actor'));
  const blocked = types[0] === 'CANCEL';
  const deaf = path.events.at(-1)?.type === 'WORKER_LOST' && types.includes('CANCEL');
  const pool = new WorkerPool({ command: rejected ? MISSING_WORKER : fakeWorker(), max: 1, spawnRetries: 0, shutdownGraceMs: deaf ? 400 : 10_000, healthIntervalMs: 600_000 });
  let blocker: PoolLease | null = null;
  const published: string[] = [];
  try {
    // A pool of one, its worker held by another task: this query can only wait.
    if (blocked) blocker = await pool.acquire('other-task');
    const machine = remoteTurn({ pool, queryParts, host: { asker: denyingAsker, publish: (e) => published.push(e.type) } });
    const actor = createActor(machine, { input: turnInput('t1', textFor(path.events)), inspect: (e: InspectionEvent) => recorder.inspect(e) });
    const observed: string[] = [];
    actor.subscribe((s) => {
      const v = JSON.stringify(s.value);
      if (observed.at(-1) !== v) observed.push(v);
    });
    actor.start();
    for (let i = 0; i < path.events.length; i++) {
      const e = path.events[i]!;
      const from = JSON.parse(JSON.stringify(path.values[i])) as string;
      const cancelNow = e.type === 'CANCEL' || (e.type === 'QUERY_COMPLETE' && e.tag === 'cancelled' && !types.includes('CANCEL'));
      // Only a step the test performs waits for its state; the others come from the worker.
      if (!cancelNow) continue;
      await waitForSnapshot(actor, (s) => s.value === from, 20_000, from);
      actor.send({ type: 'CANCEL' });
    }
    const output = await toPromise(actor);
    return { observed, expected: dedupe(path.values), output, published };
  } finally {
    blocker?.release();
    await pool.shutdown();
  }
}
