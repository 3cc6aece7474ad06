import type { CheckpointFileNote, RewindRecord } from './checkpoints';
import type { ErrorCode } from './errors';
import type { ConversationMessage, StopReason } from './messages';
import type { TaskStateTag, TurnStateTag } from './stateTags';
import type { CardImage } from './toolImages';
import type { GatekeeperOutcome, PermissionDecision, TranscriptItem } from './transcriptItem';
import type { AttachedImageInfo, AttachmentSummary } from './attachments';
import type { TodoItem } from './todos';

export type { AttachedImageInfo, GatekeeperOutcome, PermissionDecision };

/** A message the person sent while a run was under way: it waits for the run to end (`queued`). */
export interface QueuedMessage {
  id: string;
  /** What the model will read (a custom command's expansion). */
  text: string;
  /** What the person typed, when it differs from `text` (`/review a.ts`): what views show and give back. */
  typed?: string;
  attachments?: AttachmentSummary[];
  images?: AttachedImageInfo[];
}

/**
 * Why messages left the queue: `sent` (the run ended; they are the next run's messages, their
 * `user_message` events follow), `withdrawn` (the person cancelled one), `returned` (the run was
 * cancelled or stopped: they go back to the person's composer, unsent).
 */
export type UnqueuedOutcome = 'sent' | 'withdrawn' | 'returned';

/**
 * What a task tells the outside world, in order. The CLI prints these as NDJSON
 * (`--output-format stream-json`); the extension turns them into webview deltas.
 * Every event names its task.
 */
export type TaskStatus = 'running' | 'completed' | 'interrupted' | 'failed' | 'aborted';

/** The user-visible mode of the stream machine. */
export type StreamMode = 'requesting' | 'responding' | 'toolInput' | 'thinking';

/**
 * The phases of one run of a task (the runPhases machine, src/core/machines/runPhases/): settings
 * and instructions files, memory search, the runner (the turn loop) and its tool events, then the
 * gatekeeper and the memory write. `failed` from any phase.
 */
export const RUN_PHASES = [
  'idle',
  'initializing',
  'memorySearch',
  'runnerStarting',
  'runnerRunning',
  'processingToolEvents',
  'gatekeeperEvaluating',
  'memoryPersisting',
  'completed',
  'failed',
] as const;
export type RunPhase = (typeof RUN_PHASES)[number];

/** A memory a run's search injected into its context (`.keel/memory/<file>`). */
export interface MemoryHitInfo {
  file: string;
  title: string;
  /** The search's BM25 score (higher is more relevant). */
  score: number;
}

