import type { KeelError } from '../../../shared/domain/errors';
import type { ConversationMessage } from '../../../shared/domain/messages';
import { estimateTokens } from '../../context/tokens';
import { costUsd } from '../../providers/pricing';
import type { ToolDefinition } from '../../providers/types';

/**
 * The budget rule (docs/cli.md, "Budget"): before every priced model request of a task — each
 * answer, each retry, each summary — its owner is asked whether the request may go. The request
 * is priced at its worst: its input (the system prompt, the conversation and the tool
 * definitions, about four characters a token) plus the most output it may ask for
 * (`maxTokens`), at the model's list price. It may go when what the task's tree has spent so far
 * plus that worst case stays within the cap; otherwise the task pauses before it. So a task never
 * ends above its cap as long as the server counts no more input tokens than the estimate.
 */
export interface BudgetRequest {
  taskId: string;
  /** What the request is for: the model's answer, a summary of the conversation, or a prompt hook's judgement. */
  purpose: 'answer' | 'summary' | 'hook';
  /** The worst this request can cost, in USD. */
  estimateUsd: number;
}

/** Why a request may not go: the cap, what was spent, and the request's worst case. Null: it may go. */
export type BudgetVerdict = { capUsd: number; spentUsd: number; estimateUsd: number } | null;

/** The worst a request of `model` can cost (see the module comment). Pure. */
export function requestEstimateUsd(model: string, system: readonly string[], messages: readonly ConversationMessage[], tools: readonly ToolDefinition[], maxOutputTokens: number): number {
  const inputTokens = estimateTokens([...system], [...messages]) + Math.ceil(JSON.stringify(tools).length / 4);
  return costUsd(model, { inputTokens, outputTokens: maxOutputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 });
}

/** True when a request estimated at `estimateUsd` fits a cap after `spentUsd`. */
export function fitsBudget(capUsd: number | null, spentUsd: number, estimateUsd: number): boolean {
  return capUsd === null || spentUsd + estimateUsd <= capUsd;
}

/** The error a turn ends with when its task pauses for its budget (retryable: raising the cap continues it). */
export function budgetError(v: NonNullable<BudgetVerdict>): KeelError {
  return {
    code: 'budget_exceeded',
    message:
      `Paused before the next model request: the task has spent ${usd(v.spentUsd)} of its ${usd(v.capUsd)} budget, ` +
      `and the request could cost up to ${usd(v.estimateUsd)}. Raise the budget to continue.`,
    retryable: true,
  };
}

/** Dollars as people read them: cents, or more digits below a cent. */
export function usd(n: number): string {
  return n >= 0.01 || n === 0 ? `$${n.toFixed(2)}` : `$${n.toFixed(4)}`;
}
