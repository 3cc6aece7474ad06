import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { describeAll, describeMachine } from '../../../src/core/machines/catalog';
import { runPhasesMachine, type GatekeeperVerdict, type RunnerInfo, type RunPhasesEvent } from '../../../src/core/machines/runPhases/runPhases.machine';
import type { ProjectMemory } from '../../../src/core/memory/projectMemory';
import type { KeelError } from '../../../src/shared/domain/errors';
import type { ModelProvider } from '../../../src/core/providers/types';
import { preparedRun, wireRunPhases } from '../../../src/core/runtime/runPhases';
import { MEMORY_OFF } from '../../../src/core/memory/settings';
import { SecretKeeper } from '../../../src/core/security/secretKeeper';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';
import { LockManager } from '../../../src/core/locks/lockManager';
import { ScenarioProvider } from '../helpers/scenarioProvider';

/**
 * Model-based tests of the runPhases machine: random event sequences against a model of what a
 * run may do, a failure injected in every phase, and the catalog's view of it.
 */
type Step = 'setup' | 'search' | 'runner' | 'gatekeeper' | 'persist';

interface Wiring {
  fail?: Step;
  verdict?: GatekeeperVerdict;
}

const saved: GatekeeperVerdict = { decision: 'saved', rule: 'accepted', reasons: ['ok'], lesson: { title: 'T', body: 'B', tags: [] } };
const skipped: GatekeeperVerdict = { decision: 'skipped', rule: 'lesson-found', reasons: ['none'] };

function start(w: Wiring) {
  const published: Extract<TaskEvent, { type: 'phase' }>[] = [];
  const act = <T, I = { taskId: string; run: number }>(step: Step, value: T) =>
    fromPromise<T, I>(async () => {
      if (w.fail === step) throw new Error(`${step} broke`);
      return value;
    });
  const machine = runPhasesMachine.provide({
    actors: {
      loadRunSetup: act('setup', { instructionFiles: ['KEEL.md'] }),
      searchMemory: act('search', { hits: [{ file: 'a.md', title: 'A', score: 9 }], tokens: 10 }),
      acquireRunner: act<RunnerInfo, { taskId: string; run: number; runner: 'local' | 'worker' }>('runner', { pid: 4242 }),
      evaluateGatekeeper: act('gatekeeper', w.verdict ?? skipped),
      persistMemory: act<string, { taskId: string; run: number; lesson: NonNullable<GatekeeperVerdict['lesson']>; memory: ProjectMemory | null }>('persist', 'a-2.md'),
    },
    actions: { publish: (_, e) => void (e && e.type === 'phase' && published.push(e)) },
  });
  const actor = createActor(machine, { input: { taskId: 't1', run: 1 } });
  actor.start();
  actor.send({ type: 'START' });
  return { actor, published };
}

