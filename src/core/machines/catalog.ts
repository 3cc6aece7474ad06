import type { AnyStateMachine, EventObject, MachineContext, StateNode } from 'xstate';
import { appSessionMachine } from './appSession/appSession.machine';
import { callMachine } from './call/call.machine';
import { ipcConnectionMachine } from './ipcConnection/ipcConnection.machine';
import { modelSelectionMachine } from './modelSelection/modelSelection.machine';
import { permissionMachine } from './permission/permission.machine';
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
 * every state as a dotted path and every transition as {from, to, event}. `always` transitions
 * have the event "always"; invoke completions and delays keep xstate's event names
 * (xstate.done.actor.*, xstate.error.actor.*, xstate.after.*).
 */
export interface MachineDescription {
  id: string;
  states: string[];
  transitions: { from: string; to: string; event: string }[];
}

type AnyNode = StateNode<MachineContext, EventObject>;

function pathOf(node: AnyNode): string {
  return node.path.join('.');
}

export function describeMachine(machine: AnyStateMachine): MachineDescription {
  const states: string[] = [];
  const transitions: MachineDescription['transitions'] = [];
  const visit = (node: AnyNode) => {
    const from = pathOf(node);
    if (node.path.length > 0) states.push(from);
    const defs = [...node.transitions.values()].flat().concat(node.always ?? []);
    for (const t of defs) {
      const event = t.eventType === '' || t.eventType === undefined ? 'always' : t.eventType;
      if (!t.target || t.target.length === 0) continue; // actions-only: not a transition between states
      for (const target of t.target) transitions.push({ from: from || '(root)', to: pathOf(target as AnyNode), event });
    }
    for (const child of Object.values(node.states)) visit(child as AnyNode);
  };
  visit(machine.root as AnyNode);
  // A transition declared on a parent applies to every descendant; keep it once, on the parent.
  const seen = new Set<string>();
  const unique = transitions.filter((t) => {
    const key = `${t.from}|${t.to}|${t.event}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { id: machine.id, states, transitions: unique };
}

export const MACHINES: AnyStateMachine[] = [taskMachine, sessionMachine, callMachine, turnMachine, streamMachine, permissionMachine, appSessionMachine, modelSelectionMachine, sandboxMachine, workerMachine, queryMachine, ipcConnectionMachine, poolMachine];

export function describeAll(): { machines: MachineDescription[] } {
  return { machines: MACHINES.map(describeMachine) };
}
