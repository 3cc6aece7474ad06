import { createActor, fromPromise, type AnyMachineSnapshot, type AnyStateMachine, type InspectionEvent } from 'xstate';
import type { CoverageRecorder } from './coverage';
import { dedupe, type ModelEvent, type ModelPath } from './paths';
import { settled, withinTurns } from '../helpers/changes';

/**
 * A machine replayed on its own with scripted actors: each actor the path invokes is an
 * in-memory stand-in under the same name that resolves or rejects as the path says, and the
 * host's events are sent when the actor is where the path says. This checks the definition's
 * behaviour (its states after each event), not the real actors' I/O: a test using it says so,
 * and its coverage is not coverage of the real wiring.
 */
export interface ScriptedModel {
  machine: AnyStateMachine;
  input: unknown;
  events: (s: AnyMachineSnapshot) => ModelEvent[];
  delays?: Record<string, number>;
  /** Action implementations (what the machine tells its host), to record them. */
  actions?: NonNullable<Parameters<AnyStateMachine['provide']>[0]['actions']>;
}

/** What a replay saw: the states, and the input each stand-in actor was started with, by name. */
export interface ScriptedReplay {
  observed: string[];
  expected: string[];
  prefixOk: boolean;
  started: { src: string; input: unknown }[];
}

const never = <T>() => new Promise<T>(() => undefined);

/** Replays one path: host events are sent when the actor is where the path says; completions come from the stand-ins. */
export async function replayWithScriptedActors(model: ScriptedModel, path: ModelPath, recorder: CoverageRecorder): Promise<ScriptedReplay> {
  const expected = dedupe(path.values);
  // A real (short) timer cannot be held: a path that ends in a state with a delay goes on.
  const lastNodes = model.machine.resolveState({ value: path.values.at(-1)!, context: {} as never })._nodes;
  const prefixOk = lastNodes.some((n) => n.after.length > 0);
  // Per actor name, the outcomes the path needs, in order.
  const outcomes = new Map<string, { kind: 'ok' | 'fail'; output: unknown }[]>();
  const srcOf = new Map<string, string>();
  const walk = (node: AnyMachineSnapshot['_nodes'][number]): void => {
    for (const inv of node.invoke) srcOf.set(inv.id, String(inv.src));
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(model.machine.root);
  for (const e of path.events) {
    const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(e.type);
    if (!m) continue;
    const src = srcOf.get(m[2]!)!;
    if (!outcomes.has(src)) outcomes.set(src, []);
    outcomes.get(src)!.push({ kind: m[1] === 'done' ? 'ok' : 'fail', output: 'output' in e ? e.output : undefined });
  }
  const actors: Record<string, ReturnType<typeof fromPromise<unknown, unknown>>> = {};
  const started: ScriptedReplay['started'] = [];
  for (const src of new Set(srcOf.values())) {
    const queue = outcomes.get(src) ?? [];
    actors[src] = fromPromise<unknown, unknown>(async ({ input }) => {
      started.push({ src, input });
      const o = queue.shift();
      if (o === undefined) return never();
      if (o.kind === 'fail') throw new Error(`${src} failed (scripted)`);
      return o.output;
    });
  }
  const machine = model.machine.provide({ actors, ...(model.delays ? { delays: model.delays } : {}), ...(model.actions ? { actions: model.actions } : {}) });
  const observed: string[] = [];
  const actor = createActor(machine, {
    input: model.input,
    inspect: (e: InspectionEvent) => {
      recorder.inspect(e);
      if (e.type !== '@xstate.snapshot' || e.actorRef !== actor) return;
      const v = JSON.stringify((e.snapshot as AnyMachineSnapshot).value);
      if (observed.at(-1) !== v) observed.push(v);
    },
  });
  actor.start();
  try {
    for (let i = 0; i < path.events.length; i++) {
      const e = path.events[i]!;
      if (e.type.startsWith('xstate.')) continue;
      const at = dedupe(path.values.slice(0, i + 1)).length - 1;
      await withinTurns(() => observed.length > at);
      if (observed.length !== at + 1) break;
      const { tag: _tag, ...event } = e;
      actor.send(event as never);
    }
    await withinTurns(() => observed.length >= expected.length);
    await settled();
    return { observed: observed.slice(), expected, prefixOk, started };
  } finally {
    actor.stop();
  }
}
