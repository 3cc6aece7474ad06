import * as vscode from 'vscode';
import { usd } from '../core/machines/turn/budget';
import { parseBudgetUsd } from '../core/runtime/taskBudget';

/**
 * A task paused at its budget (docs/cli.md, "Budget"): a notification that says what was spent and
 * offers "Raise Budget…", which asks for the new cap (more than what was spent). Resolves with
 * the cap, or null when the person leaves it (the task stays paused; a message continues it too).
 */
export async function raiseBudgetPrompt(budget: { capUsd: number | null; spentUsd: number }): Promise<number | null> {
  const of = budget.capUsd !== null ? ` of its ${usd(budget.capUsd)} budget` : '';
  const choice = await vscode.window.showWarningMessage(
    `Keel paused the task before a request that could go over its budget: it has spent ${usd(budget.spentUsd)}${of}.`,
    'Raise Budget…',
  );
  if (choice !== 'Raise Budget…') return null;
  const typed = await vscode.window.showInputBox({
    title: 'Keel: Raise Budget',
    prompt: `The task's budget in US dollars (spent so far: ${usd(budget.spentUsd)})`,
    value: String(Math.max(1, Math.ceil((budget.capUsd ?? budget.spentUsd) * 2))),
    ignoreFocusOut: true,
    validateInput: (text) => {
      const cap = parseBudgetUsd(text);
      if (cap === null) return 'A positive number of US dollars, such as 5 or 0.50';
      return cap <= budget.spentUsd ? `More than what was spent (${usd(budget.spentUsd)})` : null;
    },
  });
  return typed === undefined ? null : parseBudgetUsd(typed);
}
