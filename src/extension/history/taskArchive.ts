import type { InspectedTask } from '../../core/runtime/taskRuntime';
import type { ResumeTaskOptions, TaskHandle } from '../../core/runtime/types';
import type { LoadedTask } from '../../core/store/taskStore';
import type { StoreProblem, TaskSummary as StoredSummary } from '../../core/store/types';

/**
 * What history needs of the core's TaskRuntime when it has a store (the real class satisfies it
 * structurally): the stored tasks, one task live or stored, resuming one, and the store itself
 * for loading (export) and deleting.
 */
export interface TaskArchive {
  listStored(): Promise<{ tasks: StoredSummary[]; problems: StoreProblem[] }>;
  inspect(id: string): Promise<InspectedTask>;
  resume(id: string, opts: ResumeTaskOptions): Promise<TaskHandle>;
  get(id: string): TaskHandle | undefined;
  list(): TaskHandle[];
  /** Stops a task and lets go of it (closes its log, releases its lock). */
  forget(id: string): void;
  readonly store: { load(id: string): Promise<LoadedTask>; delete(id: string): Promise<void> } | undefined;
}

/** The runtime as a TaskArchive when it has the methods and a store; undefined for a memory-only runtime. */
export function archiveOf(runtime: object): TaskArchive | undefined {
  const r = runtime as Partial<TaskArchive>;
  const ok = typeof r.listStored === 'function' && typeof r.inspect === 'function' && typeof r.resume === 'function' && typeof r.forget === 'function' && r.store !== undefined;
  return ok ? (runtime as TaskArchive) : undefined;
}

/** A failure a person should read (the store's codes, or a refusal of this window). */
export class HistoryError extends Error {
  constructor(
    readonly code: 'not_found' | 'locked' | 'corrupt' | 'unsupported' | 'busy' | 'unavailable' | 'io',
    message: string,
  ) {
    super(message);
    this.name = 'HistoryError';
  }
}

/** The store's StoreError (or anything else) as a HistoryError with a message for the user. */
export function asHistoryError(err: unknown): HistoryError {
  if (err instanceof HistoryError) return err;
  const e = err as { name?: unknown; code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (e?.name === 'StoreError' && (e.code === 'not_found' || e.code === 'locked' || e.code === 'corrupt' || e.code === 'unsupported')) {
    return new HistoryError(e.code, message);
  }
  return new HistoryError('io', message);
}
