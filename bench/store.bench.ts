// The task store: is an append O(1), and how does resuming a large task compare with the least
// any reader must do? Logs are written through the real recorder (TaskStore.create →
// TaskRecorder.record) exactly as a running task writes them, durable states included:
//   - every model call with a tool round is the 20 events a real one publishes (the order
//     `keel run --output-format stream-json` prints), among them `turn executingTool` (the
//     recorder asks the task's writer for an fdatasync of the log, then for meta.json — dirty
//     after `usage` — to be replaced atomically; both run on the writer's queue, off the event
//     loop) and `turn assembling` (another fdatasync);
//   - after `turn executingTool` the bench awaits `recorder.durable()`, as the runtime does before
//     a tool runs (wiring.ts runTool → TaskServices.durable).
// The store root is under os.tmpdir(); on this machine that is a real disk (ext4), so every
// fsync costs what it costs a user (~3–5 ms here).
//  (a) append cost: the mean time per event (record() plus the awaited durable wait) over events
//      10..1,009 of a fresh log, against events 100,000..100,999 of a log of 100,000+ events
//      (same mix of events in both windows: 1,000 events are 50 whole cycles). Early windows come
//      from 3 fresh logs, late windows from 3 consecutive windows (100,000.., 101,000..,
//      102,000..) of one long log; medians of each. `append_meta_write_ms_median` is what the
//      event loop spends in the record() of `turn executingTool` (goal ≤ 1 ms: nothing waits on
//      the disk there any more);
//  (b) resume: TaskStore.open (lock, chunked read, parse, fold into conversation + transcript, cut
//      a torn tail) + planResume, against a bare readFileSync + split + JSON.parse of every line of
//      the same file, alternating, median of 5 each;
//  (c) the longest event-loop block during a resume (perf_hooks.monitorEventLoopDelay), the
//      longest CPU stretch between two turns of the loop (load-proof), and RSS after it while the
//      resumed task is held;
//  (d) resume with snapshots (the driver wrote one every SNAPSHOT_EVERY_EVENTS events while it
//      recorded, as a running task does): TaskStore.open + planResume reading the newest snapshot
//      (its log prefix checked against its checksum) and the log after it, against the same bare
//      read + parse of the whole log, alternating with (b), median of 5 each:
//      `resume_100k_ratio_vs_raw_parse` (wall) and `resume_100k_cpu_ratio_vs_raw_parse` (CPU).
// The machine's load average at start and end is printed with the figures.
// The conversation is compacted as the turn machine compacts it (the estimate over
// DEFAULT_LIMITS.contextLimit tokens: a summary replaces it), so the long task is one a user can
// have: a conversation of 100,000 events without compaction would be ~4M tokens.
// Prints one JSON line.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { TaskEvent } from '../src/shared/domain/events';
import { estimateTokens } from '../src/core/context/tokens';
import { DEFAULT_LIMITS } from '../src/core/runtime/limits';
import { planResume } from '../src/core/store/resumePlan';
import { hashLogPrefix, listSnapshots } from '../src/core/store/snapshotFile';
import { SNAPSHOT_EVERY_EVENTS } from '../src/core/store/snapshots';
import type { ConversationMessage } from '../src/shared/domain/messages';
import type { TaskRecorder } from '../src/core/store/taskRecorder';
import { TaskStore } from '../src/core/store/taskStore';

const EVENTS = 100_000;
const WINDOW = 1000;
const LATE_WINDOWS = 3;
const CYCLE = 20;
const filler = (n: number, seed: number) => `Line ${seed}: the agent reads the file, thinks about the change and writes code. `.repeat(Math.ceil(n / 80)).slice(0, n);

/**
 * One model call with one tool round, as a real task publishes it (see the example in
 * docs/cli.md): CYCLE events, ~450 bytes a line on average once streamed deltas are merged.
 */
