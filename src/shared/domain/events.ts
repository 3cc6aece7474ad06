import type { ErrorCode } from './errors';
import type { StopReason } from './messages';

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
  | { type: 'retry'; taskId: string; attempt: number; delayMs: number; code: ErrorCode }
  | { type: 'error'; taskId: string; code: ErrorCode; message: string; retryable: boolean }
  | { type: 'done'; taskId: string; status: TaskStatus; stopReason: StopReason | null };

export type TaskEventType = TaskEvent['type'];
