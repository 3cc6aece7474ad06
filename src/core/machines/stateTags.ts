import type { AnyStateMachine, EventObject, MachineContext, StateNode } from 'xstate';

type AnyNode = StateNode<MachineContext, EventObject>;

interface TagTable {
  /** By dotted path ("running.waitingForSubtask"). */
  paths: ReadonlyMap<string, readonly string[]>;
  /** By a state's own key ("waitingForSubtask"), for keys only one state of the machine has. */
  keys: ReadonlyMap<string, readonly string[]>;
}

const byMachine = new WeakMap<AnyStateMachine, TagTable>();

/**
 * The tags of each state of `machine`, read from its definition (never from a copied list), each
 * with its ancestors' tags, as `snapshot.hasTag` sees them while the state is active. Computed
 * once per machine.
 */
function tagTable(machine: AnyStateMachine): TagTable {
  const known = byMachine.get(machine);
  if (known) return known;
  const paths = new Map<string, readonly string[]>();
  const keys = new Map<string, readonly string[] | null>();
  const visit = (node: AnyNode, inherited: readonly string[]) => {
    const tags = [...new Set([...inherited, ...node.tags])];
    if (node.path.length > 0) {
      paths.set(node.path.join('.'), tags);
      // A key two states share would give one state's tags to the other: only their paths count.
      keys.set(node.key, keys.has(node.key) ? null : tags);
    }
    for (const child of Object.values(node.states)) visit(child as AnyNode, tags);
  };
  visit(machine.root as AnyNode, []);
  const unique = new Map<string, readonly string[]>();
  for (const [key, tags] of keys) if (tags) unique.set(key, tags);
  const table = { paths, keys: unique };
  byMachine.set(machine, table);
  return table;
}

/**
 * The tags of `state` of `machine`: a dotted path, or a state's own key (the name machines
 * publish in their events, e.g. "waitingForSubtask"); an unknown state has none. Pure apart from
 * the per-machine cache.
 */
export function tagsOfState(machine: AnyStateMachine, state: string): readonly string[] {
  const t = tagTable(machine);
  return t.paths.get(state) ?? t.keys.get(state) ?? [];
}

/** Every state of `machine` by dotted path, with its tags (ancestors' included). */
export function stateTagTable(machine: AnyStateMachine): ReadonlyMap<string, readonly string[]> {
  return tagTable(machine).paths;
}