function eventAt(taskId: string, i: number): TaskEvent {
  const k = i % CYCLE;
  const turn = Math.floor(i / CYCLE);
  const id = `toolu_${turn}`;
  switch (k) {
    case 0:
      return { type: 'turn', taskId, state: 'checkingContext', turn };
    case 1:
      return { type: 'turn', taskId, state: 'streaming', turn };
    case 2:
      return { type: 'stream', taskId, mode: 'requesting' };
    case 3:
      return { type: 'assistant_start', taskId, messageId: `msg_${turn}`, model: 'claude-sonnet-4-5' };
    case 4:
      return { type: 'stream', taskId, mode: 'responding' };
    case 5:
    case 6:
      return { type: 'text', taskId, delta: filler(150, i) };
    case 7:
      return { type: 'stream', taskId, mode: 'toolInput' };
    case 8:
      return { type: 'usage', taskId, inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.006, totalCostUsd: 0.006 * turn };
    case 9:
      return { type: 'message', taskId, message: { role: 'assistant', content: [{ type: 'text', text: filler(300, i) }, { type: 'tool_use', id, name: 'Read', input: { file_path: `src/file${turn}.ts` } }] } };
    case 10:
      return { type: 'turn', taskId, state: 'evaluating', turn: turn + 1 };
    case 11:
      return { type: 'turn', taskId, state: 'permissionCheck', turn: turn + 1 };
    case 12:
      return { type: 'tool_call', taskId, id, name: 'Read', input: { file_path: `src/file${turn}.ts` } };
    case 13:
      return { type: 'permission', taskId, requestId: `req_${turn}`, toolCallId: id, tool: 'Read', decision: 'allow', reason: 'read-only tool in the workspace' };
    case 14:
      return { type: 'turn', taskId, state: 'executingTool', turn: turn + 1 };
    case 15:
    case 16:
      return { type: 'tool_output', taskId, id, chunk: filler(200, i) };
    case 17:
      return { type: 'tool_result', taskId, id, is_error: false, summary: `read 40 lines of src/file${turn}.ts` };
    case 18:
      return { type: 'turn', taskId, state: 'assembling', turn: turn + 1 };
    default:
      return { type: 'message', taskId, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: filler(2400, i) }] } };
  }
}

/**
 * The conversation as the turn machine holds it, to compact it where the turn machine would
 * (checkingContext, over the context limit): a `compacted` event with the task and a summary.
 */
