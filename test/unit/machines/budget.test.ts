import { describe, expect, it } from 'vitest';
import { budgetRefusal, nextRequestTokens } from '../../../src/core/machines/turn/budget';
import { TaskBudget } from '../../../src/core/runtime/budget';
import type { ConversationMessage } from '../../../src/shared/domain/messages';

const msg = (text: string): ConversationMessage => ({ role: 'user', content: [{ type: 'text', text }] });

describe('the budget check before a request', () => {
  const base = { system: ['x'.repeat(400)], tools: [], model: 'claude-sonnet-4-5', priorCostUsd: 0, costUsd: 0, lastPrompt: null, messages: [msg('y'.repeat(400))] };

  it('estimates the next input from the last prompt the server counted plus what was added since', () => {
    expect(nextRequestTokens(base)).toBe(200 + 1);
    expect(nextRequestTokens({ ...base, messages: [msg('a'), msg('b'.repeat(40))], lastPrompt: { tokens: 100_000, messages: 1 } })).toBe(100_010);
    // A server that reports no tokens: the whole prompt is estimated.
    expect(nextRequestTokens({ ...base, lastPrompt: { tokens: 0, messages: 1 } })).toBe(201);
  });

  it('refuses when spent plus the estimate is over the cap, counting sub-agents and earlier runs; no cap, no check', () => {
    const big = { ...base, messages: [msg('a')], lastPrompt: { tokens: 100_000, messages: 1 } }; // about $0.30
    expect(budgetRefusal({ ...big, budget: { capUsd: null, othersUsd: 5 } })).toBeNull();
    expect(budgetRefusal({ ...big, budget: { capUsd: 0.5, othersUsd: 0 } })).toBeNull();
    expect(budgetRefusal({ ...big, costUsd: 0.21, budget: { capUsd: 0.5, othersUsd: 0 } })).toMatchObject({ capUsd: 0.5, spentUsd: 0.21 });
    expect(budgetRefusal({ ...big, priorCostUsd: 0.1, budget: { capUsd: 0.5, othersUsd: 0.11 } })?.spentUsd).toBeCloseTo(0.21);
    // An unpriced model (local, demo) costs nothing: it never pauses.
    expect(budgetRefusal({ ...big, model: 'llama3.2', costUsd: 0.5, budget: { capUsd: 0.5, othersUsd: 0 } })).toBeNull();
  });
});

describe('a task tree\'s budget', () => {
  it('adds up what each task spent and tells the others', () => {
    const b = new TaskBudget(1, 0.2);
    const heard: (string | null)[] = [];
    b.subscribe((by) => heard.push(by));
    b.record('root', 0.1);
    b.record('child', 0.3);
    b.record('child', 0.3);
    expect(b.total()).toBeCloseTo(0.6);
    expect(b.othersFor('root')).toBeCloseTo(0.5);
    expect(b.allows(0.4)).toBe(true);
    expect(b.allows(0.41)).toBe(false);
    b.setCap(2);
    expect(heard).toEqual(['root', 'child', null]);
  });
});
