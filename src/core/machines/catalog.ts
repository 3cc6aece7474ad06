import { StateMachine, type AnyStateMachine, type EventObject, type MachineContext, type StateNode } from 'xstate';
import { agentStatusMachine } from './agentStatus/agentStatus.machine';
import { appSessionMachine } from './appSession/appSession.machine';
import { callMachine } from './call/call.machine';
import { mcpConnectionMachine } from './mcpConnection/mcpConnection.machine';
import { loopModeMachine } from './loopMode/loopMode.machine';
import { ipcConnectionMachine } from './ipcConnection/ipcConnection.machine';
import { permissionMachine } from './permission/permission.machine';
import { runPhasesMachine } from './runPhases/runPhases.machine';
import { poolMachine } from './pool/pool.machine';
import { queryMachine } from './query/query.machine';
import { sandboxMachine } from './sandbox/sandbox.machine';
import { sessionMachine } from './session/session.machine';
import { streamMachine } from './stream/stream.machine';
import { taskMachine } from './task/task.machine';
import { turnMachine } from './turn/turn.machine';
import { workerMachine } from './worker/worker.machine';

/**
 * The machine catalog, derived from the definitions themselves (never a hand-written list):
 * every state as a dotted path, every transition, and what each state invokes: the actor's name
 * and, when the actor is itself a machine of the catalog (the task's turn loop, the turn's model
 * call and permission check, the call's stream), that machine's id.
 *
 * Every transition is listed, the ones that only run actions included (a decision that assigns,
 * publishes or forwards without changing state is still a decision): `to` is null for those, the
 * state stays. A transition names its guard and its actions, so where a machine decides shows.
 * `always` transitions have the event "always"; invoke completions and delays keep xstate's event
 * names (xstate.done.actor.*, xstate.error.actor.*, xstate.after.*).
 */
export interface MachineDescription {
  id: string;
  states: string[];
  transitions: TransitionDescription[];
  /** What each state invokes, and what it spawns as it is entered (`spawned`: a child that outlives the state). */
  invokes: { state: string; src: string; machine?: string; spawned?: true }[];
}

export interface TransitionDescription {
  /** The state that declares it, as a dotted path, or "(root)". */
  from: string;
  /** The target state; null when the transition only runs actions (the state stays). */
  to: string | null;
  event: string;
  /** The guard that must hold, e.g. `canDispatch` or `and(atCapacity, not(hasIdle))`. */
  guard?: string;
  /** The actions it runs, by name (xstate's built-ins without their prefix: assign, sendTo, …). */
  actions: string[];
}

type AnyNode = StateNode<MachineContext, EventObject>;

function pathOf(node: AnyNode): string {
  return node.path.join('.');
}

/** A guard or action as a reader knows it: its name in `setup`, or the built-in's. */
function nameOf(x: unknown): string {
  if (typeof x === 'string') return x;
  if (typeof x === 'function') {
    const nested = (x as { guards?: unknown[] }).guards;
    if (Array.isArray(nested) && ['and', 'or', 'not'].includes(x.name)) return `${x.name}(${nested.map(nameOf).join(', ')})`;
    const type = (x as { type?: unknown }).type;
    if (typeof type === 'string') return type.replace(/^xstate\./, '');
    // An inline function takes the name of the key it was written under (`guard: () => …`).
    return x.name && x.name !== 'guard' && x.name !== 'actions' ? x.name : 'inline';
  }
  if (x && typeof x === 'object' && typeof (x as { type?: unknown }).type === 'string') return (x as { type: string }).type;
  return 'inline';
}

/** How coverage and tests name a transition: `from -> to : event [guard]` (`to` "(stays)" for action-only ones). */
export function transitionKey(t: Pick<TransitionDescription, 'from' | 'to' | 'event' | 'guard'>): string {
  return `${t.from} -> ${t.to ?? '(stays)'} : ${t.event}${t.guard ? ` [${t.guard}]` : ''}`;
}

/** A transition definition of xstate as the catalog names it (one per target). */
export function describeTransition(t: { source: AnyNode; target?: readonly unknown[] | undefined; eventType: string; guard?: unknown; actions: readonly unknown[] }): TransitionDescription[] {
  const from = pathOf(t.source) || '(root)';
  const event = t.eventType === '' || t.eventType === undefined ? 'always' : t.eventType;
  const common = { from, event, ...(t.guard !== undefined ? { guard: nameOf(t.guard) } : {}), actions: t.actions.map(nameOf) };
  if (!t.target || t.target.length === 0) return [{ ...common, to: null }];
  return t.target.map((target) => ({ ...common, to: pathOf(target as AnyNode) }));
}

/** The `spawnChild` entry action's source and id, or null for any other action. */
function spawnedBy(action: unknown): { src: unknown; id?: string } | null {
  if (typeof action !== 'function' || !('type' in action) || action.type !== 'xstate.spawnChild' || !('src' in action)) return null;
  return { src: action.src, ...('id' in action && typeof action.id === 'string' ? { id: action.id } : {}) };
}

