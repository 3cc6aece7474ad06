import { createActor, fromPromise, type AnyMachineSnapshot, type AnyStateMachine, type InspectionEvent } from 'xstate';
import { modelSelectionMachine } from '../../../src/core/machines/modelSelection/modelSelection.machine';
import type { CoverageRecorder } from './coverage';
import { dedupe, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { quiesce, waitUntil } from './system';

/**
 * Models of the machines replayed on the bare machine (today the modelSelection machine). Their
 * events come from the host (a setting changing) and from their actors, which are in-memory fakes
 * behind the same actor names that resolve or reject as the path says. (The session and
 * appSession machines are replayed through the host's real wiring instead: hostWiring.test.ts;
 * the permission machine through the turn's real wiring: modelBased.test.ts.)
 */
export interface HostModel {
  machine: AnyStateMachine;
  input: unknown;
  events: (s: AnyMachineSnapshot) => ModelEvent[];
  /** Implementations for the replay: `actors` are built per path from its completions. */
  delays?: Record<string, number>;
}

export const HOST_MODELS: HostModel[] = [
  {
    machine: modelSelectionMachine,
    input: { providerDefault: 'claude-sonnet-4-5' },
    events: () => [
      { type: 'USER_SELECTED', model: 'opus' },
      { type: 'USER_SELECTED', model: null, tag: 'clear' },
      { type: 'ENV_CHANGED', model: 'claude-haiku-4-5' },
      { type: 'ENV_CHANGED', model: null, tag: 'clear' },
      { type: 'PLAN_MODEL_SET', model: 'opus' },
      { type: 'MODE_CHANGED', planMode: true },
      { type: 'PROVIDER_CHANGED', providerDefault: 'claude-haiku-4-5' },
    ],
  },
];

export function hostPaths(model: HostModel): ModelPath[] {
  return transitionPaths(model.machine, {
    input: model.input,
    events: model.events,
    context: (s) => (s.machine.id === 'modelSelection' ? (s.context as { model: string }).model : null),
  });
}

const never = <T>() => new Promise<T>(() => undefined);

/** Replays one path: host events are sent when the actor is where the path says; completions come from the fakes. */
export async function replayHost(model: HostModel, path: ModelPath, recorder: CoverageRecorder): Promise<{ observed: string[]; expected: string[]; prefixOk: boolean }> {
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
  for (const src of new Set(srcOf.values())) {
    const queue = outcomes.get(src) ?? [];
    actors[src] = fromPromise<unknown, unknown>(async () => {
      const o = queue.shift();
      if (o === undefined) return never();
      if (o.kind === 'fail') throw new Error(`${src} failed (scripted)`);
      return o.output;
    });
  }
  const machine = model.machine.provide({ actors, ...(model.delays ? { delays: model.delays } : {}) });
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
      await waitUntil(() => observed.length > at, () => `${observed.join(' → ')} / ${expected.join(' → ')}`).catch(() => undefined);
      if (observed.length !== at + 1) break;
      const { tag: _tag, ...event } = e;
      actor.send(event as never);
    }
    await waitUntil(() => observed.length >= expected.length, () => observed.join(' → ')).catch(() => undefined);
    await quiesce();
    return { observed: observed.slice(), expected, prefixOk };
  } finally {
    actor.stop();
  }
}
