import type { KeelError } from '../../../shared/domain/errors';
import { estimateTokens } from '../../context/tokens';
import { costUsd } from '../../providers/pricing';
import type { TurnContext } from './types';

/**
 * The budget check before every model request of a turn (docs/cli.md, "Budget"). "Would exceed"
 * is estimated as: what the task has spent (this run, the runs before, its sub-agents and its
 * other calls) plus the next request's input tokens at the model's input price. The input is
 * the last request's prompt as the server counted it plus what was added since (about four
 * characters a token), or, before the first answer, the whole prompt's estimate. The answer's
 * output cannot be known in advance: a task may end above its cap by at most the output of the
 * last request it was allowed. Cache reads are priced as plain input (never below). Pure.
 */
export interface TurnBudget {
  /** The cap in USD; null: none. */
  capUsd: number | null;
  /** What the task's budget holds besides this task's own calls: its sub-agents', earlier sub-agents'. */
  othersUsd: number;
}

export interface BudgetRefusal {
  capUsd: number;
  spentUsd: number;
  estimateUsd: number;
}

/** Tokens of the next request's input (see the module comment). */
export function nextRequestTokens(c: Pick<TurnContext, 'system' | 'messages' | 'tools' | 'lastPrompt'>): number {
  if (c.lastPrompt && c.lastPrompt.tokens > 0 && c.lastPrompt.messages <= c.messages.length) {
    return c.lastPrompt.tokens + estimateTokens([], c.messages.slice(c.lastPrompt.messages));
  }
  return estimateTokens(c.system, c.messages) + Math.ceil(JSON.stringify(c.tools).length / 4);
}

/** Null when the next request fits the budget (or there is none); else what it would come to. */
export function budgetRefusal(c: Pick<TurnContext, 'budget' | 'model' | 'priorCostUsd' | 'costUsd' | 'system' | 'messages' | 'tools' | 'lastPrompt'>): BudgetRefusal | null {
  const cap = c.budget?.capUsd ?? null;
  if (cap === null) return null;
  const spentUsd = c.priorCostUsd + c.costUsd + (c.budget?.othersUsd ?? 0);
  const estimateUsd = costUsd(c.model, { inputTokens: nextRequestTokens(c), outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  return spentUsd + estimateUsd > cap ? { capUsd: cap, spentUsd, estimateUsd } : null;
}

/** The error a turn ends with when it pauses for its budget. */
export function budgetError(r: BudgetRefusal): KeelError {
  return {
    code: 'budget_exceeded',
    message: `Paused before the next model request: this task has spent $${r.spentUsd.toFixed(4)}, and the request would add about $${r.estimateUsd.toFixed(4)} for its input, over the budget of $${r.capUsd.toFixed(2)}. Raise the budget to continue.`,
    retryable: true,
  };
}
