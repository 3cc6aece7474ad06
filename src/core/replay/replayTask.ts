import { join } from 'node:path';
import type { TaskEvent } from '../../shared/domain/events';
import { readLog } from '../store/logReader';
import type { TaskStore } from '../store/taskStore';
import { StoreError, type LogHeader } from '../store/types';
import { TaskRuntime } from '../runtime/taskRuntime';
import { builtinTools, createToolRegistry } from '../tools/registry';
import { recordedAnswers, recordedDecisions, RecordedModel, recordedTools } from './playback';
import { recordingOf, type Recording } from './recording';

/** The first event where a replay and the log disagree. */
export interface Divergence {
  /** 0-based index among the compared events (the log's lines after the header). */
  index: number;
  /** The log's event there (normalised), or null when the replay published more events. */
  expected: unknown;
  /** The replay's event there (normalised), or null when it stopped early. */
  actual: unknown;
}

export interface ReplayResult {
  taskId: string;
  /** Events compared (the log's, up to `until` or an interruption). */
  compared: number;
  divergence: Divergence | null;
  /** Set when the log goes on past what a replay can re-create (an interruption and its resume). */
  stoppedAt?: { index: number; reason: string };
}

export interface ReplayOptions {
  /** Compare only the first N events. */
  until?: number;
  /** The longest quiet stretch (no event) before the replay is given up as stuck (default 30 s, plus any recorded retry wait). */
  idleMs?: number;
}

/**
 * Re-runs a stored task's machines from its log — the model's responses, the tools' results, the
 * permission decisions and the person's answers played back through the real interfaces — and
 * checks that the same events come out in the same order. Never writes to the store (the replay
 * runs in memory) and never calls a model or runs a tool. Throws StoreError when the task cannot
 * be read.
 */
export async function replayTask(store: TaskStore, id: string, opts: ReplayOptions = {}): Promise<ReplayResult> {
  const { header, events } = await readEvents(store, id);
  const recording = recordingOf(events);
  const children = await subtaskRecordings(store, id);
  const all = [recording, ...children];
  let expected = events;
  let stoppedAt: ReplayResult['stoppedAt'];
  if (recording.interruptedAt >= 0) {
    expected = events.slice(0, recording.interruptedAt);
    stoppedAt = { index: recording.interruptedAt, reason: 'the task was interrupted here; what follows (its resume) is not replayed' };
  }
  if (opts.until !== undefined && opts.until < expected.length) expected = expected.slice(0, opts.until);
  const firstPrompt = recording.prompts[0];
  if (firstPrompt === undefined) return { taskId: id, compared: 0, divergence: null, ...(stoppedAt ? { stoppedAt } : {}) };

  const runtime = new TaskRuntime({
    workspace: header.workspace ?? process.cwd(),
    providerFactory: () => new RecordedModel(all),
    tools: recordedTools(createToolRegistry(builtinTools), all),
    permissions: recordedDecisions(mergeDecisions(all)),
    asker: recordedAnswers(all),
  });
  const actual: TaskEvent[] = [];
  let replayId = '';
  try {
    await new Promise<void>((resolve) => {
      const prompts = recording.prompts.slice(1);
      const maxDelay = Math.max(0, ...events.map((e) => (e.type === 'retry' ? e.delayMs : 0)));
      const idleMs = (opts.idleMs ?? 30_000) + maxDelay;
      let timer = setTimeout(resolve, idleMs);
      const handle = runtime.startTask({ prompt: firstPrompt, title: header.title ?? '', provider: { provider: 'anthropic', model: header.model ?? '' } });
      replayId = handle.id;
      handle.subscribe((e) => {
        actual.push(e);
        clearTimeout(timer);
        timer = setTimeout(resolve, idleMs);
        // A replay that went astray may not end by itself: far more events than recorded is enough to show where.
        if (actual.length > 4 * events.length + 100) {
          clearTimeout(timer);
          resolve();
          return;
        }
        if (e.type !== 'done') return;
        const next = prompts.shift();
        if (next === undefined) {
          clearTimeout(timer);
          setImmediate(resolve);
        } else setImmediate(() => handle.sendUserMessage(next));
      });
    });
    const want = normalised(expected, header.taskId, header.taskId);
    const replayed = normalised(actual, header.taskId, replayId);
    const got = opts.until !== undefined ? replayed.slice(0, want.length) : replayed;
    return { taskId: id, compared: want.length, divergence: firstDivergence(want, got), ...(stoppedAt ? { stoppedAt } : {}) };
  } finally {
    runtime.dispose();
  }
}

async function readEvents(store: TaskStore, id: string): Promise<{ header: LogHeader; events: TaskEvent[] }> {
  const events: TaskEvent[] = [];
  const log = await readLog(join(store.taskDir(id), 'events.jsonl'), (r) => events.push(r.event));
  return { header: log.header, events };
}

