import type { KeelError } from '../../../shared/domain/errors';
import type { TaskEvent } from '../../../shared/domain/events';
import type { ConversationMessage, ToolResultBlock, Usage } from '../../../shared/domain/messages';
import type { ProviderRequest } from '../../providers/types';
import type { CallOutput } from '../call/call.machine';
import type { StreamOutput, UnrunToolUse } from '../stream/assembly';
import { insertToolResults, repairConversation, retryDelayMs, toolResultsMessage } from './conversation';
import type { PermissionOutcome, TurnContext } from './types';

/** Pure helpers of the turn machine: the request it sends, the events it publishes, context updates. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}

export function buildRequest(context: TurnContext): ProviderRequest {
  return {
    model: context.model,
    system: context.system,
    messages: repairConversation(context.messages),
    tools: context.tools,
    maxTokens: context.limits.maxTokens,
    ...(context.limits.thinkingBudgetTokens ? { thinkingBudgetTokens: context.limits.thinkingBudgetTokens } : {}),
  };
}

export function advance(context: TurnContext, result: ToolResultBlock): Partial<TurnContext> {
  return { results: [...context.results, result], index: context.index + 1 };
}

export function errorResult(context: TurnContext, err: unknown): ToolResultBlock {
  const call = context.pending[context.index];
  return { type: 'tool_result', tool_use_id: call?.id ?? 'unknown', content: `The tool failed: ${err instanceof Error ? err.message : String(err)}`, is_error: true };
}

/** The pending call about to be dispatched, when the model wrote its input as something other than a JSON object. */
export function invalidCall(context: TurnContext): UnrunToolUse | undefined {
  const call = context.pending[context.index];
  return call ? context.last?.invalidToolUses.find((u) => u.id === call.id) : undefined;
}

/** The error result that tells the model its tool input was not valid JSON and the call did not run. */
export function invalidInputResult(context: TurnContext): ToolResultBlock {
  const bad = invalidCall(context);
  const id = context.pending[context.index]?.id ?? 'unknown';
  return {
    type: 'tool_result',
    tool_use_id: id,
    content: `The call was not run: its input was not valid JSON (${bad?.reason ?? 'unreadable input'}). Send the call again with its input as one JSON object.`,
    is_error: true,
  };
}

export function internal(err: unknown): KeelError {
  return { code: 'internal', message: err instanceof Error ? err.message : String(err), retryable: true };
}

export function callError(output: CallOutput): KeelError {
  if (output.ok) return { code: 'internal', message: 'unexpected success', retryable: false };
  if ('duplicate' in output) return { code: 'internal', message: 'A duplicate request for this step was dropped: another driver already sent it.', retryable: false };
  if ('timeout' in output) return { code: 'internal', message: 'Timed out waiting for the task lock: another request of this task is still running.', retryable: true };
  const { code, message, retryable } = output.error;
  return { code, message, retryable };
}

export function continueAfterMaxTokens(last: Extract<StreamOutput, { ok: true }>): string {
  const cut = last.truncatedToolUses.map((t) => `${t.name} (${t.reason})`);
  return (
    'Your previous answer was cut off by the output token limit.' +
    (cut.length ? ` These tool calls were incomplete and were NOT run: ${cut.join(', ')}.` : '') +
    ' Continue from where you stopped.'
  );
}

export function resultsEvent(context: TurnContext): TaskEvent | null {
  const { messages, appended } = insertToolResults(context.messages, context.results);
  return appended ? messageEvent(context, toolResultsMessage(context.results)) : { type: 'compacted', taskId: context.taskId, messages, summary: false };
}

export function messageEvent(context: TurnContext, message: ConversationMessage): TaskEvent | null {
  if (message.content.length === 0) return null;
  return { type: 'message', taskId: context.taskId, message };
}

export function turnEvent(context: TurnContext, state: string): TaskEvent {
  return { type: 'turn', taskId: context.taskId, state, turn: context.modelCalls };
}

export function toolCallEvent(context: TurnContext): TaskEvent | null {
  const call = context.pending[context.index];
  return call ? { type: 'tool_call', taskId: context.taskId, id: call.id, name: call.name, input: call.input } : null;
}

export function permissionEvent(context: TurnContext, outcome: PermissionOutcome): TaskEvent | null {
  const call = context.pending[context.index];
  if (!call || outcome.decision === 'invalid') return null;
  return { type: 'permission', taskId: context.taskId, requestId: outcome.requestId, toolCallId: call.id, tool: call.name, decision: outcome.decision, reason: outcome.reason };
}

export function resultEvent(context: TurnContext, result: ToolResultBlock, summary: string): TaskEvent {
  return { type: 'tool_result', taskId: context.taskId, id: result.tool_use_id, is_error: Boolean(result.is_error), summary };
}

/** The wait before the retry the context is about to make (its `attempt` already counts it). */
export function nextRetryDelayMs(context: TurnContext): number {
  const f = context.failure;
  const retryAfterMs = f && !f.ok && 'error' in f ? f.error.retryAfterMs : undefined;
  return retryDelayMs(context.attempt - 1, retryAfterMs, context.limits.retryBaseMs, context.limits.maxRetryDelayMs);
}

/** Tells the person what failed and how long Keel waits before trying again. */
export function retryEvent(context: TurnContext): TaskEvent | null {
  const f = context.failure;
  if (!f || f.ok || !('error' in f)) return null;
  return { type: 'retry', taskId: context.taskId, attempt: context.attempt - 1, delayMs: nextRetryDelayMs(context), code: f.error.code, message: f.error.message };
}

export function usageEvent(context: TurnContext): TaskEvent | null {
  const last = context.last;
  if (!last) return null;
  return {
    type: 'usage',
    taskId: context.taskId,
    inputTokens: last.usage.inputTokens,
    outputTokens: last.usage.outputTokens,
    cacheReadTokens: last.usage.cacheReadTokens,
    cacheWriteTokens: last.usage.cacheWriteTokens,
    costUsd: 0,
    totalCostUsd: 0,
  };
}
