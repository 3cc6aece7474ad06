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
