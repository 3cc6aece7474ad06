import { Mutex, type MutexInterface } from 'async-mutex';

/**
 * Serialises access to shared resources by key ("task:<id>", "file:<abs path>").
 *
 * async-mutex is not reentrant, so a holder gets a `HeldLock` token and passes it down instead of
 * acquiring again. `acquire` rejects with `LockTimeoutError` after `timeoutMs` and with
 * `LockCancelledError` when `signal` aborts while waiting; in both cases nothing is held.
 */
export interface HeldLock {
  readonly key: string;
  /** Releases the lock. Idempotent: a second call does nothing. */
  release(): void;
}

export interface LockCounters {
  acquired: number;
  /** Acquisitions that had to wait for another holder. */
  waited: number;
  timedOut: number;
  cancelled: number;
  /** Duplicate continuations refused by `beginContinuation`. */
  duplicatesBlocked: number;
}

export class LockTimeoutError extends Error {
  readonly code = 'lock_timeout';
  constructor(key: string, ms: number) {
    super(`Timed out after ${ms} ms waiting for lock ${key}`);
  }
}
export class LockCancelledError extends Error {
  readonly code = 'lock_cancelled';
  constructor(key: string) {
    super(`Cancelled while waiting for lock ${key}`);
  }
}

interface Entry {
  mutex: Mutex;
  users: number;
}

export class LockManager {
  private readonly entries = new Map<string, Entry>();
  private readonly continuations = new Map<string, Set<string>>();
  readonly counters: LockCounters = { acquired: 0, waited: 0, timedOut: 0, cancelled: 0, duplicatesBlocked: 0 };

  constructor(private readonly defaultTimeoutMs = 0) {}

  /** Waits for the lock on `key`. Contract in the class comment. */
  async acquire(key: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<HeldLock> {
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    if (opts.signal?.aborted) {
      this.counters.cancelled++;
      throw new LockCancelledError(key);
    }
    const entry = this.entry(key);
    entry.users++;
    if (entry.mutex.isLocked()) this.counters.waited++;
    const ticket = entry.mutex.acquire();
    let release: MutexInterface.Releaser;
    try {
      release = await waitForTurn(ticket, key, timeoutMs, opts.signal);
    } catch (err) {
      // This waiter gave up; when its turn comes anyway it is handed straight on, and only then
      // does it stop counting as a user of the key (so the key's entry is dropped when idle).
      void ticket.then((r) => {
        r();
        this.drop(key, entry);
      });
      if (err instanceof LockCancelledError) this.counters.cancelled++;
      else this.counters.timedOut++;
      throw err;
    }
    this.counters.acquired++;
    let released = false;
    return {
      key,
      release: () => {
        if (released) return;
        released = true;
        release();
        this.drop(key, entry);
      },
    };
  }

  /** Runs `fn` holding the lock on `key`; releases it however `fn` ends. */
  async runExclusive<T>(key: string, fn: (lock: HeldLock) => Promise<T> | T, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
    const lock = await this.acquire(key, opts);
    try {
      return await fn(lock);
    } finally {
      lock.release();
    }
  }

  isLocked(key: string): boolean {
    return this.entries.get(key)?.mutex.isLocked() ?? false;
  }

  /**
   * Registers a continuation (a request for the next step of a task) under `scope`. Returns false,
   * and counts a blocked duplicate, when the same continuation key was already registered: the
   * caller must then drop its request. Keys stay registered until `endScope(scope)`.
   */
  beginContinuation(scope: string, continuationKey: string): boolean {
    let seen = this.continuations.get(scope);
    if (!seen) this.continuations.set(scope, (seen = new Set()));
    if (seen.has(continuationKey)) {
      this.counters.duplicatesBlocked++;
      return false;
    }
    seen.add(continuationKey);
    return true;
  }

  /** True when `continuationKey` was already registered under `scope` (no side effect). */
  hasContinuation(scope: string, continuationKey: string): boolean {
    return this.continuations.get(scope)?.has(continuationKey) ?? false;
  }

  /** Counts a duplicate that a caller detected with `hasContinuation` and dropped. */
  recordDuplicate(): void {
    this.counters.duplicatesBlocked++;
  }

  /**
   * Forgets every continuation registered under `scope`. Hosts call it when a task's run ends
   * (each run's keys are unique, so a later run never collides with a forgotten key) and when a
   * task is let go, so keys do not pile up for the life of the process. Idempotent.
   */
  endScope(scope: string): void {
    this.continuations.delete(scope);
  }

  /** How many keys have a holder or a waiter (idle keys are dropped). */
  activeKeys(): number {
    return this.entries.size;
  }

  /** How many scopes still hold continuation keys (what `endScope` has not yet cleared). */
  continuationScopes(): number {
    return this.continuations.size;
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = { mutex: new Mutex(), users: 0 }));
    return e;
  }

  private drop(key: string, entry: Entry): void {
    entry.users--;
    if (entry.users <= 0 && !entry.mutex.isLocked() && this.entries.get(key) === entry) this.entries.delete(key);
  }
}

/** Resolves with the releaser when `ticket` does; rejects on timeout (`timeoutMs` > 0) or abort. */
function waitForTurn(ticket: Promise<MutexInterface.Releaser>, key: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<MutexInterface.Releaser> {
  if (timeoutMs <= 0 && !signal) return ticket;
  return new Promise((resolve, reject) => {
    const timer = timeoutMs > 0 ? setTimeout(() => finish(() => reject(new LockTimeoutError(key, timeoutMs))), timeoutMs) : undefined;
    const onAbort = () => finish(() => reject(new LockCancelledError(key)));
    let done = false;
    function finish(settle: () => void): void {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    ticket.then((r) => finish(() => resolve(r)));
  });
}

export const taskLockKey = (taskId: string): string => `task:${taskId}`;
export const fileLockKey = (absPath: string): string => `file:${absPath}`;
