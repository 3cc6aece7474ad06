import type { KeelError } from '../../../shared/domain/errors';
import type { ConversationMessage, StopReason, ToolResultBlock, ToolUseBlock, Usage } from '../../../shared/domain/messages';
import type { PermissionMode } from '../../../shared/domain/permissionModes';
import type { ToolDefinition } from '../../providers/types';
import type { PermissionSubject } from '../../tools/types';
import type { CallOutput } from '../call/call.machine';
import type { StreamOutput } from '../stream/assembly';

export type { PermissionOutcome } from '../permission/permission.machine';

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
  /** The task's cost before this run, so each usage event carries the task's running total. */
  priorCostUsd: number;
}

/**
 * A tool call whose input passed its tool's schema (the turn's `validatingInput`). Parsed once:
 * the permission check and the tool run both use this, never the model's raw input again.
 */
export interface ValidatedCall {
  /** The tool_use id. */
  id: string;
  tool: string;
  /** The schema's output (defaults applied, unknown keys dropped). */
  input: unknown;
  /** What the call will touch, as the tool describes it. */
  subject: PermissionSubject;
  readOnly: boolean;
  /** The id of this call's permission request: a prompt, its card and its answer carry it. */
  requestId: string;
}

/** What `validatingInput` finds: a call to check, or the tool_result that answers an invalid one. */
export type ValidationOutcome = { ok: true; call: ValidatedCall } | { ok: false; result: ToolResultBlock; summary: string };

export interface ToolRunOutput {
  result: ToolResultBlock;
  summary: string;
}

/** What the `summarize` actor gives back: the summary that replaces the conversation, and what the call used. */
export interface Summary {
  text: string;
  usage: Usage;
}

export interface TurnOutput {
  status: 'done' | 'error';
  stopReason: StopReason | null;
  messages: ConversationMessage[];
  error: KeelError | null;
  /** Tokens of this run's model calls, added up: answers, summaries, and what failed attempts used. */
  usage: Usage;
  /** Their price in USD (providers/pricing.ts; 0 for models without a known price). */
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
  /** The call at `index`, once validated; null before validation and after the call is answered. */
  validated: ValidatedCall | null;
  /** Results of this answer's calls so far, in the order they came (subtasks answer late); put in call order when assembled. */
  results: ToolResultBlock[];
  /** Tool-use ids of this answer's subtasks that were started and have not answered yet. */
  subtasks: string[];
  maxTokensContinued: boolean;
  stopReason: StopReason | null;
  error: KeelError | null;
  usage: Usage;
  costUsd: number;
  /** Times a Stop hook sent this run back to work. */
  stopContinuations: number;
}

export type TurnEvent =
  | { type: 'CANCEL' }
  | { type: 'SET_MODE'; mode: PermissionMode }
  /** A priced call of the run outside its own requests (a prompt hook's): its tokens and price count in the run. */
  | { type: 'CHARGE'; usage: Usage; costUsd: number }
  | { type: 'SUBTASK_RESULT'; toolCallId: string; result: ToolResultBlock; summary: string };

