import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor, type ActorRefFrom, type EventObject } from 'xstate';
import type { TaskEvent, TaskStatus } from '../../../src/shared/domain/events';
import { ZERO_USAGE } from '../../../src/shared/domain/messages';
import { queryMachine, type QueryEvent, type QueryInput, type WorkerLease } from '../../../src/core/machines/query/query.machine';
import { RUN_PHASES_ID, taskMachine, type RunStartInput } from '../../../src/core/machines/task/task.machine';
import { runPhasesMachine, type GatekeeperVerdict, type RunResources } from '../../../src/core/machines/runPhases/runPhases.machine';

/**
 * The task machine holds a task's whole lifecycle (issue 25 item 2): the owner's interrupt, a
 * worker's death, a failed record and a settled run's finishing are its events and states, not
 * flags and made-up events of the object that runs it. The turn loop, the run's phases and the
 * record are stood in for here (their interfaces: the machine's actors and actions); the CLI's
 * signals, workerFaults and recordFailure tests drive the same paths for real.
 */
type Marker = { type: 'phasesStopped' } | { type: 'released' };

/**
 * How the run's turn loop (a query on a stand-in worker) ends: answered, its worker died, or not
 * at all (`tools`: not at all, after a tool call, its result and a model call's tokens).
 */
type Turn = 'complete' | 'lost' | 'hang' | 'tools';

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

/**
 * The run's phases are the task machine's child (`runPhases`): spawned as a run starts, fed the
 * run's tool and usage events by the machine as its turn loop (here the query machine, relaying a
 * stand-in worker's events) tells it of them, told how the run ended, and stopped by the
 * machine's own transitions — the machine's real actions here, only the phases' I/O (provider,
 * memory, gatekeeper) and the worker stood in. Nothing outside the machine sends it RUN_EVENT.
 */
function withPhases(opts: { turn: Turn; gatekeeper?: 'hang' }) {
  const seen: TaskEvent[] = [];
  const worker = queryMachine.provide({
    actors: {
      acquire: fromPromise<WorkerLease, { queryId: string; taskId: string }>(async () => ({ workerId: 'w1', pid: 4321 })),
      execute: fromCallback<EventObject, { queryId: string; lease: WorkerLease; input: QueryInput }>(({ sendBack }) => {
        if (opts.turn === 'tools') {
          for (const event of WORKER_TOOL_ROUND) sendBack({ type: 'WORKER_EVENT', event } satisfies QueryEvent);
        }
        if (opts.turn === 'lost') sendBack({ type: 'WORKER_LOST', reason: 'it was killed' } satisfies QueryEvent);
        if (opts.turn === 'complete') {
          const output = { status: 'done' as const, stopReason: 'end_turn' as const, error: null, usage: ZERO_USAGE, costUsd: 0, compactionFailures: 0, messageCount: 1 };
          sendBack({ type: 'QUERY_COMPLETE', output } satisfies QueryEvent);
        }
      }),
    },
    // The worker's events reach the task's log from the query (as remoteTurn publishes them).
    actions: { publish: (_, e) => void (e && seen.push(e)) },
  });
  const phases = runPhasesMachine.provide({
    actors: {
      evaluateGatekeeper: fromPromise<GatekeeperVerdict, { taskId: string; run: number; toolSummaries: string[]; fromMessage: number; resources: RunResources | null }>(({ input }) =>
        opts.gatekeeper === 'hang' ? new Promise(() => undefined) : Promise.resolve({ decision: 'skipped', rule: 'test', reasons: input.toolSummaries }),
      ),
    },
    actions: { publish: (_, e) => void (e && seen.push(e)) },
  });
  const machine = taskMachine.provide({
    actors: {
      workerTurn: worker,
      runPhases: phases,
      // As the runtime's: waits for the run's phases (the child) to reach the runner.
      initialize: fromPromise<void, RunStartInput>(async ({ system }) => void (await waitFor(system.get(RUN_PHASES_ID), (p) => p.value === 'runnerRunning'))),
      // As the runtime's (runPhases.ts `finished`): waits for the phases the machine told how the run
      // ended; phases already over and let go (a final child leaves the system) are nothing to wait for.
      finishRun: fromPromise<void, { status: TaskStatus }>(async ({ system }) => {
        const phases = system.get(RUN_PHASES_ID);
        if (phases) await waitFor(phases, (p) => p.status !== 'active');
      }),
    },
    actions: { publish: (_, e) => void (e && seen.push(e)), release: () => undefined },
  });
  const actor = createActor(machine, {
    input: { taskId: 't', title: 't', model: 'm', mode: 'default', limits: { maxTurns: 5, maxTokens: 100, contextLimit: 1e9, retryLimit: 0, retryBaseMs: 1, lockTimeoutMs: 0 }, runner: 'worker' },
  });
  actor.start();
  const child = () => actor.getSnapshot().children.runPhases as ActorRefFrom<typeof runPhasesMachine> | undefined;
  const phaseNames = () => seen.flatMap((e) => (e.type === 'phase' ? [e.phase] : []));
  return { actor, seen, child, phaseNames };
}