export type TaskEvent =
  /**
   * The task machine entered `state`. `tags` say what it means (src/shared/domain/stateTags.ts):
   * views and listeners read them, never the state's name. Logs written before tags existed lack
   * them; readers of a log take the definition's tags for the name (`taskStateTags`).
   */
  | { type: 'task'; taskId: string; state: string; title?: string; tags?: TaskStateTag[] }
  /** The turn machine entered `state`; `tags` say what it means (stateTags.ts; absent in older logs). */
  | { type: 'turn'; taskId: string; state: string; turn: number; tags?: TurnStateTag[] }
  /**
   * A message of the person; `text`: what the model reads; `typed`: what the person typed, when
   * that differs (a custom command `/review a.ts` or an MCP prompt, expanded into `text`): views
   * show it, with `text` on demand; `attachments`: what its mentions brought (the content is in the
   * `message` event); `images`: the images attached to it (their data is in the `message` event).
   */
  | { type: 'user_message'; taskId: string; id: string; text: string; typed?: string; attachments?: AttachmentSummary[]; images?: AttachedImageInfo[] }
  /** The person sent a message while a run was under way: it waits, and is sent when the run ends. */
  | { type: 'queued'; taskId: string; message: QueuedMessage }
  /** Queued messages left the queue (`outcome` says how). */
  | { type: 'unqueued'; taskId: string; ids: string[]; outcome: UnqueuedOutcome }
  /** The conversation grew by one message (user text, a complete assistant answer, tool results): what a log must keep to rebuild it. */
  | { type: 'message'; taskId: string; message: ConversationMessage }
  /** The conversation was compacted: from now on it is `messages`. */
  | { type: 'compacted'; taskId: string; messages: ConversationMessage[]; summary: boolean }
  | { type: 'stream'; taskId: string; mode: StreamMode }
  | { type: 'assistant_start'; taskId: string; messageId: string; model: string }
  | { type: 'text'; taskId: string; delta: string }
  | { type: 'thinking'; taskId: string; delta: string }
  | { type: 'tool_call'; taskId: string; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_output'; taskId: string; id: string; chunk: string }
  /** Images the tool returned, for its card: each a `data:` URL the host checked (toolImages.ts). Sent once, after the call. */
  | { type: 'tool_images'; taskId: string; id: string; images: CardImage[] }
  | { type: 'tool_result'; taskId: string; id: string; is_error: boolean; summary: string }
  /** The agent's todo list, whole, as TodoWrite last set it (src/shared/domain/todos.ts). */
  | { type: 'todos'; taskId: string; todos: TodoItem[] }
  /**
   * The task's budget changed (docs/cli.md, "Budget"): its cap (null: none) and what it has spent,
   * its sub-agents and calls outside its runs included.
   */
  | { type: 'budget'; taskId: string; capUsd: number | null; spentUsd: number }
  | { type: 'permission'; taskId: string; requestId: string; toolCallId: string; tool: string; decision: PermissionDecision; reason?: string }
  | {
      type: 'usage';
      taskId: string;
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
      costUsd: number;
      totalCostUsd: number;
    }
  /** A failed model request will be sent again after `delayMs`; `message` says what failed. */
  | { type: 'retry'; taskId: string; attempt: number; delayMs: number; code: ErrorCode; message: string }
  /** The model's answer has been quiet for `quietMs` (once per silence); after `stallAfterMs` the attempt is retried as stalled. */
  | { type: 'waiting'; taskId: string; quietMs: number; stallAfterMs: number }
  /**
   * The answer moves again after a `waiting` (a part of it arrived, of any kind: text, thinking,
   * a tool's input): Keel is no longer waiting on it. A retry, an error or the run's end also
   * end the wait, without this event.
   */
  | { type: 'waiting_ended'; taskId: string }
  | { type: 'error'; taskId: string; code: ErrorCode; message: string; retryable: boolean }
  | { type: 'done'; taskId: string; status: TaskStatus; stopReason: StopReason | null }
  /**
   * The run's phase changed. `run` numbers the runs of this task in this process (from 1);
   * `ms` is how long the run spent in `previous`; `failure` says why a run ended `failed`.
   */
  | { type: 'phase'; taskId: string; run: number; phase: RunPhase; previous: RunPhase | null; ms: number; failure?: string }
  /** Instructions files (KEEL.md, AGENTS.md, CLAUDE.md, …) read into this run's system prompt. */
  | { type: 'instructions'; taskId: string; run: number; files: string[] }
  /** Memories injected into this run's context, best first, and their size in tokens. */
  | { type: 'memory'; taskId: string; run: number; hits: MemoryHitInfo[]; tokens: number }
  /**
   * The gatekeeper's decision after a run: `rule` decided it, `reasons` say why; `file` and
   * `title` name a saved memory. A rejected lesson's text is never recorded.
   */
  | { type: 'gatekeeper'; taskId: string; run: number; decision: GatekeeperOutcome; rule: string; reasons: string[]; file?: string; title?: string }
  /**
   * What a tool call's checkpoint kept before the call changed files (src/core/checkpoints): each
   * file, kept or not and why; `storedBytes`: the task's checkpoint storage now.
   */
  | { type: 'checkpoint'; taskId: string; toolCallId: string; files: CheckpointFileNote[]; storedBytes: number }
  /**
   * A rewind (or a fork) of this task (docs/persistence.md, "Rewind and fork"): to before step
   * `step` (`stepId`: the user message, tool call or rewind it names). `items`, when the
   * conversation was rewound, is the chat as it was at that point (the conversation itself follows
   * as a `compacted` event). `action: 'fork'` in a new task says where it came from
   * (`forkedFrom`); in the task it was forked from, `forkedTo` names the new one.
   */
  | ({ type: 'rewind'; taskId: string; items?: TranscriptItem[] } & RewindRecord);

export type TaskEventType = TaskEvent['type'];

/** Events that only matter to the task's log (full conversation content); views never get them. */
export type ConversationEvent = Extract<TaskEvent, { type: 'message' | 'compacted' }>;
/** The events a chat view receives. */
export type ViewTaskEvent = Exclude<TaskEvent, ConversationEvent>;

export function isViewEvent(e: TaskEvent): e is ViewTaskEvent {
  return e.type !== 'message' && e.type !== 'compacted';
}