export function describeMachine(machine: AnyStateMachine): MachineDescription {
  const states: string[] = [];
  const transitions: TransitionDescription[] = [];
  const invokes: MachineDescription['invokes'] = [];
  const actors = machine.implementations.actors as Record<string, unknown>;
  const visit = (node: AnyNode) => {
    const from = pathOf(node);
    if (node.path.length > 0) states.push(from);
    for (const inv of node.invoke) {
      const src = typeof inv.src === 'string' ? inv.src : inv.id;
      const logic = typeof inv.src === 'string' ? actors[inv.src] : inv.src;
      invokes.push({ state: from || '(root)', src, ...(logic instanceof StateMachine ? { machine: logic.id } : {}) });
    }
    // A child the state spawns as it is entered (one that outlives the state, like a run's phases).
    for (const action of node.entry) {
      const spawn = spawnedBy(action);
      if (!spawn) continue;
      const logic = typeof spawn.src === 'string' ? actors[spawn.src] : spawn.src;
      const src = typeof spawn.src === 'string' ? spawn.src : (spawn.id ?? 'spawned');
      invokes.push({ state: from || '(root)', src, spawned: true, ...(logic instanceof StateMachine ? { machine: logic.id } : {}) });
    }
    const defs = [...node.transitions.values()].flat().concat(node.always ?? []);
    for (const t of defs) transitions.push(...describeTransition(t as Parameters<typeof describeTransition>[0]));
    for (const child of Object.values(node.states)) visit(child as AnyNode);
  };
  visit(machine.root as AnyNode);
  return { id: machine.id, states, transitions, invokes };
}

export const MACHINES: AnyStateMachine[] = [
  taskMachine,
  sessionMachine,
  callMachine,
  turnMachine,
  streamMachine,
  permissionMachine,
  appSessionMachine,
  sandboxMachine,
  runPhasesMachine,
  mcpConnectionMachine,
  loopModeMachine,
  agentStatusMachine,
  workerMachine,
  queryMachine,
  ipcConnectionMachine,
  poolMachine,
];

/** One step of how the machines nest while a task runs: `from` (machine.state) runs `to`. */
export interface NestingStep {
  from: string;
  /** A machine id, or machine.state when the step enters another machine in a given state. */
  to: string;
  /** How, when it is not an xstate invoke (a stand-in, a process boundary). */
  how?: string;
}

/** The machines' nesting on one execution path of a task. */
export interface ExecutionPath {
  name: string;
  /** When a task takes this path. */
  when: string;
  steps: NestingStep[];
}

/**
 * What no xstate invoke shows, on the path where tasks run on workers: which of the task
 * machine's two turn-loop states each path takes (both are real invokes: `running.loop.onWorker`
 * invokes the query machine, `running.loop.inProcess` the turn machine; a task takes one by its
 * `runner`), and the steps across the process boundary. test/unit/machines/catalogNesting.test.ts
 * holds the first to the wiring; the workers' integration tests, the second.
 */
export const ON_WORKERS = {
  runner: { machine: 'task', onWorkers: 'running.loop.onWorker', inHost: 'running.loop.inProcess' },
  across: [
    { from: 'query.processing', to: 'worker.busy', how: 'the pool leases the query a worker process' },
    { from: 'worker.busy', to: 'turn', how: "the worker runs the query's turn loop" },
  ],
} as const;

/**
 * The nesting of the default execution path (tasks on workers, as VS Code and `keel run` run
 * them) and of the path in the host, walked from the task machine: the catalog's invokes of
 * machines (the task's turn-loop state of the other path left out), with ON_WORKERS for what
 * crosses to a worker.
 */
export function executionPaths(machines: MachineDescription[]): ExecutionPath[] {
  const byId = new Map(machines.map((m) => [m.id, m]));
  const walk = (onWorkers: boolean): NestingStep[] => {
    const steps: NestingStep[] = [];
    const seen = new Set<string>();
    const runner = ON_WORKERS.runner;
    const otherPath: string = onWorkers ? runner.inHost : runner.onWorkers;
    const visit = (id: string): void => {
      if (seen.has(id)) return;
      seen.add(id);
      for (const i of byId.get(id)?.invokes ?? []) {
        if (id === runner.machine && i.state === otherPath) continue;
        if (i.machine) {
          steps.push({ from: `${id}.${i.state}`, to: i.machine, ...(i.spawned ? { how: 'spawned as the state is entered; it outlives the state' } : {}) });
          visit(i.machine);
        }
      }
      if (!onWorkers) return;
      for (const a of ON_WORKERS.across) {
        if (a.from.split('.')[0] !== id) continue;
        steps.push({ from: a.from, to: a.to, how: a.how });
        visit(a.to.split('.')[0]!);
      }
    };
    visit('task');
    return steps;
  };
  return [
    { name: 'on workers', when: 'the default: keel.workers.max above 0; keel run (--workers N, 4 unless said)', steps: walk(true) },
    { name: 'in the host', when: 'keel.workers.max 0; keel run --workers 0', steps: walk(false) },
  ];
}

export function describeAll(): { machines: MachineDescription[]; paths: ExecutionPath[] } {
  const machines = MACHINES.map(describeMachine);
  return { machines, paths: executionPaths(machines) };
}