class ConversationModel {
  private messages: ConversationMessage[] = [];
  private chars = 0;
  add(m: ConversationMessage): void {
    this.messages.push(m);
    this.chars += JSON.stringify(m).length;
  }
  /** Cheap pre-check by characters, then the machine's own estimate. */
  overContext(): boolean {
    return this.chars / 4 > DEFAULT_LIMITS.contextLimit * 0.9 && estimateTokens([], this.messages) > DEFAULT_LIMITS.contextLimit;
  }
  compact(taskId: string, n: number): TaskEvent {
    const first = this.messages[0]!;
    const summary: ConversationMessage = { role: 'user', content: [{ type: 'text', text: `[Summary of the earlier conversation]\n${filler(3000, n)}` }] };
    this.messages = [];
    this.chars = 0;
    this.add(first);
    this.add(summary);
    return { type: 'compacted', taskId, messages: [first, summary], summary: true };
  }
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const conversations = new WeakMap<TaskRecorder, ConversationModel>();

/** Records one event as the runtime does: a tool runs only once the log is durable; an oversized conversation is compacted first. */
async function recordLikeRuntime(rec: TaskRecorder, e: TaskEvent): Promise<void> {
  rec.record(e);
  const conv = conversations.get(rec);
  if (conv && e.type === 'message') conv.add(e.message);
  if (conv && e.type === 'turn' && e.state === 'checkingContext' && conv.overContext()) {
    rec.record({ type: 'turn', taskId: rec.id, state: 'compacting', turn: e.turn });
    rec.record(conv.compact(rec.id, e.turn));
  }
  if (e.type === 'turn' && e.state === 'executingTool') await rec.durable();
}

/** The host dies mid-run: the log is closed as it stands, meta still says running, the lock is let go. */
async function crash(rec: TaskRecorder): Promise<void> {
  await rec.abandon();
}

function startLog(store: TaskStore, taskId: string): TaskRecorder {
  const rec = store.create({ id: taskId, title: 'bench task', model: 'claude-sonnet-4-5', workspace: '/ws', owner: 'bench' });
  rec.record({ type: 'user_message', taskId, id: `${taskId}-u1`, text: 'start' });
  const conv = new ConversationModel();
  conversations.set(rec, conv);
  const first: ConversationMessage = { role: 'user', content: [{ type: 'text', text: 'start' }] };
  conv.add(first);
  rec.record({ type: 'message', taskId, message: first });
  rec.record({ type: 'task', taskId, state: 'initializing', title: 'bench task' });
  rec.record({ type: 'task', taskId, state: 'running', title: 'bench task' });
  rec.record({ type: 'turn', taskId, state: 'preparing', turn: 0 });
  return rec;
}

interface Timing {
  /** Sum of the per-event times over the window, ms. */
  total: number;
  /** The same without the awaited durable waits: the event loop's own cost, ms. */
  host: number;
  /** Per tool round in the window: the record() of `turn executingTool` (meta write + sync started), ms. */
  metaWrites: number[];
  /** Per tool round in the window: the awaited `durable()` before the tool, ms. */
  durableWaits: number[];
}

/** Appends events [from, to) and times those in [windowStart, windowStart + WINDOW). */
async function append(rec: TaskRecorder, taskId: string, from: number, to: number, windowStarts: number[]): Promise<Timing[]> {
  const timings = windowStarts.map(() => ({ total: 0, host: 0, metaWrites: [] as number[], durableWaits: [] as number[] }));
  for (let i = from; i < to; i++) {
    const e = eventAt(taskId, i);
    const w = windowStarts.findIndex((s) => i >= s && i < s + WINDOW);
    if (w < 0) {
      await recordLikeRuntime(rec, e);
      continue;
    }
    const t = timings[w]!;
    const t0 = performance.now();
    rec.record(e);
    const conv = conversations.get(rec);
    if (conv && e.type === 'message') conv.add(e.message);
    if (conv && e.type === 'turn' && e.state === 'checkingContext' && conv.overContext()) {
      rec.record({ type: 'turn', taskId: rec.id, state: 'compacting', turn: e.turn });
      rec.record(conv.compact(rec.id, e.turn));
    }
    const t1 = performance.now();
    t.host += t1 - t0;
    if (e.type === 'turn' && e.state === 'executingTool') {
      await rec.durable();
      const t2 = performance.now();
      t.metaWrites.push(t1 - t0);
      t.durableWaits.push(t2 - t1);
      t.total += t2 - t0;
    } else {
      t.total += t1 - t0;
    }
  }
  return timings;
}

/** The process's CPU time so far (every thread: the thread pool's reads and checksums count), ms. */
function cpuMs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

async function resumeOnce(store: TaskStore, id: string): Promise<{ ms: number; cpuMs: number; maxBlockMs: number; maxBlockCpuMs: number; p99Ms: number; events: number; messages: number; held: unknown }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  // A timer keeps the loop turning so a block shows as delay even when the resume is all I/O; it
  // also takes the CPU time spent between two of its turns: the longest synchronous stretch,
  // which unlike the wall-clock delay does not grow when the machine's load preempts the process.
  let lastCpu = cpuMs();
  let maxBlockCpuMs = 0;
  const tick = setInterval(() => {
    const now = cpuMs();
    maxBlockCpuMs = Math.max(maxBlockCpuMs, now - lastCpu);
    lastCpu = now;
  }, 1);
  h.enable();
  const c0 = cpuMs();
  lastCpu = c0;
  const t0 = performance.now();
  const opened = await store.open(id, 'bench');
  const plan = planResume(opened.replay, Date.now(), 'go on');
  const ms = performance.now() - t0;
  const cpu = cpuMs() - c0;
  h.disable();
  clearInterval(tick);
  await crash(opened.recorder);
  return { ms, cpuMs: cpu, maxBlockMs: h.max / 1e6, maxBlockCpuMs, p99Ms: h.percentile(99) / 1e6, events: opened.replay.events, messages: plan.conversation.length, held: { opened, plan } };
}

function rawParse(path: string): { ms: number; cpuMs: number; lines: number } {
  const c0 = cpuMs();
  const t0 = performance.now();
  const text = readFileSync(path, 'utf8');
  let lines = 0;
  for (const line of text.split('\n')) {
    if (!line) continue;
    JSON.parse(line);
    lines++;
  }
  return { ms: performance.now() - t0, cpuMs: cpuMs() - c0, lines };
}

