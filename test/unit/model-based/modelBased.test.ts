import { afterAll, describe, expect, it } from 'vitest';
import type { AnyStateMachine } from 'xstate';
import { callMachine } from '../../../src/core/machines/call/call.machine';
import { permissionMachine } from '../../../src/core/machines/permission/permission.machine';
import { streamMachine } from '../../../src/core/machines/stream/stream.machine';
import { taskMachine } from '../../../src/core/machines/task/task.machine';
import { turnMachine } from '../../../src/core/machines/turn/turn.machine';
import { callPaths, compileCall } from './callModel';
import { CoverageRecorder, formatCoverage } from './coverage';
import { compilePermission, PERMISSION_VARIANTS, permissionPaths } from './permissionModel';
import { replayStream, streamPaths } from './streamModel';
import { replay, type Recorders } from './system';
import { compileTask, taskOutputProblems, taskPaths } from './taskModel';
import { replayOnWorker, WORKER_RUNS } from './taskOnWorkerModel';
import { compileTurn, TURN_VARIANTS, turnPaths } from './turnModel';

/**
 * Model-based tests: paths generated from each machine definition with xstate/graph, replayed
 * through the wired task system (system.ts: the real machines, actors, lock manager, tools and
 * permission engine, with the outside parties scripted), and the coverage of every state and
 * transition of the catalog (`describeMachine`) measured from what the actors did.
 *
 * Only replays of the real wiring count as coverage. A path that needs what no real part
 * produces yet is replayed with an injected actor (it still tests the machine's behaviour), and
 * what only such replays reach is named in INJECTED_ONLY below: the test fails when the list is
 * stale (the real wiring reaches one of them now: remove it) or incomplete.
 */
const recorders: Recorders = { real: new CoverageRecorder(), injected: new CoverageRecorder() };
const label = (events: { type: string; tag?: string }[]) => events.map((e) => (e.tag ? `${e.type.replace(/^xstate\.(done|error)\.actor\.(0\.)?/, '$1:')}[${e.tag}]` : e.type)).join(' › ') || '(initial)';

/** Reached only through an injected actor, by machine: no real producer exists yet, and why. */
const INJECTED_ONLY: Record<string, { states: string[]; transitions: string[] }> = {
  turn: {
    states: [],
    transitions: [
      // runMcpCall never rejects: a failed, timed-out or crashed call is a result the model reads.
      'mcpCall -> dispatchingTools : xstate.error.actor.0.turn.mcpCall',
      // Validation rejects only when a tool's `subject` throws (a tool bug); no built-in tool does.
      'validatingInput -> dispatchingTools : xstate.error.actor.0.turn.validatingInput',
      // The permission machine answers its actors' failures itself; it does not fail.
      'permissionCheck -> dispatchingTools : xstate.error.actor.0.turn.permissionCheck',
      // runTool never rejects: tools turn failures into results, invokeTool catches a tool bug.
      'executingTool -> dispatchingTools : xstate.error.actor.0.turn.executingTool',
      // No hook is configured in these replays. A Stop hook that sends the agent back is exercised
      // for real by test/integration/cli/hooks.test.ts; the stop step never rejects (TaskHookPoints
      // answers a failing hook runner itself).
      'stopping -> checkingContext : xstate.done.actor.0.turn.stopping [inline]',
      'stopping -> done : xstate.error.actor.0.turn.stopping',
    ],
  },
  // The engine never rejects (`decide` answers its own failures with an ask, or a deny in dontAsk).
  permission: { states: [], transitions: ['checkRules -> askUser : xstate.error.actor.0.permission.checkRules'] },
};

/**
 * Taken neither by the real wiring nor by an injected replay yet, by machine, and why. Listed so
 * that nothing is filtered silently: the coverage test fails when one is taken (remove it) or when
 * another is missing.
 */
