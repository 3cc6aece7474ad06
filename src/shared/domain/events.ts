import type { ErrorCode } from './errors';
import type { ConversationMessage, StopReason } from './messages';

/**
 * What a task tells the outside world, in order. The CLI prints these as NDJSON
 * (`--output-format stream-json`); the extension turns them into webview deltas.
 * Every event names its task.
 */
export type TaskStatus = 'running' | 'completed' | 'interrupted' | 'failed' | 'aborted';

/** The user-visible mode of the stream machine. */
export type StreamMode = 'requesting' | 'responding' | 'toolInput' | 'thinking';

export type PermissionDecision = 'allow' | 'deny' | 'ask';

export type TaskEvent =
  | { type: 'task'; taskId: string; state: string; title?: string }
  | { type: 'turn'; taskId: string; state: string; turn: number }
  | { type: 'user_message'; taskId: string; id: string; text: string }
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
  | { type: 'tool_result'; taskId: string; id: string; is_error: boolean; summary: string }
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
  | { type: 'error'; taskId: string; code: ErrorCode; message: string; retryable: boolean }
  | { type: 'done'; taskId: string; status: TaskStatus; stopReason: StopReason | null };

export type TaskEventType = TaskEvent['type'];

/** Events that only matter to the task's log (full conversation content); views never get them. */
export type ConversationEvent = Extract<TaskEvent, { type: 'message' | 'compacted' }>;
/** The events a chat view receives. */
export type ViewTaskEvent = Exclude<TaskEvent, ConversationEvent>;

export function isViewEvent(e: TaskEvent): e is ViewTaskEvent {
  return e.type !== 'message' && e.type !== 'compacted';
}
