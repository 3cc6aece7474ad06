// The cost of Keel's stream path over the SDK's own parse. A recorded ~200k-token answer (SSE
// bytes rendered by the fake model server's renderer) is replayed (a) through the Anthropic SDK's
// SSE parser alone, and (b) through the same parser, the real provider-stream actor (with its
// delta coalescing), the stream machine and an event sink that
// folds every task event into a transcript, as the host does. Both run in this process, side by
// side, several times; the medians are compared. Prints one JSON line.
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { createActor } from 'xstate';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../src/shared/domain/transcript';
import type { TaskEvent } from '../src/shared/domain/events';
import { providerStreamActor } from '../src/core/machines/stream/actors';
import { streamMachine } from '../src/core/machines/stream/stream.machine';
import type { ModelProvider, ProviderEvent } from '../src/core/providers/types';
import { renderAnthropicSse } from '../test/fixtures/fake-model-server/anthropicSse';

const TOKENS = 200_000;
// About four characters a token; deltas of ~3 tokens each, as Anthropic streams them.
const text = 'The quick brown fox jumps over the lazy dog while the agent writes code. '.repeat(Math.ceil((TOKENS * 4) / 73)).slice(0, TOKENS * 4);
const sse = renderAnthropicSse({ blocks: [{ type: 'text', text }], stopReason: 'end_turn', chunkSize: 12, usage: { input_tokens: 1000, output_tokens: TOKENS } });
const bytes = new TextEncoder().encode(sse);

function response(): Response {
  // Served in 16 KB network-sized pieces, each on its own turn of the event loop as a socket
  // delivers them (for both sides alike).
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((r) => setImmediate(r));
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + 16_384));
      offset += 16_384;
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

async function bareParse(): Promise<{ ms: number; events: number }> {
  const t0 = performance.now();
  let events = 0;
  for await (const _e of Stream.fromSSEResponse<ProviderEvent>(response(), new AbortController())) events++;
  return { ms: performance.now() - t0, events };
}

async function throughMachine(): Promise<{ ms: number; events: number; chars: number }> {
  const t0 = performance.now();
  let events = 0;
  let transcript: TaskTranscript = emptyTranscript('bench', 'bench', 'm');
  const sink = (e: TaskEvent | null) => {
    if (!e) return;
    events++;
    transcript = applyTaskEvent(transcript, e);
  };
  const provider: ModelProvider = {
    id: 'scripted',
    label: 'recorded SSE',
    async *stream() {
      yield* Stream.fromSSEResponse<ProviderEvent>(response(), new AbortController());
    },
  };
  const machine = streamMachine.provide({
    actors: { providerStream: providerStreamActor(() => provider) },
    actions: { publish: (_: unknown, e: TaskEvent | null) => sink(e) },
  });
  const actor = createActor(machine, { input: { taskId: 'bench', request: { model: 'm', system: [], messages: [], tools: [], maxTokens: 1 } } });
  const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
  actor.start();
  await done;
  const out = actor.getSnapshot().output;
  const chars = out && out.ok ? out.message.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0) : -1;
  return { ms: performance.now() - t0, events, chars };
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  await bareParse();
  await throughMachine();
  const bare: number[] = [];
  const ours: number[] = [];
  const ratios: number[] = [];
  let sdkEvents = 0;
  let check = { events: 0, chars: 0 };
  // Pairs run back to back, alternating which side goes first; the ratio reported is the median
  // of the per-pair ratios, which is steadier than a ratio of medians on a shared machine.
  for (let i = 0; i < 15; i++) {
    global.gc?.();
    const first = i % 2 === 0 ? await bareParse() : await throughMachine();
    global.gc?.();
    const second = i % 2 === 0 ? await throughMachine() : await bareParse();
    const b = i % 2 === 0 ? first : second;
    const o = (i % 2 === 0 ? second : first) as Awaited<ReturnType<typeof throughMachine>>;
    bare.push(b.ms);
    ours.push(o.ms);
    ratios.push(o.ms / b.ms);
    sdkEvents = b.events;
    check = { events: o.events, chars: o.chars };
  }
  if (check.chars !== text.length) throw new Error(`assembled ${check.chars} chars, expected ${text.length}`);
  const result = {
    answer_tokens: TOKENS,
    sse_bytes: bytes.length,
    sdk_events: sdkEvents,
    sdk_parse_ms: Number(median(bare).toFixed(1)),
    keel_stream_ms: Number(median(ours).toFixed(1)),
    stream_ratio_vs_sdk_parse: Number(median(ratios).toFixed(3)),
    pairs: ratios.length,
    stream_events_per_s: Math.round(sdkEvents / (median(ours) / 1000)),
    task_events_published: check.events,
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
void main();
