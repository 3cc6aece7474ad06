import { createActor, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import type { ProviderEvent } from '../../../src/core/providers/types';
import { providerStreamActor } from '../../../src/core/machines/stream/actors';
import { streamMachine } from '../../../src/core/machines/stream/stream.machine';
import { ScenarioProvider } from '../helpers/scenarioProvider';
import type { CoverageRecorder } from './coverage';
import { dedupe, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { Changes, settled } from '../helpers/changes';

/**
 * The stream machine's model: its events are the provider's events, so a path IS the provider
 * script. Replayed through the provider stream actor the runtime uses (`providerStreamActor`,
 * with its delta coalescer) over a ScenarioProvider; a path that ends before a final state
 * leaves the request open, so the machine stays where the path ends.
 */
const REQUEST = { model: 'test-model', system: [], messages: [], tools: [], maxTokens: 64 };

const EVENTS: (ProviderEvent & { tag?: string })[] = [
  { type: 'message_start', message: { id: 'msg_1', model: 'test-model', usage: { input_tokens: 3, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' }, tag: 'text' },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' }, tag: 'thinking' },
  { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'tu1', name: 'Read', input: {} }, tag: 'tool_use' },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
  { type: 'message_stop' },
  { type: 'provider_error', error: { code: 'overloaded', message: 'Overloaded', phase: 'mid-stream', retryable: true } },
  // A keep-alive the server may send at any time: it changes nothing.
  { type: 'ping' },
  // The stall clock's notice that the answer is quiet: published, the state stays.
  { type: 'waiting', quietMs: 15_000, stallAfterMs: 30_000 },
  // A block's delta or end where no block was started: a protocol error, the answer fails.
  { type: 'content_block_delta', index: 9, delta: { type: 'text_delta', text: 'x' }, tag: 'unstarted' },
  { type: 'content_block_stop', index: 9, tag: 'unstarted' },
];

export function streamPaths(): ModelPath[] {
  return transitionPaths(streamMachine, { input: { taskId: 't', request: REQUEST }, events: () => EVENTS as ModelEvent[] });
}

function strip(e: ModelEvent): ProviderEvent {
  const { tag: _tag, ...rest } = e;
  return rest as ProviderEvent;
}

export async function replayStream(path: ModelPath, recorder: CoverageRecorder): Promise<{ observed: string[]; expected: string[] }> {
  const expected = dedupe(path.values);
  const last = path.values.at(-1);
  const final = last === 'messageStop' || last === 'failed';
  const provider = new ScenarioProvider([{ events: path.events.map(strip), hang: !final }]);
  const changes = new Changes();
  provider.onChange = changes.notify;
  const machine = streamMachine.provide({ actors: { providerStream: providerStreamActor(() => provider) } });
  const observed: string[] = [];
  const actor = createActor(machine, {
    input: { taskId: 't', request: REQUEST },
    inspect: (e: InspectionEvent) => {
      recorder.inspect(e);
      if (e.type !== '@xstate.snapshot' || e.actorRef !== actor) return;
      const v = JSON.stringify((e.snapshot as AnyMachineSnapshot).value);
      if (observed.at(-1) !== v) observed.push(v);
      changes.notify();
    },
  });
  actor.start();
  try {
    const diverged = () => observed.some((v, i) => v !== expected[i]);
    await changes.until(() => diverged() || (observed.length >= expected.length && (final ? actor.getSnapshot().status === 'done' : provider.hung > 0)), () => observed.join(' → '));
    await settled();
    return { observed: observed.slice(), expected };
  } finally {
    actor.stop();
  }
}
