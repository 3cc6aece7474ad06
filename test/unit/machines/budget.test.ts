import { describe, expect, it } from 'vitest';
import { budgetError, fitsBudget, requestEstimateUsd } from '../../../src/core/machines/turn/budget';
import { budgetFor, parseBudgetUsd, TaskBudget } from '../../../src/core/runtime/taskBudget';
import { userText } from '../../../src/core/machines/turn/conversation';

/** The budget rule: a request is priced at its worst (input + max output) and goes only when it fits. */
describe('the budget rule', () => {
  it('prices a request at its input plus its maximum output, at the model\'s list price', () => {
    // claude-sonnet: $3 / $15 per million. 4,000 characters of input: 1,000 tokens; 8,192 output tokens.
    const estimate = requestEstimateUsd('claude-sonnet-4-5', ['x'.repeat(2000)], [userText('y'.repeat(2000))], [], 8192);
    expect(estimate).toBeGreaterThanOrEqual((1000 * 3 + 8192 * 15) / 1e6);
    expect(estimate).toBeLessThan((1100 * 3 + 8192 * 15) / 1e6);
    // A model Keel has no price for costs nothing, so it never pauses.
    expect(requestEstimateUsd('local-model', ['x'], [], [], 8192)).toBe(0);
  });

  it('a request fits when what was spent plus its worst case stays within the cap', () => {
    expect(fitsBudget(null, 100, 100)).toBe(true);
    expect(fitsBudget(1, 0.5, 0.5)).toBe(true);
    expect(fitsBudget(1, 0.5, 0.5001)).toBe(false);
    expect(budgetError({ capUsd: 1, spentUsd: 0.9, estimateUsd: 0.2 })).toMatchObject({ code: 'budget_exceeded', retryable: true });
  });

  it('one budget counts every task under it; a raised cap lets the next request go', () => {
    const b = new TaskBudget(1, 0.25);
    const seen: number[] = [];
    b.subscribe(() => seen.push(b.total()));
    b.record('parent', 0.25);
    b.record('child', 0.25);
    expect(b.total()).toBe(0.75);
    expect(b.verdict(0.3)).toEqual({ capUsd: 1, spentUsd: 0.75, estimateUsd: 0.3 });
    b.setCap(2);
    expect(b.verdict(0.3)).toBeNull();
    expect(seen).toEqual([0.5, 0.75, 0.75]);
  });

  it('a task spends from its loop\'s budget, else its parent\'s, else its own (cap asked now > stored > default)', () => {
    const loop = new TaskBudget(5);
    const parent = new TaskBudget(3);
    expect(budgetFor({ shared: loop, parent, capUsd: 1 })).toBe(loop);
    expect(budgetFor({ parent, capUsd: 1 })).toBe(parent);
    expect(budgetFor({ capUsd: 1, stored: { capUsd: 2, spentUsd: 0 }, defaultCapUsd: 3 }).capUsd).toBe(1);
    expect(budgetFor({ stored: { capUsd: 2, spentUsd: 0 }, defaultCapUsd: 3 }).capUsd).toBe(2);
    expect(budgetFor({ defaultCapUsd: 3 }).capUsd).toBe(3);
    expect(budgetFor({}).capUsd).toBeNull();
    // What earlier sub-agents spent (the stored total minus the task's own) still counts.
    expect(budgetFor({ stored: { capUsd: 2, spentUsd: 1.5 }, storedOwnUsd: 1 }).total()).toBe(0.5);
  });

  it('reads a budget as people type it', () => {
    expect(parseBudgetUsd('5')).toBe(5);
    expect(parseBudgetUsd('$0.50')).toBe(0.5);
    expect(parseBudgetUsd('.5')).toBe(0.5);
    for (const bad of ['0', '-1', 'lots', '1e3', '', '5 dollars']) expect(parseBudgetUsd(bad)).toBeNull();
  });
});
