import { formatDuration } from './duration';
import type { QueuedMessage, RunPhase, StreamMode, TaskEvent } from './events';
import type { TodoItem } from './todos';
import type { TaskStateTag } from './stateTags';
import { MAX_CARD_IMAGES } from './toolImages';
import type { TranscriptItem } from './transcriptItem';

export type { TranscriptItem };

/**
 * What a person sees of a task: the items of the chat and the header figures. The host keeps one
 * per task by folding task events through `applyTaskEvent`; a view that attaches gets it whole
 * (the snapshot) and then folds the same events itself (the deltas). One pure function on both
 * sides means the two can never disagree about what an event does.
 */
/** The header's view of the runs' phases: the current run, its phase and the time spent in each phase. */
export interface RunPhasesView {
  run: number;
  phase: RunPhase;
  /** Milliseconds per phase in this run (a phase entered several times adds up). */
  durations: Partial<Record<RunPhase, number>>;
  failure?: string;
}

export interface TaskTranscript {
  taskId: string;
  title: string;
  /** The task machine's state, as a dotted path (e.g. "running", "awaitingUser"); never shown as is. */
  state: string;
  /** What that state means (its tags in the task machine; stateTags.ts): what views decide by. */
  tags: TaskStateTag[];
  turnState: string;
  turn: number;
  streamMode: StreamMode | null;
  model: string;
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; costUsd: number };
  items: TranscriptItem[];
  done: boolean;
  /** Set once a run reported its phases. */
  phases?: RunPhasesView;
  /** Bytes the task's checkpoints hold (own and shared with forks), once a checkpoint was taken. */
  checkpointBytes?: number;
  /**
   * Messages the person sent while a run was under way, oldest first: they wait for the run to
   * end (absent: none). A task stopped mid-run gives them back (`unqueued` returned); a stored
   * task's transcript has none.
   */
  queued?: QueuedMessage[];
  /**
   * The task's budget (docs/cli.md, "Budget"): its cap (null: none) and what it spent, sub-agents
   * and calls outside its runs included. Absent until a budget event.
   */
  budget?: { capUsd: number | null; spentUsd: number };
  /** The agent's todo list as it last wrote it (TodoWrite); absent until it writes one. */
  todos?: TodoItem[];
  /**
   * Set while Keel waits on a quiet answer (a `waiting` event: quiet for `quietMs`, given up
   * as stalled after `stallAfterMs`); the chat shows `waitingNotice` under the answer. A passing
   * state, never an item: the next part of the answer, a retry, an error, the run's end or the
   * task stopping clears it (`endsWaiting`). A transcript from the store never has it.
   */
  waiting?: QuietAnswer;
}

/** How long an answer has been quiet, and after how long of silence Keel gives the attempt up. */
export interface QuietAnswer {
  quietMs: number;
  stallAfterMs: number;
}

export function emptyTranscript(taskId: string, title: string, model: string): TaskTranscript {
  return {
    taskId,
    title,
    state: 'created',
    tags: [],
    turnState: 'idle',
    turn: 0,
    streamMode: null,
    model,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
    items: [],
    done: false,
  };
}

function lastStreamingAssistant(items: TranscriptItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind === 'assistant') return it.streaming ? i : -1;
    // A rewind closes what came before it: nothing streams across one.
    if (it.kind === 'user' || it.kind === 'rewind') return -1;
  }
  return -1;
}

function replaceAt(items: TranscriptItem[], i: number, item: TranscriptItem): TranscriptItem[] {
  const next = items.slice();
  next[i] = item;
  return next;
}

/**
 * Whether an event ends a wait on a quiet answer (`TaskTranscript.waiting`): a part of the answer
 * came (`waiting_ended` says so for any part; the others are parts themselves), the attempt ended
 * (retry, error), the run ended, the person sent a message, the chat was rewound, or the task
 * left its running states. Shared with the store's TranscriptBuilder.
 */
export function endsWaiting(e: TaskEvent): boolean {
  switch (e.type) {
    case 'waiting_ended':
    case 'assistant_start':
    case 'text':
    case 'thinking':
    case 'tool_call':
    case 'stream':
    case 'retry':
    case 'error':
    case 'done':
    case 'user_message':
    case 'rewind':
      return true;
    case 'task':
      return !(e.tags ?? []).includes('running');
    default:
      return false;
  }
}

/**
 * Folds one event into a transcript. Pure: returns a new transcript (sharing unchanged items),
 * never mutates its argument, and ignores events it has no use for.
 */
export function applyTaskEvent(t: TaskTranscript, e: TaskEvent): TaskTranscript {
  const next = foldEvent(t, e);
  if (next.waiting === undefined || !endsWaiting(e)) return next;
  const { waiting: _, ...rest } = next;
  return rest;
}

