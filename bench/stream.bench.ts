// The cost of Keel's whole stream path over the SDK's own parse of the same bytes.
//
// A recorded answer (SSE bytes rendered by the fake model server's renderer) is served as a
// response body in pieces, each piece on its own turn of the event loop, as a socket delivers
// them. It is consumed (a) by the Anthropic SDK's SSE parser alone, and (b) by Keel as the product
// runs it: the real AnthropicProvider (SDK client and request, event mapping, stream guard), the
// provider-stream actor (delta coalescing, text published to views), the stream machine, and a
// sink that folds every task event into a transcript, as the host does. Both sides run in this
// process, in alternating pairs; a ratio is the median of the per-pair ratios. `*_ratio_*` keys
// compare wall time, `*_cpu_ratio_*` keys CPU time (steadier when other processes share the cores).
//
// Scenarios: the answer size the product requests (8k tokens, `maxTokens` 8192) in small pieces
// (128 bytes: about one SSE event per piece, real network chunking when tokens trickle in) and in
// large ones (16 KB), and the old 200k-token, 16 KB-piece figure. Prints one JSON line.
// Profile it with `node --cpu-prof .cache/bench/stream.cjs` after `npm run bench -- stream`.
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { createActor } from 'xstate';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../src/shared/domain/transcript';
import type { TaskEvent } from '../src/shared/domain/events';
import { providerStreamActor } from '../src/core/machines/stream/actors';
import { streamMachine } from '../src/core/machines/stream/stream.machine';
import { AnthropicProvider } from '../src/core/providers/anthropic';
import type { ProviderEvent } from '../src/core/providers/types';
import { renderAnthropicSse } from '../test/fixtures/fake-model-server/anthropicSse';

interface Scenario {
  tokens: number;
  pieceBytes: number;
  pairs: number;
}

interface Recorded {
  text: string;
  bytes: Uint8Array;
}

function record(tokens: number): Recorded {
  // About four characters a token; deltas of ~3 tokens each, as Anthropic streams them.
  const phrase = 'The quick brown fox jumps over the lazy dog while the agent writes code. ';
  const text = phrase.repeat(Math.ceil((tokens * 4) / phrase.length)).slice(0, tokens * 4);
  const sse = renderAnthropicSse({ blocks: [{ type: 'text', text }], stopReason: 'end_turn', chunkSize: 12, usage: { input_tokens: 1000, output_tokens: tokens } });
  return { text, bytes: new TextEncoder().encode(sse) };
}

/** The recorded bytes as a streaming response body: `pieceBytes` per turn of the event loop. */
function response(bytes: Uint8Array, pieceBytes: number): Response {
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((r) => setImmediate(r));
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + pieceBytes));
      offset += pieceBytes;
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

/** CPU time (all threads of this process) since `from`, in ms. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

async function bareParse(rec: Recorded, pieceBytes: number): Promise<{ ms: number; cpu: number; events: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let events = 0;
  for await (const _e of Stream.fromSSEResponse<ProviderEvent>(response(rec.bytes, pieceBytes), new AbortController())) events++;
  return { ms: performance.now() - t0, cpu: cpuMs(c0), events };
}

// The provider's requests go through the global fetch: here it answers with the recorded bytes
// instead of opening a socket, so both sides read exactly the same pieces.
let served: { rec: Recorded; pieceBytes: number } | undefined;
globalThis.fetch = async () => {
  if (!served) throw new Error('bench: no recorded answer to serve');
  return response(served.rec.bytes, served.pieceBytes);
};
const provider = new AnthropicProvider({ apiKey: 'sk-bench', model: 'claude-bench', baseUrl: 'http://bench.invalid' });

// Wired once, as src/core/runtime/wiring.ts wires it once per task: the machine's events and the
// streamed text (published by the provider-stream actor) reach the same sink. Each answer is a new
// actor of it, as each request of a task is.
let sink: (e: TaskEvent | null) => void = () => {};
const machine = streamMachine.provide({
  actors: { providerStream: providerStreamActor(() => provider, undefined, (e) => sink(e)) },
  actions: { publish: (_: unknown, e: TaskEvent | null) => sink(e) },
});

async function throughKeel(rec: Recorded, pieceBytes: number): Promise<{ ms: number; cpu: number; events: number; chars: number }> {
  served = { rec, pieceBytes };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let events = 0;
  let transcript: TaskTranscript = emptyTranscript('bench', 'bench', 'm');
  sink = (e) => {
    if (!e) return;
    events++;
    transcript = applyTaskEvent(transcript, e);
  };
  const actor = createActor(machine, { input: { taskId: 'bench', request: { model: 'claude-bench', system: [], messages: [], tools: [], maxTokens: 8192 } } });
  const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
  actor.start();
  await done;
  const ms = performance.now() - t0;
  const cpu = cpuMs(c0);
  const out = actor.getSnapshot().output;
  if (!out || !out.ok) throw new Error(`bench: the stream failed: ${JSON.stringify(out)}`);
  const chars = out.message.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0);
  if (transcript.items.length !== 1) throw new Error('bench: the transcript did not get the answer');
  return { ms, cpu, events, chars };
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs each side `RUNS_PER_PAIR` times, alternating; each side's fastest run stands for the pair. */
const RUNS_PER_PAIR = 5;

