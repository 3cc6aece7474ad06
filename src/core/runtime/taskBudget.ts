import type { BudgetVerdict } from '../machines/turn/budget';
import { fitsBudget } from '../machines/turn/budget';

/**
 * One budget (docs/cli.md, "Budget"), shared by a task and its sub-agents — or by every iteration
 * of a loop: the cap, and what each task under it has spent (its running total, from its `usage`
 * events: answers, retries' billed attempts, summaries, the memory lesson). Every priced request
 * asks it first (`verdict`, the rule in machines/turn/budget.ts); its figures change as the
 * tasks' usage events arrive, so a parent's next request sees what its sub-agents spent. In
 * memory; the root task's `budget` events keep cap and total in its log for a resume.
 */
export class TaskBudget {
  private cap: number | null;
  private readonly spent = new Map<string, number>();
  private readonly listeners = new Set<() => void>();

  /** `earlierUsd`: what was spent under this budget before this process, besides the tasks recorded here. */
  constructor(capUsd: number | null, earlierUsd = 0) {
    this.cap = capUsd;
    if (earlierUsd > 0) this.spent.set('(earlier)', earlierUsd);
  }

  get capUsd(): number | null {
    return this.cap;
  }

  /** Everything spent under this budget. */
  total(): number {
    let sum = 0;
    for (const v of this.spent.values()) sum += v;
    return sum;
  }

  /** `taskId`'s running total is now `totalUsd` (from its latest usage event). */
  record(taskId: string, totalUsd: number): void {
    if (this.spent.get(taskId) === totalUsd) return;
    this.spent.set(taskId, totalUsd);
    this.changed();
  }

  /** A new cap (null: none): the next request is asked against it. */
  setCap(capUsd: number | null): void {
    if (capUsd === this.cap) return;
    this.cap = capUsd;
    this.changed();
  }

  /** Whether a request that may cost up to `estimateUsd` may go: null when it may. */
  verdict(estimateUsd: number): BudgetVerdict {
    const spentUsd = this.total();
    if (fitsBudget(this.cap, spentUsd, estimateUsd)) return null;
    return { capUsd: this.cap!, spentUsd, estimateUsd };
  }

  /** Calls `listener` after every change (a task spent, the cap changed); returns what removes it. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }
}

/**
 * A budget typed by a person (`5`, `0.50`, `$2`): a positive number of US dollars, else null.
 * Pure.
 */
export function parseBudgetUsd(text: string): number | null {
  const t = text.trim().replace(/^\$/, '');
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** Where a new task's budget comes from (`budgetFor`). */
export interface BudgetSources {
  /** A loop's budget, shared by its iterations. */
  shared?: TaskBudget | undefined;
  /** The parent's budget: a sub-agent spends from it. */
  parent?: TaskBudget | undefined;
  /** The cap asked for now (`--max-budget-usd`, a raise). */
  capUsd?: number | undefined;
  /** The runtime's default cap (`keel.maxBudgetUsd`). */
  defaultCapUsd?: number | undefined;
  /** A stored task's last budget event, and what the task itself had spent by then. */
  stored?: { capUsd: number | null; spentUsd: number } | undefined;
  storedOwnUsd?: number;
}

/**
 * The budget a task spends from: a loop's, else its parent's, else its own — whose cap is the one
 * asked for now, else the stored task's, else the default — and which counts what the stored
 * task's sub-agents spent before (its own spending comes with its usage). Pure.
 */
export function budgetFor(s: BudgetSources): TaskBudget {
  if (s.shared) return s.shared;
  if (s.parent) return s.parent;
  const cap = s.capUsd ?? s.stored?.capUsd ?? s.defaultCapUsd ?? null;
  const earlier = s.stored ? Math.max(0, s.stored.spentUsd - (s.storedOwnUsd ?? 0)) : 0;
  return new TaskBudget(cap, earlier);
}