function foldEvent(t: TaskTranscript, e: TaskEvent): TaskTranscript {
  switch (e.type) {
    case 'task':
      return { ...t, state: e.state, tags: e.tags ?? [], title: e.title ?? t.title };
    case 'turn':
      return { ...t, turnState: e.state, turn: e.turn };
    case 'user_message':
      return { ...t, done: false, items: [...closeStreaming(t.items), userItem(e)] };
    case 'todos':
      return { ...t, todos: e.todos };
    case 'budget':
      return { ...t, budget: { capUsd: e.capUsd, spentUsd: e.spentUsd } };
    case 'queued':
      return { ...t, queued: [...(t.queued ?? []).filter((q) => q.id !== e.message.id), e.message] };
    case 'unqueued': {
      const gone = new Set(e.ids);
      const queued = (t.queued ?? []).filter((q) => !gone.has(q.id));
      const { queued: _, ...rest } = t;
      return queued.length > 0 ? { ...rest, queued } : rest;
    }
    case 'stream':
      return { ...t, streamMode: e.mode };
    case 'assistant_start': {
      const items = closeStreaming(t.items);
      return { ...t, model: e.model || t.model, items: [...items, { kind: 'assistant', id: e.messageId, model: e.model, text: '', thinking: '', streaming: true }] };
    }
    case 'text':
    case 'thinking': {
      const i = lastStreamingAssistant(t.items);
      if (i < 0) return t;
      const it = t.items[i] as Extract<TranscriptItem, { kind: 'assistant' }>;
      const updated = e.type === 'text' ? { ...it, text: it.text + e.delta } : { ...it, thinking: it.thinking + e.delta };
      return { ...t, items: replaceAt(t.items, i, updated) };
    }
    case 'tool_call':
      return { ...t, items: [...closeStreaming(t.items), { kind: 'tool', id: e.id, name: e.name, input: e.input, output: '' }] };
    case 'tool_output':
    case 'tool_images':
    case 'tool_result':
    case 'permission': {
      const id = e.type === 'permission' ? e.toolCallId : e.id;
      let i = -1;
      for (let k = t.items.length - 1; k >= 0; k--) {
        const it = t.items[k]!;
        if (it.kind === 'tool' && it.id === id) {
          i = k;
          break;
        }
      }
      if (i < 0) return t;
      const it = t.items[i] as Extract<TranscriptItem, { kind: 'tool' }>;
      const updated =
        e.type === 'tool_output'
          ? { ...it, output: it.output + e.chunk }
          : e.type === 'tool_images'
            ? { ...it, images: [...(it.images ?? []), ...e.images].slice(0, MAX_CARD_IMAGES) }
          : e.type === 'tool_result'
            ? { ...it, result: { isError: e.is_error, summary: e.summary } }
            : { ...it, permission: { requestId: e.requestId, decision: e.decision, ...(e.reason ? { reason: e.reason } : {}) } };
      return { ...t, items: replaceAt(t.items, i, updated) };
    }
    case 'usage':
      return {
        ...t,
        usage: {
          inputTokens: t.usage.inputTokens + e.inputTokens,
          outputTokens: t.usage.outputTokens + e.outputTokens,
          cacheReadTokens: t.usage.cacheReadTokens + e.cacheReadTokens,
          cacheWriteTokens: t.usage.cacheWriteTokens + e.cacheWriteTokens,
          costUsd: e.totalCostUsd,
        },
      };
    case 'retry':
      // The attempt is given up and another follows: what it streamed is kept, marked as retried.
      return { ...t, items: [...closeStreaming(t.items, 'retried'), { kind: 'notice', id: `retry-${t.items.length}`, text: retryNotice(e) }] };
    case 'error':
      return {
        ...t,
        items: [...closeStreaming(t.items, 'interrupted'), { kind: 'error', id: `err-${t.items.length}`, code: e.code, message: e.message, retryable: e.retryable }],
      };
    case 'message':
    case 'compacted':
      // Conversation content for the log; what a person sees came with the other events.
      return t;
    case 'waiting':
      // A passing state of the live stream: shown while it lasts, never kept as an item.
      return { ...t, waiting: { quietMs: e.quietMs, stallAfterMs: e.stallAfterMs } };
    case 'waiting_ended':
      // What it ends is done by applyTaskEvent (endsWaiting).
      return t;
    case 'done':
      return { ...t, done: true, streamMode: null, items: closeStreaming(t.items, e.status === 'aborted' ? 'cancelled' : undefined) };
    case 'phase':
      return { ...t, phases: nextPhases(t.phases, e) };
    case 'instructions':
    case 'memory': {
      const last = t.items[t.items.length - 1];
      const base = last?.kind === 'context' && last.run === e.run ? last : null;
      const item: TranscriptItem = {
        kind: 'context',
        id: base ? base.id : `ctx-${t.items.length}`,
        run: e.run,
        instructions: e.type === 'instructions' ? e.files : (base?.instructions ?? []),
        memories: e.type === 'memory' ? e.hits.map((h) => ({ file: h.file, title: h.title })) : (base?.memories ?? []),
      };
      return { ...t, items: base ? replaceAt(t.items, t.items.length - 1, item) : [...t.items, item] };
    }
    case 'gatekeeper':
      // A skipped decision (memory off, the demo model, nothing learned) stays in the log only.
      return e.decision === 'skipped' ? t : { ...t, items: [...t.items, gatekeeperItem(e, t.items.length)] };
    case 'checkpoint': {
      let i = -1;
      for (let k = t.items.length - 1; k >= 0; k--) {
        const it = t.items[k]!;
        if (it.kind === 'tool' && it.id === e.toolCallId) {
          i = k;
          break;
        }
      }
      const withBytes = { ...t, checkpointBytes: e.storedBytes };
      if (i < 0) return withBytes;
      const it = t.items[i] as Extract<TranscriptItem, { kind: 'tool' }>;
      return { ...withBytes, items: replaceAt(t.items, i, { ...it, checkpoint: e.files }) };
    }
    case 'rewind': {
      const kept = e.items ?? closeStreaming(t.items);
      return { ...t, items: [...kept, rewindItem(e)] };
    }
  }
}

