// Project memory and the event bus (issue 13). Prints one JSON line:
// - recall_at_5: the labelled set (110 memories, 36 prompts; test/fixtures/memory-recall/);
// - memory_search_p95_ms / p50: one search of a run (the prompt's words and files) over 10,000
//   memory files, the index already built; memory_index_build_ms: the first search's build;
// - memory_run_start_*: what a new run (a new process: a new index) pays before its first search
//   over those 10,000 files, side by side in this process: rebuilt from the files (as every run did
//   before the index was kept), from the kept index (indexCache.ts: one lstat per file), and from
//   the kept index after one file changed; medians of 3, alternating;
// - broadcast_events_per_s: events through the bus with 8 queued subscribers, one of them slow
//   (its handler awaits 1 ms per event, so it lags), with the fast ones' share of events kept.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '../src/core/events/eventBus';
import { indexCacheFile } from '../src/core/memory/indexCache';
import { memoryQuery } from '../src/core/memory/memoryContext';
import { serializeMemory } from '../src/core/memory/memoryFile';
import { MemoryIndex } from '../src/core/memory/memoryIndex';
import { MemoryStore } from '../src/core/memory/memoryStore';
import { LABELLED_MEMORIES, LABELLED_QUERIES, type LabelledMemory } from '../test/fixtures/memory-recall/labelled';
import { measureRecall, writeMemories } from '../test/fixtures/memory-recall/recall';

/** 10,000 memories: the labelled ones, then noise made of their words shuffled (titles and texts), with their tags. */
function manyMemories(n: number): LabelledMemory[] {
  const out: LabelledMemory[] = [...LABELLED_MEMORIES];
  const words = LABELLED_MEMORIES.flatMap((m) => m.body.split(/\s+/));
  let seed = 42;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = out.length; i < n; i++) {
    const base = LABELLED_MEMORIES[i % LABELLED_MEMORIES.length]!;
    const body = Array.from({ length: 25 + Math.floor(rnd() * 30) }, () => words[Math.floor(rnd() * words.length)]).join(' ');
    const title = Array.from({ length: 4 + Math.floor(rnd() * 4) }, () => words[Math.floor(rnd() * words.length)]).join(' ');
    out.push({ file: `gen-${i}.md`, title, tags: base.tags, body });
  }
  return out;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function broadcast(events: number): Promise<{ perS: number; slowMissed: number; fastDelivered: number }> {
  const bus = new EventBus();
  const subs = Array.from({ length: 7 }, (_, i) => bus.subscribe(() => undefined, { name: `fast ${i}` }));
  const slow = bus.subscribe(() => new Promise<void>((r) => setTimeout(r, 1)), { name: 'slow' });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < events; i++) {
    bus.publish({ kind: 'SessionStateChanged', taskId: 't', machine: 'turn', state: 'streaming' });
    // Let queued subscribers drain now and then, as a host's event loop would.
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  await Promise.all(subs.map((s) => s.idle()));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const result = { perS: Math.round(events / s), slowMissed: slow.stats().missed, fastDelivered: Math.min(...subs.map((x) => x.stats().delivered)) };
  slow.unsubscribe();
  bus.close();
  return result;
}

async function main() {
  const small = mkdtempSync(join(tmpdir(), 'keel-bench-recall-'));
  const large = mkdtempSync(join(tmpdir(), 'keel-bench-memory-'));
  try {
    writeMemories(small);
    const recall = measureRecall(new MemoryIndex(new MemoryStore(small)));

    writeMemories(large, manyMemories(10_000));
    const index = new MemoryIndex(new MemoryStore(large));
    const b0 = process.hrtime.bigint();
    index.search('warm up');
    const buildMs = Number(process.hrtime.bigint() - b0) / 1e6;
    const times: number[] = [];
    for (let round = 0; round < 6; round++) {
      for (const q of LABELLED_QUERIES) {
        const t0 = process.hrtime.bigint();
        index.search(memoryQuery(q.prompt));
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    times.sort((a, b) => a - b);
    // The same labelled prompts in the 10,000 (the labelled memories are among them).
    const recallLarge = measureRecall(index);

    // A new run's start: a new index, then its first search.
    const storage = mkdtempSync(join(tmpdir(), 'keel-bench-memory-store-'));
    const cacheFile = indexCacheFile(storage, large);
    const prompt = memoryQuery(LABELLED_QUERIES[0]!.prompt);
    const runStart = (kept: boolean): number => {
      const t0 = process.hrtime.bigint();
      new MemoryIndex(new MemoryStore(large), kept ? { cacheFile } : {}).search(prompt);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const firstKept = runStart(true); // builds from the files and keeps the index
    const rebuilt: number[] = [];
    const kept: number[] = [];
    for (let i = 0; i < 3; i++) {
      rebuilt.push(runStart(false));
      kept.push(runStart(true));
    }
    writeFileSync(join(large, '.keel', 'memory', 'gen-500.md'), serializeMemory({ title: 'A changed memory', created: '', tags: ['x'], body: 'changed since the last run' }));
    const oneChanged = runStart(true);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const cacheBytes = readdirSync(join(storage, 'memory-index')).reduce((n, f) => n + statSync(join(storage, 'memory-index', f)).size, 0);
    rmSync(storage, { recursive: true, force: true });
    const bus = await broadcast(200_000);
    const result = {
      recall_at_5: Number(recall.recallAt5.toFixed(3)),
      recall_queries: recall.queries,
      recall_memories: LABELLED_MEMORIES.length,
      recall_at_5_in_10k: Number(recallLarge.recallAt5.toFixed(3)),
      memory_search_p50_ms: Number(percentile(times, 50).toFixed(2)),
      memory_search_p95_ms: Number(percentile(times, 95).toFixed(2)),
      memory_search_memories: index.size,
      memory_index_build_ms: Math.round(buildMs),
      memory_run_start_rebuilt_ms: Math.round(median(rebuilt)),
      memory_run_start_kept_ms: Math.round(median(kept)),
      memory_run_start_kept_ratio: Number((median(kept) / median(rebuilt)).toFixed(3)),
      memory_run_start_one_changed_ms: Math.round(oneChanged),
      memory_run_start_first_keeping_ms: Math.round(firstKept),
      memory_index_kept_bytes: cacheBytes,
      broadcast_events_per_s: bus.perS,
      broadcast_subscribers: 8,
      broadcast_slow_missed: bus.slowMissed,
      broadcast_fast_delivered: bus.fastDelivered,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    rmSync(small, { recursive: true, force: true });
    rmSync(large, { recursive: true, force: true });
  }
}
void main();
