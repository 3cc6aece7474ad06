import { createEmptyActor, type AnyActorScope, type AnyMachineSnapshot, type AnyStateMachine, type EventObject, type StateValue } from 'xstate';
import { getShortestPaths } from 'xstate/graph';

/**
 * Path generation with `xstate/graph` for transition coverage. A vertex of the traversal is a
 * transition, not a state: (previous state, event, next state, plus whatever context decides
 * guards). The shortest path to every vertex then takes every reachable transition once.
 * Invoked actors are not run by the traversal: their completions are ordinary events in the
 * event list (`xstate.done.actor.<id>` with an output, `xstate.error.actor.<id>`), offered in
 * the states that invoke them.
 */
export type ModelEvent = EventObject & { tag?: string; [key: string]: unknown };

export interface ModelPath {
  /** Events after the initial state, in order. */
  events: ModelEvent[];
  /** State values: the initial one, then one after each event. */
  values: StateValue[];
  /** Context of the state before each event (for compiling a replay). */
  contexts: unknown[];
  key: string;
}

export function tagOf(e: ModelEvent): string {
  return e.tag ? `${e.type}[${e.tag}]` : e.type;
}

/** The ids of the actors invoked by the active states of a snapshot (what can complete now). */
export function invokeIds(snapshot: AnyMachineSnapshot): string[] {
  const ids: string[] = [];
  for (const node of snapshot._nodes) for (const inv of node.invoke) ids.push(inv.id);
  return ids;
}

export function doneEvent(id: string, output: unknown, tag: string): ModelEvent {
  return { type: `xstate.done.actor.${id}`, output, tag };
}

export function errorEvent(id: string, error: unknown, tag = 'error'): ModelEvent {
  return { type: `xstate.error.actor.${id}`, error, tag };
}

export function transitionPaths<M extends AnyStateMachine>(
  machine: M,
  opts: { input: unknown; events: (s: AnyMachineSnapshot) => ModelEvent[]; context?: (s: AnyMachineSnapshot) => unknown },
): ModelPath[] {
  const ctx = opts.context ?? (() => null);
  const ser = (s: AnyMachineSnapshot, e?: EventObject, prev?: AnyMachineSnapshot) =>
    JSON.stringify([prev ? prev.value : null, e ? tagOf(e) : 'init', s.value, ctx(s)]);
  const raw = getShortestPaths(withParent(machine), {
    input: opts.input,
    // Only events the machine would act on: an ignored event is no step of any path.
    events: (s: AnyMachineSnapshot) => (s.status === 'active' ? opts.events(s).filter((e) => machine.getTransitionData(s, e).length > 0) : []),
    serializeState: (s: AnyMachineSnapshot, e: EventObject | undefined, prev?: AnyMachineSnapshot) => ser(s, e, prev),
  } as never) as unknown as { state: AnyMachineSnapshot; steps: { state: AnyMachineSnapshot; event: ModelEvent }[] }[];
  // Keep the shortest path per (previous value, event, value, decisive context).
  const best = new Map<string, ModelPath>();
  for (const p of raw) {
    const steps = p.steps.filter((s) => s.event.type !== 'xstate.init');
    const init = p.steps[0]?.state ?? p.state;
    const values: StateValue[] = [init.value];
    const contexts: unknown[] = [];
    let prev = init;
    for (const s of steps) {
      contexts.push(prev.context);
      values.push(s.state.value);
      prev = s.state;
    }
    const last = steps.at(-1);
    const before = steps.length >= 2 ? steps[steps.length - 2]!.state : init;
    const key = last ? ser(last.state, last.event, before) : ser(init);
    const path: ModelPath = { events: steps.map((s) => s.event), values, contexts, key };
    const old = best.get(key);
    if (!old || old.events.length > path.events.length) best.set(key, path);
  }
  return [...best.values()].sort((a, b) => a.events.length - b.events.length);
}

/**
 * The traversal runs transitions with a mock actor scope that has no parent, so a `sendParent`
 * (the turn machine announcing a subtask to its task) could not resolve. Actions are not
 * executed during traversal; giving the mock self an (empty) parent lets them resolve.
 */
function withParent(machine: AnyStateMachine): AnyStateMachine {
  const parent = createEmptyActor();
  // The explored paths share one mock system: a child spawned with a systemId (a task's run phases)
  // is spawned again on the next path that enters its state, so registration never collides here.
  const scoped = (scope: AnyActorScope): AnyActorScope => {
    const system = Object.create(scope.system, { _set: { value: () => undefined } }) as AnyActorScope['system'];
    return { ...scope, system, self: Object.assign(Object.create(scope.self) as object, { _parent: parent, system }) as AnyActorScope['self'] };
  };
  const logic = Object.create(machine) as AnyStateMachine;
  logic.transition = (s, e, scope) => machine.transition(s, e, scoped(scope));
  logic.getInitialSnapshot = (scope, input) => machine.getInitialSnapshot(scoped(scope), input);
  return logic;
}

/** Consecutive duplicates removed: what an observer of the actor's stable states sees. */
export function dedupe(values: StateValue[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    const s = JSON.stringify(v);
    if (out[out.length - 1] !== s) out.push(s);
  }
  return out;
}
