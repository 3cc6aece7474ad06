import type { TaskEvent, TaskStatus } from '../../shared/domain/events';

/**
 * The on-disk format of the task store (docs/persistence.md). A store root holds
 * `tasks/<id>/{events.jsonl, meta.json, lock/, lock.owner.json}`, `index.json` and `quarantine/`.
 */
export const SCHEMA_VERSION = 1;

/** The first line of every `events.jsonl`. */
export interface LogHeader {
  type: 'keel.task-log';
  schemaVersion: number;
  taskId: string;
  createdAt: number;
  /** What meta.json starts with, so it can be rebuilt from the log alone. */
  title?: string;
  model?: string;
  workspace?: string;
  parentId?: string;
}

/** Every later line: one task event and when it was recorded (epoch ms). */
export interface LogRecord {
  at: number;
  event: TaskEvent;
}

/** `meta.json`: the small record history lists. Written atomically; the log stays the source of truth. */
export interface TaskMeta {
  schemaVersion: number;
  id: string;
  title: string;
  /** As last recorded. `running` with no live owner is reported as `interrupted` by listings. */
  status: TaskStatus;
  createdAt: number;
  updatedAt: number;
  /** Input + output tokens (cache reads and writes included) over the whole task. */
  tokens: number;
  costUsd: number;
  model: string;
  /** The provider kind that last drove the task (never a key or URL). */
  provider?: string;
  workspace: string;
  /** Set for a subtask (the Task tool); listings leave subtasks out. */
  parentId?: string;
  /**
   * Set when the task's record could not be saved (a full disk, its folder removed…): why, in a
   * person's words. `status` is then `failed`; the log holds what was saved before.
   */
  recordError?: string;
}

/** What a listing shows of one task: its meta, with `status` adjusted for liveness. */
export interface TaskSummary extends TaskMeta {
  /** Set when another process (another window, another `keel run`) holds the task's lock. */
  heldElsewhere?: LockOwner;
}

/** A task that could not be read and was moved aside, or a warning found while reading. */
export interface StoreProblem {
  taskId: string;
  message: string;
}

export interface LockOwner {
  pid: number;
  host: string;
  since: number;
  /** e.g. "keel run", "VS Code window". */
  label?: string;
}

export type StoreLogger = (level: 'info' | 'warn' | 'error', message: string) => void;

/**
 * Thrown (as `StoreError`) for conditions a person should read: not found, locked elsewhere,
 * quarantined. `unusable`: the store's root cannot hold tasks (not a folder, cannot be created, not writable):
 * nothing can be recorded or listed there.
 */
export type StoreErrorCode = 'not_found' | 'locked' | 'corrupt' | 'ambiguous' | 'unsupported' | 'io' | 'unusable';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}
