import { poolHeadline, workerStateWords } from '../../shared/words/workers';
import type { EvictionStrategy } from './eviction';

/**
 * What a pool looks like right now, for people (`keel workers`, "Keel: Show Workers", the chat
 * header) and tests. Plain data; times in ms since the epoch.
 */
export interface WorkerStatus {
  id: string;
  /** starting, ready, busy, shuttingDown (the worker machine's state). */
  state: string;
  pid: number | null;
  /** The task the worker is bound to (its last or current task), if any. */
  taskId: string | null;
  startedAt: number;
  lastActivityAt: number;
  queriesProcessed: number;
  /** Resident memory from the worker's last health answer (null before the first). */
  rssBytes: number | null;
}

export interface PoolStatus {
  /** The pool machine's state: idle, active, atCapacity, shuttingDown, stopped. */
  state: string;
  /** The process that owns the pool. */
  ownerPid: number;
  owner: string;
  max: number;
  strategy: EvictionStrategy;
  workers: WorkerStatus[];
  /** Queries waiting for a worker. */
  waiting: number;
  stats: { spawned: number; evicted: number; crashed: number; reaped: number; rejected: number };
  at: number;
}

/** "3 m 12 s", "1 h 4 m": an uptime for people. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} m`;
}

/** "48 MB" (or "—" when unknown). */
export function formatMemory(bytes: number | null): string {
  return bytes === null ? '—' : `${Math.round(bytes / (1024 * 1024))} MB`;
}

/**
 * One worker as a line for people: `keel workers` and "Keel: Show Workers" show the same words
 * (src/shared/words/workers.ts), never a machine's state name.
 */
export interface WorkerLine {
  /** "Running “Fix the login bug”", "Idle" */
  label: string;
  /** "w2 · pid 4242", "w1 · pid 4240 · last ran “Add a test”" */
  description: string;
  /** "up 3 m 12 s · 5 runs · 48 MB" */
  detail: string;
}

/**
 * `titleOf` names a task as a person knows it (its title); without it, or for a task it does not
 * know, a task is named by the start of its id.
 */
export function describeWorker(w: WorkerStatus, now: number, titleOf?: (taskId: string) => string | undefined): WorkerLine {
  const runs = `${w.queriesProcessed} run${w.queriesProcessed === 1 ? '' : 's'}`;
  const task = w.taskId ? taskName(w.taskId, titleOf) : undefined;
  const words = workerStateWords(w.state);
  const busy = w.state === 'busy';
  return {
    label: busy && task ? `Running ${task}` : words.charAt(0).toUpperCase() + words.slice(1),
    description: `${w.id} · pid ${w.pid ?? '—'}${task && !busy ? ` · last ran ${task}` : ''}`,
    detail: `up ${formatDuration(now - w.startedAt)} · ${runs} · ${formatMemory(w.rssBytes)}`,
  };
}

function taskName(taskId: string, titleOf: ((taskId: string) => string | undefined) | undefined): string {
  const title = titleOf?.(taskId)?.trim();
  return title ? `“${title.length > 60 ? `${title.slice(0, 59)}…` : title}”` : `task ${taskId.slice(0, 8)}`;
}

/** "VS Code window 4242 (pid 4242): 4 workers, all idle": a pool's headline for `keel workers`. */
export function describePool(p: PoolStatus): string {
  return `${p.owner} (pid ${p.ownerPid}): ${poolHeadline(p)}`;
}
