import type { AnyMachineSnapshot, AnyStateMachine, InspectionEvent, StateValue } from 'xstate';
import { describeMachine, describeTransition, transitionKey, type MachineDescription } from '../../../src/core/machines/catalog';

/**
 * Records, from xstate's inspection stream, which states and transitions the REAL actors took,
 * keyed the way `describeMachine` names them (source path or "(root)", target path, event type
 * or "always"), and compares that with the catalog.
 */
export interface MachineCoverage {
  id: string;
  states: { covered: number; total: number; missing: string[] };
  transitions: { covered: number; total: number; missing: string[] };
}

export { transitionKey };

/** Every active state of a value as dotted paths, parents included ({a: 'b'} → a, a.b). */
export function statePaths(value: StateValue, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix ? `${prefix}.${value}` : value];
  const out: string[] = [];
  for (const [k, sub] of Object.entries(value)) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.push(p);
    if (sub !== undefined) out.push(...statePaths(sub, p));
  }
  return out;
}

function machineIdOf(snapshot: unknown): string | null {
  const s = snapshot as Partial<AnyMachineSnapshot> | undefined;
  return s && s.machine && typeof s.machine.id === 'string' ? s.machine.id : null;
}

export class CoverageRecorder {
  private readonly states = new Map<string, Set<string>>();
  private readonly transitions = new Map<string, Set<string>>();

  /** Pass as `createActor(..., { inspect: recorder.inspect })`: covers every actor of the system. */
  readonly inspect = (e: InspectionEvent): void => {
    if (e.type !== '@xstate.microstep' && e.type !== '@xstate.snapshot') return;
    const id = machineIdOf(e.snapshot);
    if (!id) return;
    const snap = e.snapshot as AnyMachineSnapshot;
    const states = this.set(this.states, id);
    for (const p of statePaths(snap.value)) states.add(p);
    if (e.type !== '@xstate.microstep') return;
    const transitions = this.set(this.transitions, id);
    for (const t of e._transitions) {
      // Taking a transition out of a state means having been in it (a transient initial state
      // such as `idle`, left by an eventless transition, never shows in a stable snapshot).
      for (let i = 1; i <= t.source.path.length; i++) states.add(t.source.path.slice(0, i).join('.'));
      for (const d of describeTransition(t as Parameters<typeof describeTransition>[0])) transitions.add(transitionKey(d));
    }
  };

  report(machine: AnyStateMachine): MachineCoverage {
    const d: MachineDescription = describeMachine(machine);
    const seenStates = this.states.get(d.id) ?? new Set<string>();
    const seenTransitions = this.transitions.get(d.id) ?? new Set<string>();
    const missingStates = d.states.filter((s) => !seenStates.has(s));
    const keys = d.transitions.map(transitionKey);
    const missingTransitions = keys.filter((k) => !seenTransitions.has(k));
    return {
      id: d.id,
      states: { covered: d.states.length - missingStates.length, total: d.states.length, missing: missingStates },
      transitions: { covered: keys.length - missingTransitions.length, total: keys.length, missing: missingTransitions },
    };
  }

  private set(map: Map<string, Set<string>>, id: string): Set<string> {
    let s = map.get(id);
    if (!s) map.set(id, (s = new Set()));
    return s;
  }
}

export function formatCoverage(c: MachineCoverage): string {
  const pct = (a: number, b: number) => (b === 0 ? 100 : Math.round((1000 * a) / b) / 10);
  const lines = [`${c.id}: states ${c.states.covered}/${c.states.total} (${pct(c.states.covered, c.states.total)}%), transitions ${c.transitions.covered}/${c.transitions.total} (${pct(c.transitions.covered, c.transitions.total)}%)`];
  for (const s of c.states.missing) lines.push(`  missing state: ${s}`);
  for (const t of c.transitions.missing) lines.push(`  missing transition: ${t}`);
  return lines.join('\n');
}