/** The transcript item of a rewind or fork event (pure; shared with the store's TranscriptBuilder). */
export function rewindItem(e: Extract<TaskEvent, { type: 'rewind' }>): TranscriptItem {
  return {
    kind: 'rewind',
    id: e.id,
    action: e.action,
    step: e.step,
    stepId: e.stepId,
    scope: e.scope,
    label: e.label,
    files: e.files,
    ...(e.forkedFrom ? { forkedFrom: e.forkedFrom } : {}),
    ...(e.forkedTo ? { forkedTo: e.forkedTo } : {}),
  };
}

/** The transcript item of a `user_message` event (shared with the store's TranscriptBuilder). Pure. */
export function userItem(e: Extract<TaskEvent, { type: 'user_message' }>): TranscriptItem {
  return {
    kind: 'user',
    id: e.id,
    text: e.text,
    ...(e.typed !== undefined ? { typed: e.typed } : {}),
    ...(e.attachments && e.attachments.length > 0 ? { attachments: e.attachments } : {}),
    ...(e.images && e.images.length > 0 ? { images: e.images } : {}),
  };
}

/** The header's phases after a `phase` event (pure; shared with the store's TranscriptBuilder). */
export function nextPhases(prev: RunPhasesView | undefined, e: Extract<TaskEvent, { type: 'phase' }>): RunPhasesView {
  const durations = prev && prev.run === e.run ? { ...prev.durations } : {};
  if (e.previous && e.previous !== 'idle') durations[e.previous] = (durations[e.previous] ?? 0) + e.ms;
  return { run: e.run, phase: e.phase, durations, ...(e.failure ? { failure: e.failure } : {}) };
}

/** The transcript item of a gatekeeper decision, at position `index`. */
export function gatekeeperItem(e: Extract<TaskEvent, { type: 'gatekeeper' }>, index: number): TranscriptItem {
  return { kind: 'gatekeeper', id: `gk-${index}`, run: e.run, decision: e.decision, rule: e.rule, reasons: e.reasons, ...(e.file ? { file: e.file } : {}), ...(e.title ? { title: e.title } : {}) };
}

/**
 * What a person is told while the model's answer is quiet (a `waiting` event): how long it has
 * been quiet and the stall timeout in force (the one the person set, else the default), written
 * as the `stream_stalled` message writes it, so a set 2.5 s reads "2.5 s", not "3 s".
 */
export function waitingNotice(e: QuietAnswer): string {
  return `No part of the answer for ${formatDuration(e.quietMs)}; Keel waits up to ${formatDuration(e.stallAfterMs)} of silence, then gives this attempt up as stalled and tries again.`;
}

/** What a person reads about a retry: what failed, how long Keel waits, which retry this is. */
export function retryNotice(e: Extract<TaskEvent, { type: 'retry' }>): string {
  const what = e.message.trim() || `The request failed (${e.code}).`;
  return `${what} Retrying in ${formatDuration(e.delayMs)} (retry ${e.attempt}).`;
}

/**
 * Why an answer stopped before its end (the flag `closeStreaming` sets on it): `interrupted` (the
 * run ended with it unfinished), `retried` (given up for another attempt, which follows),
 * `cancelled` (the person stopped the task).
 */
export type AnswerCutOff = 'interrupted' | 'retried' | 'cancelled';

/** The item's flag for each way an answer is cut off (shared with the store's TranscriptBuilder). */
export const CUT_OFF_FLAG: Readonly<Record<AnswerCutOff, { interrupted: true } | { retried: true } | { cancelled: true }>> = {
  interrupted: { interrupted: true },
  retried: { retried: true },
  cancelled: { cancelled: true },
};

/** Ends the answer that is streaming, if any, marking why it was cut off (`cut`; none: it ended). */
function closeStreaming(items: TranscriptItem[], cut?: AnswerCutOff): TranscriptItem[] {
  const i = lastStreamingAssistant(items);
  if (i < 0) return items;
  const it = items[i] as Extract<TranscriptItem, { kind: 'assistant' }>;
  return replaceAt(items, i, { ...it, streaming: false, ...(cut ? CUT_OFF_FLAG[cut] : {}) });
}