/** What the stand-in worker's turn publishes for `tools`: a tool call, its result, the loop back at the model, a model call's tokens. */
const WORKER_TOOL_ROUND: TaskEvent[] = [
  { type: 'tool_call', taskId: 't', id: 'c1', name: 'Read', input: {} },
  { type: 'turn', taskId: 't', state: 'executingTool', turn: 1 },
  { type: 'tool_result', taskId: 't', id: 'c1', is_error: false, summary: 'read a.txt' },
  { type: 'turn', taskId: 't', state: 'checkingContext', turn: 1 },
  { type: 'usage', taskId: 't', inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, totalCostUsd: 0 },
];

describe('the run’s phases are the task machine’s child', () => {
  it('spawned as a run starts, held in the task’s snapshot, fed what its turn loop tells the machine (no one else sends it anything)', async () => {
    const t = withPhases({ turn: 'tools' });
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    expect(t.child()?.getSnapshot().context).toMatchObject({ run: 1, prompt: 'hi' });
    // The worker's events came through the query to the task machine, which fed its child: each
    // phase change right after the event that made it, in the log's order.
    const kinds = t.seen.map((e) => (e.type === 'phase' ? `phase:${e.phase}` : e.type === 'turn' ? `turn:${e.state}` : e.type));
    expect(kinds.slice(kinds.indexOf('tool_call'))).toEqual(['tool_call', 'phase:processingToolEvents', 'turn:executingTool', 'tool_result', 'phase:runnerRunning', 'turn:checkingContext', 'usage']);
    expect(t.child()?.getSnapshot().value).toBe('runnerRunning');
    expect(t.child()?.getSnapshot().context).toMatchObject({ toolEventsCount: 1, toolSummaries: ['read a.txt'], metrics: { tokens: 10 } });
  });

  it('on workers the run’s runner is the worker its query leased: its pid, not this process’s', async () => {
    const t = withPhases({ turn: 'hang' });
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    expect(t.actor.getSnapshot().hasTag('running')).toBe(true);
    expect(t.child()?.getSnapshot().context.runnerPid).toBe(4321);
  });

  it('a charge outside the turn loop (the lesson call while finishing) counts in the phases’ tokens', async () => {
    const t = withPhases({ turn: 'complete', gatekeeper: 'hang' });
    t.actor.send({ type: 'START', text: 'hi' });
    await waitFor(t.actor, (s) => s.matches({ completed: 'finishing' }));
    t.actor.send({ type: 'CHARGE', usage: { inputTokens: 40, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.01 });
    expect(t.child()?.getSnapshot().context.metrics.tokens).toBe(42);
  });

  it('a completed run’s phases go on to the gatekeeper with the run’s tool summaries; the next run gets phases of its own', async () => {
    const t = withPhases({ turn: 'complete' });
    t.actor.send({ type: 'START', text: 'hi' });
    await tick();
    await tick();
    expect(t.actor.getSnapshot().matches({ completed: 'settled' })).toBe(true);
    expect(t.phaseNames()).toEqual(['initializing', 'memorySearch', 'runnerStarting', 'runnerRunning', 'gatekeeperEvaluating', 'completed']);
    expect(t.seen.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
    t.actor.send({ type: 'USER_MESSAGE', text: 'more' });
    expect(t.child()?.getSnapshot().context).toMatchObject({ run: 2, prompt: 'more' });
  });

  it('INTERRUPT, a lost worker and a cancel while the gatekeeper works end the phases (failed) before the task’s next event', async () => {
    const interrupted = withPhases({ turn: 'hang' });
    interrupted.actor.send({ type: 'START', text: 'hi' });
    await tick();
    interrupted.actor.send({ type: 'INTERRUPT' });
    expect(interrupted.child()?.getSnapshot().value).toBe('failed');
    const kinds = interrupted.seen.map((e) => (e.type === 'phase' ? `phase:${e.phase}` : e.type === 'task' ? `task:${e.state}` : e.type));
    expect(kinds.slice(-2)).toEqual(['phase:failed', 'task:interrupted']);

    const lost = withPhases({ turn: 'lost' });
    lost.actor.send({ type: 'START', text: 'hi' });
    await tick();
    expect(lost.phaseNames().at(-1)).toBe('failed');
    expect(lost.seen.at(-1)).toMatchObject({ type: 'done', status: 'interrupted' });

    const cancelled = withPhases({ turn: 'complete', gatekeeper: 'hang' });
    cancelled.actor.send({ type: 'START', text: 'hi' });
    await waitFor(cancelled.actor, (s) => s.matches({ completed: 'finishing' }));
    expect(cancelled.phaseNames().at(-1)).toBe('gatekeeperEvaluating');
    cancelled.actor.send({ type: 'CANCEL' });
    await tick();
    expect(cancelled.phaseNames().slice(-2)).toEqual(['gatekeeperEvaluating', 'failed']);
    expect(cancelled.actor.getSnapshot().matches({ completed: 'settled' })).toBe(true);
    expect(cancelled.seen.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  });
});

describe('a command’s run is the task machine’s to hold (LiveTask keeps no copy of it)', () => {
  const command = { narrowing: { command: '/quick', rules: ['Read'] }, model: 'claude-haiku-4-5' };

  it('the run answering a command has its narrowing and its model until its done; then the task’s model is back', async () => {
    const t = lifecycle({ turn: 'complete' });
    t.actor.send({ type: 'START', text: 'hi', command });
    expect(t.actor.getSnapshot().context).toMatchObject({ runCommand: command, model: 'claude-haiku-4-5' });
    await tick();
    expect(t.actor.getSnapshot().matches({ completed: 'finishing' })).toBe(true);
    expect(t.actor.getSnapshot().context.model).toBe('claude-haiku-4-5');
    t.finish();
    await tick();
    expect(t.kinds().at(-1)).toBe('done:completed');
    expect(t.actor.getSnapshot().context).toMatchObject({ runCommand: undefined, model: 'm', modelAfterRun: null });
  });

  it('a model the person chose during the command’s run holds after it; a provider with one model keeps its own', async () => {
    const t = lifecycle({ turn: 'complete' });
    t.actor.send({ type: 'START', text: 'hi', command });
    t.actor.send({ type: 'SET_MODEL', model: 'claude-sonnet-4-5' });
    await tick();
    t.finish();
    await tick();
    expect(t.actor.getSnapshot().context.model).toBe('claude-sonnet-4-5');

    const demo = createActor(taskMachine.provide({ guards: { commandModelApplies: () => false } }), {
      input: { taskId: 't', title: 't', model: 'demo', mode: 'default', limits: { maxTurns: 5, maxTokens: 100, contextLimit: 1e9, retryLimit: 0, retryBaseMs: 1, lockTimeoutMs: 0 } },
    });
    demo.start();
    demo.send({ type: 'START', text: 'hi', command });
    expect(demo.getSnapshot().context).toMatchObject({ runCommand: command, model: 'demo' });
    demo.stop();
  });
});
