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
 * every state as a dotted path, every transition as {from, to, event}, and what each state
 * invokes: the actor's name and, when the actor is itself a machine of the catalog (the task's
 * turn loop, the turn's model call and permission check, the call's stream), that machine's id.
 * `always` transitions have the event "always"; invoke completions and delays keep xstate's event
 * names (xstate.done.actor.*, xstate.error.actor.*, xstate.after.*).
 */
export interface MachineDescription {
  id: string;
  states: string[];
  transitions: { from: string; to: string; event: string }[];
  invokes: { state: string; src: string; machine?: string }[];
}

type AnyNode = StateNode<MachineContext, EventObject>;

function pathOf(node: AnyNode): string {
  return node.path.join('.');
}

export function describeMachine(machine: AnyStateMachine): MachineDescription {
  const states: string[] = [];
  const transitions: MachineDescription['transitions'] = [];
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
  return { id: machine.id, states, transitions: unique, invokes };
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

export function describeAll(): { machines: MachineDescription[] } {
  return { machines: MACHINES.map(describeMachine) };
}