async function main() {
  const loadAtStart = loadavg()[0]!;
  const root = mkdtempSync(join(tmpdir(), 'keel-store-bench-'));
  try {
    const store = new TaskStore(root, { flushIntervalMs: 250 });
    const early: Timing[] = [];
    for (let r = 0; r < 3; r++) {
      const id = `early-${r}`;
      const rec = startLog(store, id);
      early.push(...(await append(rec, id, 0, 10 + WINDOW, [10])));
      await crash(rec);
      rmSync(join(root, 'tasks', id), { recursive: true, force: true });
    }
    const id = 'long';
    const rec = startLog(store, id);
    const lateStarts = Array.from({ length: LATE_WINDOWS }, (_, k) => EVENTS + k * WINDOW);
    const late = await append(rec, id, 0, EVENTS + LATE_WINDOWS * WINDOW, lateStarts);
    // A live task finishes the snapshot it is writing long before anyone resumes it.
    await rec.snapshotWritten();
    await crash(rec);
    const path = join(root, 'tasks', id, 'events.jsonl');
    const bytes = statSync(path).size;
    const snaps = await listSnapshots(join(root, 'tasks', id));
    const newest = snaps[0];
    if (!newest) throw new Error('the driver wrote no snapshot');
    const snapshotBytes = statSync(join(root, 'tasks', id, 'snapshots', newest.name)).size;
    // The old figure: every read folds the whole log.
    const fullStore = new TaskStore(root, { snapshots: false });

    const resumeMs: number[] = [];
    const rawMs: number[] = [];
    const rawCpu: number[] = [];
    const snapCpu: number[] = [];
    const blockCpu: number[] = [];
    const snapBlockCpu: number[] = [];
    const blocks: number[] = [];
    const p99s: number[] = [];
    const snapResumeMs: number[] = [];
    const snapBlocks: number[] = [];
    const prefixChecks: number[] = [];
    let events = 0;
    let lines = 0;
    let messages = 0;
    for (let i = 0; i < 5; i++) {
      global.gc?.();
      const raw = rawParse(path);
      rawMs.push(raw.ms);
      rawCpu.push(raw.cpuMs);
      lines = raw.lines;
      global.gc?.();
      // What checking the newest snapshot against the log costs alone (part of the resume below).
      const c0 = performance.now();
      if (!(await hashLogPrefix(path, newest.offset))) throw new Error('the newest snapshot does not end a line of the log');
      prefixChecks.push(performance.now() - c0);
      const snap = await resumeOnce(store, id);
      snapResumeMs.push(snap.ms);
      snapBlocks.push(snap.maxBlockMs);
      snapCpu.push(snap.cpuMs);
      snapBlockCpu.push(snap.maxBlockCpuMs);
      global.gc?.();
      const res = await resumeOnce(fullStore, id);
      const a = (snap.held as { plan: { conversation: unknown } }).plan.conversation;
      const b = (res.held as { plan: { conversation: unknown } }).plan.conversation;
      if (snap.events !== res.events || JSON.stringify(a) !== JSON.stringify(b)) throw new Error('the resume from a snapshot differs from the full replay');
      resumeMs.push(res.ms);
      blocks.push(res.maxBlockMs);
      blockCpu.push(res.maxBlockCpuMs);
      p99s.push(res.p99Ms);
      events = res.events;
      messages = res.messages;
    }
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const held = await resumeOnce(fullStore, id);
    global.gc?.();
    const rss = process.memoryUsage().rss;
    // Every line but the header is one event (consecutive deltas of a stream share a line).
    if (events !== lines - 1) throw new Error(`resumed ${events} events from a log of ${lines} lines`);
    const perEventUs = (t: Timing) => (t.total / WINDOW) * 1000;
    const earlyUs = median(early.map(perEventUs));
    const lateUs = median(late.map(perEventUs));
    const hostUs = (t: Timing) => (t.host / WINDOW) * 1000;
    const earlyHostUs = median(early.map(hostUs));
    const lateHostUs = median(late.map(hostUs));
    const all = [...early, ...late];
    const result = {
      recorded_events: EVENTS + LATE_WINDOWS * WINDOW + 5,
      log_events: events,
      log_lines: lines,
      log_mb: Number((bytes / 1e6).toFixed(1)),
      append_us_events_10_to_1009: Number(earlyUs.toFixed(2)),
      append_us_events_100000_to_100999: Number(lateUs.toFixed(2)),
      append_cost_ratio_100k_vs_10: Number((lateUs / earlyUs).toFixed(3)),
      // The event loop's own share (record() alone, no durable wait): what the host pays per event.
      append_host_us_events_10_to_1009: Number(earlyHostUs.toFixed(2)),
      append_host_us_events_100000_to_100999: Number(lateHostUs.toFixed(2)),
      append_host_cost_ratio_100k_vs_10: Number((lateHostUs / earlyHostUs).toFixed(3)),
      // What a tool round waits for, inside those windows: the record() of `turn executingTool`
      // (meta.json written atomically, the log's fdatasync started) and the awaited durable().
      append_meta_write_ms_median: Number(median(all.flatMap((t) => t.metaWrites)).toFixed(2)),
      append_durable_wait_ms_median: Number(median(all.flatMap((t) => t.durableWaits)).toFixed(2)),
      tool_rounds_per_window: WINDOW / CYCLE,
      raw_read_parse_ms: Number(median(rawMs).toFixed(1)),
      resume_ms: Number(median(resumeMs).toFixed(1)),
      resume_ratio_vs_raw_parse: Number((median(resumeMs) / median(rawMs)).toFixed(3)),
      // With the snapshots the driver wrote: the newest one and the log after it.
      resume_with_snapshot_ms: Number(median(snapResumeMs).toFixed(1)),
      resume_100k_ratio_vs_raw_parse: Number((median(snapResumeMs) / median(rawMs)).toFixed(3)),
      resume_with_snapshot_max_event_loop_block_ms: Number(median(snapBlocks).toFixed(1)),
      // The same two, in CPU time (every thread of the process), which load inflates far less than wall time.
      raw_read_parse_cpu_ms: Number(median(rawCpu).toFixed(1)),
      resume_with_snapshot_cpu_ms: Number(median(snapCpu).toFixed(1)),
      resume_100k_cpu_ratio_vs_raw_parse: Number((median(snapCpu) / median(rawCpu)).toFixed(3)),
      resume_with_snapshot_max_cpu_ms_between_loop_turns: Number(median(snapBlockCpu).toFixed(1)),
      // Inside the figure above: reading and hashing (sha256) the log's prefix the snapshot folded.
      snapshot_prefix_check_ms: Number(median(prefixChecks).toFixed(1)),
      snapshot_prefix_check_ratio_vs_raw_parse: Number((median(prefixChecks) / median(rawMs)).toFixed(3)),
      snapshot_every_events: SNAPSHOT_EVERY_EVENTS,
      snapshot_mb: Number((snapshotBytes / 1e6).toFixed(2)),
      snapshot_tail_mb: Number(((bytes - newest.offset) / 1e6).toFixed(2)),
      // Per resume, the longest event-loop block; the median over 6 resumes (a shared 2-core box
      // preempts now and then, so the single worst is reported beside it, not as the figure).
      resume_max_event_loop_block_ms: Number(median([...blocks, held.maxBlockMs]).toFixed(1)),
      // The longest CPU stretch between two turns of the event loop during a full resume (median of 5).
      resume_max_cpu_ms_between_loop_turns: Number(median(blockCpu).toFixed(1)),
      resume_max_event_loop_block_ms_worst_run: Number(Math.max(...blocks, held.maxBlockMs).toFixed(1)),
      resume_event_loop_block_ms_per_run: [...blocks, held.maxBlockMs].map((b) => Number(b.toFixed(1))),
      resume_event_loop_delay_p99_ms_median: Number(median(p99s).toFixed(1)),
      resume_rss_mb: Number((rss / 1e6).toFixed(1)),
      rss_before_last_resume_mb: Number((rssBefore / 1e6).toFixed(1)),
      resumed_conversation_messages: messages,
      goals: { append_cost_ratio_100k_vs_10: 2, resume_ratio_vs_raw_parse: 3, resume_100k_ratio_vs_raw_parse: 0.25, resume_max_event_loop_block_ms: 50, append_meta_write_ms_median: 1 },
      // The machine's load (1-minute average) when the bench started and ended: figures move with it.
      load_average_start: Number(loadAtStart.toFixed(2)),
      load_average_end: Number(loadavg()[0]!.toFixed(2)),
      node: process.version,
    };
    void held.held;
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
void main();
