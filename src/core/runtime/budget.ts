/**
 * One task's budget (docs/cli.md, "Budget"), shared by the task and its sub-agents: the cap, and
 * what each of them has spent (its own running total, from its `usage` events: model calls,
 * retries' billed attempts, summaries, the memory lesson). A turn checks it before every request
 * (machines/turn/budget.ts); this keeps the figures and tells every live task of the tree when
 * they change, so each one's next check sees what the others spent. In memory; the root task's
 * `budget` events keep it in the log for a resume.
 */
export class TaskBudget {
  private cap: number | null;
  private readonly spent = new Map<string, number>();
  private readonly listeners = new Set<(changedBy: string | null) => void>();

  /** `earlierUsd`: what the tree spent before this process, besides the root's own calls (its sub-agents'). */
  constructor(capUsd: number | null, earlierUsd = 0) {
    this.cap = capUsd;
    if (earlierUsd > 0) this.spent.set('(earlier sub-agents)', earlierUsd);
  }

  get capUsd(): number | null {
    return this.cap;
  }

  /** Everything the tree has spent. */
  total(): number {
    let sum = 0;
    for (const v of this.spent.values()) sum += v;
    return sum;
  }

  /** What the tree spent besides `taskId`'s own calls. */
  othersFor(taskId: string): number {
    return Math.max(0, this.total() - (this.spent.get(taskId) ?? 0));
  }

  /** `taskId`'s running total is now `totalUsd` (from its latest usage event). */
  record(taskId: string, totalUsd: number): void {
    if (this.spent.get(taskId) === totalUsd) return;
    this.spent.set(taskId, totalUsd);
    this.changed(taskId);
  }

  /** A new cap (null: none); the tasks' next checks use it. */
  setCap(capUsd: number | null): void {
    if (capUsd === this.cap) return;
    this.cap = capUsd;
    this.changed(null);
  }

  /** Whether a call estimated at `estimateUsd` still fits (calls outside turns: the memory lesson). */
  allows(estimateUsd: number): boolean {
    return this.cap === null || this.total() + estimateUsd <= this.cap;
  }

  /** Calls `listener` with the task that spent (null: the cap changed); returns the function that removes it. */
  subscribe(listener: (changedBy: string | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(by: string | null): void {
    for (const l of [...this.listeners]) l(by);
  }
}