async function measure(s: Scenario) {
  const rec = record(s.tokens);
  // Warm up, then measure the steady state of a long-lived host: no forced collection between
  // runs (one would also throw away the JIT's type feedback and measure recompilation instead).
  for (let w = 0; w < 3; w++) {
    await bareParse(rec, s.pieceBytes);
    await throughKeel(rec, s.pieceBytes);
  }
  global.gc?.();
  const bare: number[] = [];
  const ours: number[] = [];
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  let sdkEvents = 0;
  let published = 0;
  // Pairs run back to back, alternating which side goes first. Within a pair each side runs a few
  // times and keeps its fastest run (another process taking the core only ever adds time); the
  // median of the per-pair ratios is then steady on a shared machine.
  for (let i = 0; i < s.pairs; i++) {
    let b = { ms: Infinity, cpu: Infinity, events: 0 };
    let o = { ms: Infinity, cpu: Infinity, events: 0, chars: 0 };
    for (let k = 0; k < RUNS_PER_PAIR; k++) {
      const keelFirst = (i + k) % 2 === 1;
      for (const side of keelFirst ? ['keel', 'sdk'] : ['sdk', 'keel']) {
        if (side === 'sdk') {
          const r = await bareParse(rec, s.pieceBytes);
          b = { ms: Math.min(b.ms, r.ms), cpu: Math.min(b.cpu, r.cpu), events: r.events };
        } else {
          const r = await throughKeel(rec, s.pieceBytes);
          if (r.chars !== rec.text.length) throw new Error(`assembled ${r.chars} chars, expected ${rec.text.length}`);
          o = { ms: Math.min(o.ms, r.ms), cpu: Math.min(o.cpu, r.cpu), events: r.events, chars: r.chars };
        }
      }
    }
    if (process.env.BENCH_DEBUG) process.stderr.write(`${s.tokens}/${s.pieceBytes} pair ${i}: sdk ${b.ms.toFixed(1)} ms (cpu ${b.cpu.toFixed(1)}), keel ${o.ms.toFixed(1)} ms (cpu ${o.cpu.toFixed(1)})\n`);
    bare.push(b.ms);
    ours.push(o.ms);
    ratios.push(o.ms / b.ms);
    cpuRatios.push(o.cpu / b.cpu);
    sdkEvents = b.events;
    published = o.events;
  }
  return {
    sseBytes: rec.bytes.length,
    sdkEvents,
    bareMs: median(bare),
    oursMs: median(ours),
    ratio: median(ratios),
    cpuRatio: median(cpuRatios),
    published,
  };
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

async function main() {
  const small = await measure({ tokens: 8192, pieceBytes: 128, pairs: 15 });
  const large8k = await measure({ tokens: 8192, pieceBytes: 16_384, pairs: 21 });
  const large = await measure({ tokens: 200_000, pieceBytes: 16_384, pairs: 7 });
  const result = {
    answer_tokens: 8192,
    piece_bytes: 128,
    sse_bytes: small.sseBytes,
    sdk_events: small.sdkEvents,
    sdk_parse_ms: round(small.bareMs, 1),
    keel_stream_ms: round(small.oursMs, 1),
    stream_ratio_vs_sdk_parse: round(small.ratio, 3),
    stream_cpu_ratio_vs_sdk_parse: round(small.cpuRatio, 3),
    task_events_published: small.published,
    stream_ratio_8k_large_chunks: round(large8k.ratio, 3),
    stream_cpu_ratio_8k_large_chunks: round(large8k.cpuRatio, 3),
    sdk_parse_ms_200k_large_chunks: round(large.bareMs, 1),
    keel_stream_ms_200k_large_chunks: round(large.oursMs, 1),
    stream_ratio_200k_large_chunks: round(large.ratio, 3),
    stream_cpu_ratio_200k_large_chunks: round(large.cpuRatio, 3),
    stream_events_per_s_200k: Math.round(large.sdkEvents / (large.oursMs / 1000)),
    pairs: { small_8k: 15, large_8k: 21, large_200k: 7 },
    runs_per_pair: RUNS_PER_PAIR,
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
void main();
