import type { KeelError } from '../../../shared/domain/errors';
import type { ConversationMessage, StopReason, ToolResultBlock, ToolUseBlock, Usage } from '../../../shared/domain/messages';
import type { ToolDefinition } from '../../providers/types';
import type { PermissionMode } from '../../runtime/types';
import type { CallOutput } from '../call/call.machine';
import type { StreamOutput } from '../stream/assembly';

/** The turn machine's input, output, context and events. */
export interface TurnLimits {
  maxTurns: number;
  maxTokens: number;
  /** Estimated tokens above which the context is compacted. */
  contextLimit: number;
  /** Retries of a failed stream before the turn gives up. */
  retryLimit: number;
  retryBaseMs: number;
  /** The longest wait before a retry, even when a server's retry-after asks for more (default 60 s). */
  maxRetryDelayMs?: number;
  lockTimeoutMs: number;
  thinkingBudgetTokens?: number;
}

export interface TurnInput {
  taskId: string;
  model: string;
  mode: PermissionMode;
  messages: ConversationMessage[];
  limits: TurnLimits;
  compactionFailures: number;
  /** Which run of the task's turn loop this is; with the call and attempt counts it names each request. */
  run: number;
}

export type PermissionOutcome =
  | { decision: 'allow'; reason: string; requestId: string; mcp?: boolean }
  | { decision: 'deny'; reason: string; requestId: string; result: ToolResultBlock }
  | { decision: 'invalid'; result: ToolResultBlock };

export interface ToolRunOutput {
  result: ToolResultBlock;
  summary: string;
}

export interface TurnOutput {
  status: 'done' | 'error';
  stopReason: StopReason | null;
  messages: ConversationMessage[];
  error: KeelError | null;
  usage: Usage;
  costUsd: number;
  compactionFailures: number;
}

export interface TurnContext extends TurnInput {
  system: string[];
  tools: ToolDefinition[];
  modelCalls: number;
  attempt: number;
  last: Extract<StreamOutput, { ok: true }> | null;
  failure: CallOutput | null;
  pending: ToolUseBlock[];
  index: number;
  results: ToolResultBlock[];
  maxTokensContinued: boolean;
  stopReason: StopReason | null;
  error: KeelError | null;
  usage: Usage;
  costUsd: number;
}

export type TurnEvent =
  | { type: 'CANCEL' }
  | { type: 'SET_MODE'; mode: PermissionMode }
  | { type: 'SUBTASK_RESULT'; toolCallId: string; result: ToolResultBlock; summary: string };