/** Lets the invoked promises settle. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

describe('runPhases: a failure in each phase ends in failed with the phase recorded', () => {
  const invoked: [Step, string][] = [
    ['setup', 'initializing'],
    ['search', 'memorySearch'],
    ['runner', 'runnerStarting'],
    ['gatekeeper', 'gatekeeperEvaluating'],
    ['persist', 'memoryPersisting'],
  ];
  it.each(invoked)('%s fails → failed in %s', async (step, phase) => {
    const { actor, published } = start({ fail: step, verdict: saved });
    await settle();
    actor.send({ type: 'RUN_ENDED', status: 'completed' });
    await settle();
    const snap = actor.getSnapshot();
    expect(snap.value).toBe('failed');
    expect(snap.context.failure).toEqual({ phase, message: `${step} broke` });
    expect(published.at(-1)).toMatchObject({ phase: 'failed', previous: phase, failure: `${phase}: ${step} broke` });
  });

  it.each(['runnerRunning', 'processingToolEvents'] as const)('the run fails while %s → failed in it', async (phase) => {
    const { actor } = start({});
    await settle();
    if (phase === 'processingToolEvents') actor.send({ type: 'TOOL_EVENT' });
    actor.send({ type: 'RUN_ENDED', status: 'failed', message: 'overloaded' });
    expect(actor.getSnapshot().value).toBe('failed');
    expect(actor.getSnapshot().context.failure).toEqual({ phase, message: 'overloaded' });
    expect(actor.getSnapshot().context.outcome).toBe('failed');
  });

  it('ABORT from any phase fails it there', async () => {
    const { actor } = start({ verdict: saved });
    expect(actor.getSnapshot().value).toBe('initializing');
    actor.send({ type: 'ABORT', message: 'stopped' });
    expect(actor.getSnapshot().context.failure).toEqual({ phase: 'initializing', message: 'stopped' });
  });
});

describe('runPhases: random runs against the model', () => {
  const event = fc.oneof(
    fc.constant<RunPhasesEvent>({ type: 'TOOL_EVENT' }),
    fc.constant<RunPhasesEvent>({ type: 'TOOL_EVENTS_DONE' }),
    fc.integer({ min: 0, max: 500 }).map<RunPhasesEvent>((tokens) => ({ type: 'USAGE', tokens })),
    fc.constantFrom<RunPhasesEvent['type']>('RUN_ENDED').chain(() => fc.constantFrom('completed', 'failed', 'aborted', 'interrupted').map<RunPhasesEvent>((status) => ({ type: 'RUN_ENDED', status }))),
    fc.constant<RunPhasesEvent>({ type: 'ABORT', message: 'stop' }),
  );

  it('phases follow the catalog, are published in order, and end where the model says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 25 }), fc.constantFrom<GatekeeperVerdict>(saved, skipped), async (events, verdict) => {
        const { actor, published } = start({ verdict });
        await settle();
        // The model: tool events counted while the runner runs; the first RUN_ENDED or ABORT decides.
        let tools = 0;
        let tokens = 0;
        let end: 'completed' | 'failed' | null = null;
        let inTools = false;
        for (const e of events) {
          actor.send(e);
          if (e.type === 'USAGE') tokens += e.tokens;
          if (end) continue;
          if (e.type === 'TOOL_EVENT') [tools, inTools] = [tools + 1, true];
          if (e.type === 'TOOL_EVENTS_DONE') inTools = false;
          if (e.type === 'ABORT') end = 'failed';
          if (e.type === 'RUN_ENDED') end = e.status === 'completed' ? 'completed' : 'failed';
          await settle();
        }
        await settle();
        const snap = actor.getSnapshot();
        const expected = end ?? (inTools ? 'processingToolEvents' : 'runnerRunning');
        // A completed run may still be failed afterwards by an ABORT sent before the gatekeeper finished.
        if (end === 'completed') expect(['completed', 'failed']).toContain(snap.value);
        else expect(snap.value).toBe(expected);
        if (snap.value === 'completed') expect(snap.context.savedFile).toBe(verdict.decision === 'saved' ? 'a-2.md' : null);
        expect(snap.context.toolEventsCount).toBe(tools);
        if (snap.status === 'active') expect(snap.context.metrics.tokens).toBe(tokens);
        // Every published change starts where the previous one ended, along a catalog transition.
        const catalog = describeMachine(runPhasesMachine);
        let at = 'idle';
        for (const p of published) {
          expect(p.previous).toBe(at);
          expect(p.ms).toBeGreaterThanOrEqual(0);
          const allowed = catalog.transitions.some((t) => (t.from === at || t.from === '(root)') && t.to === p.phase);
          expect(allowed, `${at} → ${p.phase}`).toBe(true);
          at = p.phase;
        }
        expect(at).toBe(snap.value);
        // What a view shows of the run's start: it went through the runner to running, in order.
        expect(published.slice(0, 4).map((p) => p.phase)).toEqual(['initializing', 'memorySearch', 'runnerStarting', 'runnerRunning']);
        expect(snap.context.memoryHits.map((h) => h.file)).toEqual(['a.md']);
      }),
      { numRuns: 150 },
    );
  });
});

describe('runPhases in the catalog', () => {
  it('has the states of the design and failed reachable from every phase', () => {
    const d = describeMachine(runPhasesMachine);
    expect(d.states).toEqual(['idle', 'initializing', 'memorySearch', 'runnerStarting', 'runnerRunning', 'processingToolEvents', 'gatekeeperEvaluating', 'memoryPersisting', 'completed', 'failed']);
    expect(d.transitions).toContainEqual(expect.objectContaining({ from: '(root)', to: 'failed', event: 'ABORT' }));
    // `keel machines --json` prints it with the others.
    expect(describeAll().machines.map((m) => m.id)).toContain('runPhases');
  });
});

describe('the runtime’s run phases (wireRunPhases): the runner is where the turn loop runs', () => {
  const wired = (provider: ModelProvider | KeelError) =>
    wireRunPhases({
      taskId: 't1',
      workspace: '/nonexistent-workspace',
      instructions: false,
      subtask: false,
      memory: () => null,
      settings: () => MEMORY_OFF,
      secrets: new SecretKeeper(),
      trust: NOTHING_APPROVED,
      locks: new LockManager(),
      createProvider: async () => provider,
      providerKind: () => 'scripted',
      model: () => 'm',
      conversation: () => [],
      publish: () => undefined,
      charge: () => undefined,
      log: () => undefined,
    });

  it.each([
    ['local', process.pid],
    ['worker', null],
  ] as const)('a run %s: the runner’s pid is %s as the runner starts; the task machine’s RUNNER names the worker', async (runner, pid) => {
    const provider = new ScenarioProvider([]);
    const actor = createActor(wired(provider), { input: { taskId: 't1', run: 1, prompt: 'hi', runner } });
    actor.start();
    actor.send({ type: 'START' });
    // What the run's turn loop gets is read from the phases' own context.
    await expect(preparedRun(actor)).resolves.toEqual({ provider, system: [] });
    expect(actor.getSnapshot().context.runnerPid).toBe(pid);
    actor.send({ type: 'RUNNER', pid: 4321 });
    expect(actor.getSnapshot().context.runnerPid).toBe(4321);
    actor.stop();
  });

  it('a provider that cannot be made fails the run in initializing, and the run’s start rejects with its KeelError', async () => {
    const noKey: KeelError = { code: 'no_api_key', message: 'No Anthropic API key is set.', retryable: true };
    const actor = createActor(wired(noKey), { input: { taskId: 't1', run: 1, prompt: 'hi' } });
    actor.start();
    actor.send({ type: 'START' });
    await expect(preparedRun(actor)).rejects.toEqual(noKey);
    expect(actor.getSnapshot().context.failure).toEqual({ phase: 'initializing', message: 'No Anthropic API key is set.' });
  });
});