const NOT_REPLAYED: Record<string, Record<string, string>> = {
  task: {
    // Two Task calls in one answer: the model offers one subtask at a time (its completion is
    // resolved when the subtask starts, so the order of two cannot be scripted yet).
    // test/unit/machines/subtaskWiring.test.ts takes both with three Task calls.
    'running.subtasks.waitingForSubtask -> (stays) : SUBTASK_STARTED': 'a second Task call of the same answer: subtaskWiring.test.ts',
    'running.subtasks.waitingForSubtask -> (stays) : SUBTASK_DONE [isAwaitedSubtask]': 'one of two subtasks answering first: subtaskWiring.test.ts',
    // A worker killed under its query: test/integration/cli/workerFaults.test.ts kills real workers
    // (the task ends interrupted, worker_lost); test/unit/machines/taskLifecycle.test.ts takes the transition.
    'running.loop.onWorker -> interrupted : xstate.done.actor.turnLoop [workerLost]': 'a worker killed under its query: workerFaults.test.ts, taskLifecycle.test.ts',
    // The fake worker of WORKER_RUNS asks no budget; keel run (on workers by default) pauses a
    // task at its budget for real in test/integration/cli/budget.test.ts.
    'running.loop.onWorker -> pausedForBudget : xstate.done.actor.turnLoop [turnOverBudget]': 'a run on a worker refused by its budget: budget.test.ts',
    // A prompt hook's judgement while the turn runs here: its price goes to the turn (the task
    // machine forwards CHARGE). The scripted replays run no hooks; keel run --workers 0 with a
    // prompt hook takes it for real in test/integration/cli/hooksPrompt.test.ts.
    'running.loop.inProcess -> (stays) : CHARGE': 'a prompt hook priced during an in-process turn: hooksPrompt.test.ts',
  },
  turn: {
    // The same charge as the turn receives it (in process from the task machine, on a worker from
    // its hooks): hooksPrompt.test.ts checks the usage events' totals include each judgement.
    '(root) -> (stays) : CHARGE': 'a prompt hook priced during the turn: hooksPrompt.test.ts',
    'dispatchingTools -> (stays) : always [nextCallInvalid]': 'a tool call whose input is not valid JSON: the turn model has no such answer yet (streamAssembly.test.ts tests how such input is assembled, not this transition)',
  },
};

describe('model-based: stream', () => {
  const paths = streamPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const { observed, expected } = await replayStream(path, recorders.real);
    expect(observed).toEqual(expected);
  });
});

describe('model-based: call', () => {
  const paths = callPaths();
  it.each(paths.map((p) => [`${p.duplicate ? 'duplicate: ' : ''}${label(p.events)}`, p] as const))('%s', async (_name, path) => {
    const c = compileCall(path);
    const { observed } = await replay(c.script, 'call', c.expected, c.triggers, recorders);
    expect(observed).toEqual(c.expected);
  });
});

for (const variant of TURN_VARIANTS) {
  describe(`model-based: turn (${variant.name})`, () => {
    const paths = turnPaths(variant);
    it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
      const c = compileTurn(path, variant);
      const { observed } = await replay(c.script, 'turn', c.expected, c.triggers, recorders, variant.messages ? { messages: variant.messages } : {});
      if (c.prefixOk) expect(observed.slice(0, c.expected.length)).toEqual(c.expected);
      else expect(observed).toEqual(c.expected);
    });
  });
}

for (const variant of PERMISSION_VARIANTS) {
  describe(`model-based: permission (${variant.name})`, () => {
    const paths = permissionPaths(variant);
    it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
      const c = compilePermission(path, variant);
      const { observed } = await replay(c.script, 'permission', c.expected, [], recorders);
      expect(c.prefixOk ? observed.slice(0, c.expected.length) : observed).toEqual(c.expected);
    });
  });
}

