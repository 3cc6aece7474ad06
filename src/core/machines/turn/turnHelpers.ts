import type { KeelError } from '../../../shared/domain/errors';
import type { TaskEvent } from '../../../shared/domain/events';
import { ZERO_USAGE, type ConversationMessage, type ToolResultBlock, type Usage } from '../../../shared/domain/messages';
import { costUsd } from '../../providers/pricing';
import type { ProviderRequest } from '../../providers/types';
import type { CallOutput } from '../call/call.machine';
import type { StreamOutput, UnrunToolUse } from '../stream/assembly';
import { insertToolResults, repairConversation, retryDelayMs, toolResultsMessage } from './conversation';
import type { PermissionInput } from '../permission/permission.machine';
import type { PermissionOutcome, ToolRunOutput, TurnContext, ValidationOutcome } from './types';

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
  return { results: [...context.results, result], index: context.index + 1, validated: null };
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

export function turnEvent(context: TurnContext, state: string): Extract<TaskEvent, { type: 'turn' }> {
  return { type: 'turn', taskId: context.taskId, state, turn: context.modelCalls };
}

export function toolCallEvent(context: TurnContext): TaskEvent | null {
  const call = context.pending[context.index];
  return call ? { type: 'tool_call', taskId: context.taskId, id: call.id, name: call.name, input: call.input } : null;
}

export function permissionEvent(context: TurnContext, outcome: PermissionOutcome): TaskEvent | null {
  const call = context.validated;
  if (!call) return null;
  return { type: 'permission', taskId: context.taskId, requestId: outcome.requestId, toolCallId: call.id, tool: call.tool, decision: outcome.decision, reason: outcome.reason };
}

/** What the permission machine decides about: the validated call at `index`, in the turn's current mode. */
export function permissionInput(context: TurnContext): PermissionInput {
  const c = context.validated!;
  return { taskId: context.taskId, requestId: c.requestId, toolCallId: c.id, tool: c.tool, input: c.input, subject: c.subject, readOnly: c.readOnly, mode: context.mode };
}

/** The answer to a call that will not run: its input was invalid, or it was denied. */
export function refusal(context: TurnContext, outcome: ValidationOutcome | PermissionOutcome): ToolRunOutput {
  if ('ok' in outcome && !outcome.ok) return { result: outcome.result, summary: outcome.summary };
  if ('decision' in outcome && outcome.decision === 'deny') return { result: outcome.result, summary: `denied: ${outcome.reason}` };
  // Not reachable (the guards send only refusals here); answered rather than left without a result.
  return { result: errorResult(context, new Error('the call was neither refused nor run')), summary: 'not run' };
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

/**
 * What one model call adds to the run (its tokens and price), and the `usage` event that tells:
 * the call's figures, its price and the task's total with it. Null for a failed call the server
 * reported no tokens for (nothing was billed, nothing to show).
 */
export function charge(context: TurnContext, usage: Usage, failed: boolean): { usage: Usage; costUsd: number; event: TaskEvent } | null {
  if (failed && usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens === 0) return null;
  const price = costUsd(context.model, usage);
  const total = context.costUsd + price;
  return {
    usage: addUsage(context.usage, usage),
    costUsd: total,
    event: { type: 'usage', taskId: context.taskId, ...usage, costUsd: price, totalCostUsd: context.priorCostUsd + total },
  };
}

/** The tokens a call's output reports: a failed stream reports what it used before it failed. */
export function usageOf(output: CallOutput): Usage {
  return 'usage' in output ? output.usage : ZERO_USAGE;
}

/**
 * Whether a turn's owner (the task machine, for the run's phases) is told `e` as it is published:
 * a tool call, its result, the loop back at the model (`checkingContext`), a model call's tokens —
 * where the turn machine's `tellOwner` runs, and what the query machine relays of a worker's events.
 */
export function toldToOwner(e: TaskEvent): boolean {
  return e.type === 'tool_call' || e.type === 'tool_result' || e.type === 'usage' || (e.type === 'turn' && e.state === 'checkingContext');
}
