import { join } from 'node:path';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent } from '../../shared/domain/events';
import { readLog } from '../store/logReader';
import type { TaskStore } from '../store/taskStore';
import { StoreError, type LogHeader } from '../store/types';
import { TaskRuntime } from '../runtime/taskRuntime';
import { builtinTools, createToolRegistry } from '../tools/registry';
import { recordedAnswers, recordedDecisions, RecordedModel, recordedTools } from './playback';
import { Normaliser, sameEvent, type Normalised } from './normalise';
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
    const reason =
      recording.interruptedBecause === 'log-ends'
        ? 'the log ends here while the task was running (its process ended without recording why)'
        : 'the task was interrupted here; what follows (its resume) is not replayed';
    stoppedAt = { index: recording.interruptedAt, reason };
  }
  if (opts.until !== undefined && opts.until < expected.length) expected = expected.slice(0, opts.until);
  const firstPrompt = recording.prompts[0];
  if (firstPrompt === undefined) return { taskId: id, compared: 0, divergence: null, ...(stoppedAt ? { stoppedAt } : {}) };

  // The comparison stops before the log's end (or at a log that ends mid-run): the replay ends there too.
  const cutShort = stoppedAt !== undefined || expected.length < events.length;
  // What the log says, as compared; and where in it each cancel of the person's falls.
  const want = Normaliser.of(expected, header.taskId);
  const cancelAt = recording.cancels.map((i) => Normaliser.of(events.slice(0, i), header.taskId).length);
  // Messages the person sent while a run was under way, and queued ones they cancelled: at the
  // same place among the compared events, the replay does the same.
  const positionOf = (i: number) => Normaliser.of(events.slice(0, i), header.taskId).length;
  const queuedAt = recording.prompts.flatMap((p) => (p.queuedAt !== undefined ? [{ at: positionOf(p.queuedAt), prompt: p }] : []));
  const withdrawAt = recording.withdrawals.map((w) => ({ at: positionOf(w.at), id: w.id }));
  // Each run's start as recorded: a run whose provider could not be made (no key) fails the same way.
  const runStarts = [...recording.runStarts];
  let rootStart: KeelError | null | undefined;
  const runtime = new TaskRuntime({
    workspace: header.workspace ?? process.cwd(),
    providerFactory: () => {
      const failed = rootStart;
      rootStart = undefined;
      return failed ?? new RecordedModel(all);
    },
    tools: recordedTools(createToolRegistry(builtinTools), all),
    permissions: recordedDecisions(mergeDecisions(all)),
    asker: recordedAnswers(all),
    // The recording host's advice, as it appended it to an error's message.
    advise: ({ code }) => recording.advice.get(code),
  });
  let replayId = '';
  const actual = new Normaliser(header.taskId, () => replayId);
  let published = 0;
  try {
    await new Promise<void>((resolve) => {
      // Sent by the person after a run ended; the queued ones are sent where they were queued.
      const prompts = recording.prompts.slice(1).filter((p) => p.queuedAt === undefined);
      const send = (p: (typeof prompts)[number]) =>
        handle.sendUserMessage(p.text, { ...(p.attachments ? { attachments: p.attachments } : {}), ...(p.images ? { images: p.images } : {}), ...(p.typed !== undefined ? { typed: p.typed } : {}) });
      let runsEnded = 0;
      const maxDelay = Math.max(0, ...events.map((e) => (e.type === 'retry' ? e.delayMs : 0)));
      const idleMs = (opts.idleMs ?? 30_000) + maxDelay;
      let timer = setTimeout(resolve, idleMs);
      const finish = () => {
        clearTimeout(timer);
        setImmediate(resolve);
      };
      const handle = runtime.startTask({
        prompt: firstPrompt.text,
        ...(firstPrompt.attachments ? { attachments: firstPrompt.attachments } : {}),
        ...(firstPrompt.images ? { images: firstPrompt.images } : {}),
        ...(firstPrompt.typed !== undefined ? { typed: firstPrompt.typed } : {}),
        title: header.title ?? '',
        provider: { provider: 'anthropic', model: header.model ?? '' },
      });
      replayId = handle.id;
      handle.subscribe((e) => {
        published++;
        actual.push(e);
        clearTimeout(timer);
        timer = setTimeout(resolve, idleMs);
        if (e.type === 'task' && e.state === 'initializing') rootStart = runStarts.shift() ?? null;
        // The person cancelled here: so does the replay, once it has published what came before.
        while (cancelAt.length > 0 && actual.covers(want, cancelAt[0]!)) {
          const at = cancelAt.shift()!;
          if (actual.out.length === at) handle.cancel();
        }
        while (queuedAt.length > 0 && actual.covers(want, queuedAt[0]!.at)) {
          const { at, prompt } = queuedAt.shift()!;
          if (actual.out.length === at) send(prompt);
        }
        while (withdrawAt.length > 0 && actual.covers(want, withdrawAt[0]!.at)) {
          const { at, id: queued } = withdrawAt.shift()!;
          if (actual.out.length === at) handle.withdrawQueued(queued.split(header.taskId).join(replayId));
        }
        // A log cut short (an interruption, --until): nothing after it is compared, so the replay ends there.
        if (cutShort && actual.covers(want, want.length)) return finish();
        // A replay that went astray may not end by itself: far more events than recorded is enough to show where.
        if (published > 4 * events.length + 100) return finish();
        if (e.type !== 'done') return;
        runsEnded += 1;
        // The messages queued during this run start the next one by themselves.
        if (recording.prompts.some((p) => p.queuedAt !== undefined && p.afterRuns === runsEnded)) return;
        const next = prompts.shift();
        if (next === undefined) finish();
        else setImmediate(() => send(next));
      });
    });
    const got = cutShort ? actual.out.slice(0, want.length) : actual.out;
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

function firstDivergence(expected: Normalised[], actual: Normalised[]): Divergence | null {
  const n = Math.max(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    const a = expected[i];
    const b = actual[i];
    if (!sameEvent(a, b)) return { index: i, expected: a ?? null, actual: b ?? null };
  }
  return null;
}