describe('model-based: task', () => {
  const paths = taskPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const c = compileTask(path);
    const r = await replay(c.script, 'task', c.expected, c.triggers, recorders);
    expect(r.observed).toEqual(c.expected);
    // What the person and the model would notice: what was said, what was sent, what was refused.
    expect(taskOutputProblems(path, r)).toEqual([]);
  });
});

describe('model-based: task, its turn loop on a worker (real worker processes)', () => {
  it.each(WORKER_RUNS.map((r) => [r.end, r] as const))('a run on a worker that ends %s', async (_end, run) => {
    const { states, events, runnerPid, workerPids } = await replayOnWorker(run, recorders.real);
    expect(states).toEqual([
      '"created"',
      '"initializing"',
      JSON.stringify({ running: { loop: 'onWorker', subtasks: 'turn' } }),
      JSON.stringify({ [run.end]: 'finishing' }),
      JSON.stringify({ [run.end]: 'settled' }),
    ]);
    // What the person sees of it: the run's end as a done event with its status.
    expect(events.filter((e) => e.type === 'done').map((e) => (e.type === 'done' ? e.status : ''))).toEqual([{ completed: 'completed', awaitingUser: 'failed', aborted: 'aborted' }[run.end]]);
    // The run's runner, as its phases recorded it, is the worker process that ran the turn, not this one.
    expect(runnerPid).not.toBe(process.pid);
    expect(workerPids).toContain(runnerPid);
  });
});

describe('model-based: coverage of the catalog', () => {
  const wired: AnyStateMachine[] = [taskMachine, turnMachine, callMachine, streamMachine, permissionMachine];
  afterAll(() => {
    const listed = Object.entries(INJECTED_ONLY).flatMap(([id, l]) => [...l.states.map((s) => `  ${id}: state ${s}`), ...l.transitions.map((t) => `  ${id}: ${t}`)]);
    process.stdout.write(
      `\nModel-based coverage of the task system, real wiring only:\n${wired.map((m) => formatCoverage(recorders.real.report(m))).join('\n')}\n` +
        `Reached only through an injected actor (INJECTED_ONLY, not counted above):\n${listed.join('\n') || '  (none)'}\n` +
        `Not replayed yet (NOT_REPLAYED):\n${Object.entries(NOT_REPLAYED).flatMap(([id, l]) => Object.entries(l).map(([t, why]) => `  ${id}: ${t} — ${why}`)).join('\n')}\n`,
    );
  });

  it.each(wired.map((m) => [m.id, m] as const))('%s: the real wiring takes every state and transition not listed as injected-only', (id, machine) => {
    const real = recorders.real.report(machine);
    const listed = { states: INJECTED_ONLY[id]?.states ?? [], transitions: [...(INJECTED_ONLY[id]?.transitions ?? []), ...Object.keys(NOT_REPLAYED[id] ?? {})] };
    const missing = { states: real.states.missing, transitions: real.transitions.missing };
    const stale = { states: listed.states.filter((s) => !missing.states.includes(s)), transitions: listed.transitions.filter((t) => !missing.transitions.includes(t)) };
    expect(stale, 'the real wiring reaches these now: remove them from INJECTED_ONLY / NOT_REPLAYED').toEqual({ states: [], transitions: [] });
    const unlisted = { states: missing.states.filter((s) => !listed.states.includes(s)), transitions: missing.transitions.filter((t) => !listed.transitions.includes(t)) };
    expect(unlisted, 'not taken by the real wiring').toEqual({ states: [], transitions: [] });
  });

  it.each(wired.map((m) => [m.id, m] as const))('%s: every injected-only state and transition is still taken by an injected replay', (id, machine) => {
    const injected = recorders.injected.report(machine);
    const listed = INJECTED_ONLY[id] ?? { states: [], transitions: [] };
    expect({ states: listed.states.filter((s) => injected.states.missing.includes(s)), transitions: listed.transitions.filter((t) => injected.transitions.missing.includes(t)) }).toEqual({
      states: [],
      transitions: [],
    });
  });
});