/** The recordings of a task's sub-agents (and theirs), each with its events' times for ordering. */
async function subtaskRecordings(store: TaskStore, id: string): Promise<(Recording & { times?: number[] })[]> {
  const { tasks } = await store.list({ includeSubtasks: true });
  const out: Recording[] = [];
  // In the order they were started (a listing is newest first).
  for (const t of tasks.filter((x) => x.parentId === id).sort((a, b) => a.createdAt - b.createdAt)) {
    try {
      const { events } = await readEvents(store, t.id);
      out.push(recordingOf(events), ...(await subtaskRecordings(store, t.id)));
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
    }
  }
  return out;
}

/** The permission decisions of a task and its sub-agents in the order they were made: a sub-agent's run while its parent waits. */
function mergeDecisions(all: Recording[]): Recording {
  const [root, ...children] = all;
  if (!root) throw new Error('no recording');
  if (children.length === 0) return root;
  // A parent waits in its Task call while the child runs: the child's decisions come right after
  // the parent's decision of that Task call.
  const decisions: Recording['decisions'] = [];
  const queue = [...children];
  const seen = new Set<string>();
  let i = 0;
  for (const e of root.events) {
    if (e.type !== 'permission' || seen.has(e.toolCallId)) continue;
    seen.add(e.toolCallId);
    const d = root.decisions[i++];
    if (d) decisions.push(d);
    const allowed = e.decision === 'allow' || root.answers.get(e.toolCallId)?.decision === 'allow';
    if (e.tool === 'Task' && allowed) decisions.push(...(queue.shift()?.decisions ?? []));
  }
  decisions.push(...root.decisions.slice(i));
  return { ...root, decisions };
}

type Normalised = Record<string, unknown>;

/**
 * Project memory is not played back: which memories a run finds depends on the workspace's
 * `.keel/memory/` as it is now, and the gatekeeper's lesson call is not in the log. Their events
 * (and a memory write's phase, and the lesson call's usage with its share of the later running
 * totals) are left out of the comparison on both sides; the replay runs with memory off.
 */
// `waiting` says the live stream was quiet for a while: a replay's recorded answers come at once.
const NOT_REPLAYED = new Set<TaskEvent['type']>(['instructions', 'memory', 'gatekeeper', 'waiting']);

/**
 * Events as compared: without project memory's (NOT_REPLAYED), without task ids (a replay runs under a new id, which also names its user
 * messages), without the measured duration of a run phase, permission request ids numbered by
 * first appearance (they are random), and
 * consecutive streamed deltas merged as the log merges them.
 */
function normalised(events: TaskEvent[], recordedId: string, replayId: string): Normalised[] {
  const out: Normalised[] = [];
  const requests = new Map<string, string>();
  // The lesson call's usage (published while the gatekeeper evaluates) is project memory's too: it
  // is left out, and the running totals after it are compared without what it cost.
  let inGatekeeper = false;
  let lessonCostUsd = 0;
  for (const e of events) {
    if (e.type === 'phase') inGatekeeper = e.phase === 'gatekeeperEvaluating';
    if (e.type === 'usage' && inGatekeeper) {
      lessonCostUsd += e.costUsd;
      continue;
    }
    if (NOT_REPLAYED.has(e.type) || (e.type === 'phase' && (e.phase === 'memoryPersisting' || e.previous === 'memoryPersisting'))) continue;
    let text = JSON.stringify(e);
    if (replayId) text = text.split(replayId).join('<task>');
    if (recordedId) text = text.split(recordedId).join('<task>');
    const n = JSON.parse(text) as Normalised;
    delete n.taskId;
    // How long a run phase took is measured, not decided by the machines.
    if (e.type === 'phase') delete n.ms;
    // Rounded: a total that had a lesson's cost added, then taken away, differs in its last bits.
    if (e.type === 'usage') n.totalCostUsd = Number((e.totalCostUsd - lessonCostUsd).toFixed(9));
    if (e.type === 'permission') {
      if (!requests.has(e.requestId)) requests.set(e.requestId, `request-${requests.size + 1}`);
      n.requestId = requests.get(e.requestId);
    }
    const prev = out[out.length - 1];
    if (prev && (e.type === 'text' || e.type === 'thinking') && prev.type === e.type) {
      prev.delta = String(prev.delta) + String(n.delta);
      continue;
    }
    if (prev && e.type === 'tool_output' && prev.type === 'tool_output' && prev.id === e.id) {
      prev.chunk = String(prev.chunk) + String(n.chunk);
      continue;
    }
    out.push(n);
  }
  return out;
}

function firstDivergence(expected: Normalised[], actual: Normalised[]): Divergence | null {
  const n = Math.max(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    const a = expected[i];
    const b = actual[i];
    if (a === undefined || b === undefined || JSON.stringify(a) !== JSON.stringify(b)) return { index: i, expected: a ?? null, actual: b ?? null };
  }
  return null;
}
