import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import * as lockfile from 'proper-lockfile';
import { PRIVATE_DIR, PRIVATE_FILE } from './privateFiles';
import type { LockOwner, StoreLogger } from './types';
import { processAlive } from '../locks/processAlive';

/**
 * A write past the file-size limit (RLIMIT_FSIZE, `ulimit -f`) raises SIGXFSZ. Node ignores it —
 * the write fails with EFBIG, which a task's record reports as its failure — but proper-lockfile's
 * `signal-exit` re-raises it (killing the process before it can say why) unless the process has
 * a listener of its own. This is that listener, installed once with the first lock.
 */
let fileSizeSignalHandled = false;
function keepAliveOnFileSizeSignal(): void {
  if (fileSizeSignalHandled || process.platform === 'win32') return;
  fileSizeSignalHandled = true;
  process.on('SIGXFSZ', () => undefined);
}

/** A lock not refreshed for this long is stale (its owner froze or died); proper-lockfile refreshes it every half of it. */
export const LOCK_STALE_MS = 10_000;

const LOCK_DIR = 'lock';
const OWNER_FILE = 'lock.owner.json';

export interface HeldTaskLock {
  /** Releases the lock. Idempotent, synchronous (safe in `dispose` and at exit). */
  release(): void;
  /**
   * Calls `listener` once if the lock is lost while held (it could not be refreshed — its folder
   * was removed — or another process took it over): from then on this process may not be the
   * task's only writer.
   */
  onLost(listener: (err: Error) => void): void;
}

export type LockAttempt = { ok: true; lock: HeldTaskLock; tookOver: LockOwner | null } | { ok: false; owner: LockOwner | null };

/**
 * The cross-process lock of one task folder (`<task>/lock`, made with proper-lockfile, plus
 * `lock.owner.json` naming the holder). Live = the lock exists, was refreshed within
 * LOCK_STALE_MS, and its owner (when on this host) is a running process. A lock that is not live
 * is stale and may be taken over; a `kill -9`ed owner is detected at once by its pid. A task
 * folder another process is creating counts as live from the moment it is visible (`claimNewTask`).
 */
export function acquireTaskLock(dir: string, label: string, log?: StoreLogger): LockAttempt {
  let tookOver: LockOwner | null = null;
  const state = lockState(dir);
  if (state.held) {
    if (state.live) return { ok: false, owner: state.owner };
    tookOver = state.owner;
    forceRemove(dir);
    log?.('info', `${dir}: took over a stale lock${state.owner ? ` of pid ${state.owner.pid} on ${state.owner.host}` : ''}`);
  }
  const attempt = takeLock(dir, label, log);
  return attempt.ok ? { ...attempt, tookOver } : attempt;
}

/**
 * Marks a task folder that is still being prepared (before it is renamed into place) as this
 * process's: from the instant the folder becomes visible, `lockState` reports it held and live,
 * so no other process takes it over, quarantines it or rebuilds its meta. Throws on I/O errors.
 */
export function claimNewTask(stagingDir: string, label: string): void {
  const owner: LockOwner = { pid: process.pid, host: hostname(), since: Date.now(), label };
  writeFileSync(join(stagingDir, OWNER_FILE), JSON.stringify(owner), { mode: PRIVATE_FILE });
}

/** Takes the lock of a task folder this process claimed with `claimNewTask` and has just moved into place. */
export function lockClaimedTask(dir: string, label: string, log?: StoreLogger): LockAttempt {
  return takeLock(dir, label, log);
}

function takeLock(dir: string, label: string, log?: StoreLogger): LockAttempt {
  keepAliveOnFileSizeSignal();
  let releaseFn: () => void;
  let lost: Error | null = null;
  const lostListeners: ((err: Error) => void)[] = [];
  try {
    releaseFn = lockfile.lockSync(dir, {
      lockfilePath: join(dir, LOCK_DIR),
      stale: LOCK_STALE_MS,
      realpath: false,
      onCompromised: (err) => {
        log?.('info', `${dir}: the task lock was compromised (${err.message})`);
        lost ??= err;
        for (const l of lostListeners.splice(0)) l(err);
      },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') return { ok: false, owner: readOwner(dir) };
    throw err;
  }
  const owner: LockOwner = { pid: process.pid, host: hostname(), since: Date.now(), label };
  try {
    chmodSync(join(dir, LOCK_DIR), PRIVATE_DIR);
    writeFileSync(join(dir, OWNER_FILE), JSON.stringify(owner), { mode: PRIVATE_FILE });
  } catch {
    // The owner file only speeds up stale detection; the lock itself is held.
  }
  let released = false;
  return {
    ok: true,
    tookOver: null,
    lock: {
      onLost(listener) {
        if (lost) listener(lost);
        else if (!released) lostListeners.push(listener);
      },
      release() {
        if (released) return;
        released = true;
        lostListeners.length = 0;
        try {
          rmSync(join(dir, OWNER_FILE), { force: true });
          releaseFn();
        } catch {
          // Already gone (the folder was deleted or the lock was taken over).
        }
      },
    },
  };
}

/** Who holds the task's lock and whether that holder is alive. Never throws. */
export function lockState(dir: string): { held: boolean; live: boolean; owner: LockOwner | null } {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(join(dir, LOCK_DIR)).mtimeMs;
  } catch {
    // No lock folder, but an owner on this host that is alive and claimed the task moments ago:
    // a new task between being moved into place and taking its lock (`claimNewTask`). A release
    // removes the owner file before the lock, so this never describes a finished holder.
    const claim = readOwner(dir);
    if (claim && claim.host === hostname() && Date.now() - claim.since < LOCK_STALE_MS && processAlive(claim.pid)) return { held: true, live: true, owner: claim };
    return { held: false, live: false, owner: null };
  }
  const owner = readOwner(dir);
  if (Date.now() - mtimeMs > LOCK_STALE_MS) return { held: true, live: false, owner };
  if (owner && owner.host === hostname() && !processAlive(owner.pid)) return { held: true, live: false, owner };
  return { held: true, live: true, owner };
}

function readOwner(dir: string): LockOwner | null {
  try {
    const v = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as Partial<LockOwner>;
    return typeof v.pid === 'number' && typeof v.host === 'string' ? { pid: v.pid, host: v.host, since: Number(v.since) || 0, ...(v.label ? { label: v.label } : {}) } : null;
  } catch {
    return null;
  }
}

function forceRemove(dir: string): void {
  rmSync(join(dir, LOCK_DIR), { recursive: true, force: true });
  rmSync(join(dir, OWNER_FILE), { force: true });
}
