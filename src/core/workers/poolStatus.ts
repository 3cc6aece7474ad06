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

/** One worker as a line for people: `keel workers` and "Keel: Show Workers" show the same words. */
export interface WorkerLine {
  /** "w2 · busy" */
  label: string;
  /** "pid 4242 · task 1b2c3d4e" */
  description: string;
  /** "up 3 m 12 s · 5 queries · 48 MB" */
  detail: string;
}

export function describeWorker(w: WorkerStatus, now: number): WorkerLine {
  const queries = `${w.queriesProcessed} quer${w.queriesProcessed === 1 ? 'y' : 'ies'}`;
  return {
    label: `${w.id} · ${w.state}`,
    description: `pid ${w.pid ?? '—'}${w.taskId ? ` · task ${w.taskId.slice(0, 8)}` : ''}`,
    detail: `up ${formatDuration(now - w.startedAt)} · ${queries} · ${formatMemory(w.rssBytes)}`,
  };
}

/** "VS Code window 4242 (pid 4242): active, 2 of 4 workers, 1 waiting": a pool's headline. */
export function describePool(p: PoolStatus): string {
  const waiting = p.waiting > 0 ? `, ${p.waiting} waiting` : '';
  return `${p.owner} (pid ${p.ownerPid}): ${p.state}, ${p.workers.length} of ${p.max} worker${p.max === 1 ? '' : 's'}${waiting}`;
}
