import { E_CANCELED, E_TIMEOUT, Mutex, withTimeout, type MutexInterface } from 'async-mutex';

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
    const entry = this.entry(key);
    entry.users++;
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    const contended = entry.mutex.isLocked();
    if (contended) this.counters.waited++;
    const lockable: MutexInterface = timeoutMs > 0 ? withTimeout(entry.mutex, timeoutMs, new LockTimeoutError(key, timeoutMs)) : entry.mutex;
    let onAbort: (() => void) | undefined;
    try {
      if (opts.signal?.aborted) throw new LockCancelledError(key);
      const acquired = lockable.acquire();
      const release = opts.signal
        ? await new Promise<MutexInterface.Releaser>((resolve, reject) => {
            onAbort = () => {
              reject(new LockCancelledError(key));
              // If the acquire later succeeds, give the lock straight back.
              acquired.then((r) => r(), () => undefined);
            };
            opts.signal!.addEventListener('abort', onAbort, { once: true });
            acquired.then(resolve, reject);
          })
        : await acquired;
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
    } catch (err) {
      this.drop(key, entry);
      if (err instanceof LockCancelledError || err === E_CANCELED) {
        this.counters.cancelled++;
        throw err instanceof LockCancelledError ? err : new LockCancelledError(key);
      }
      if (err instanceof LockTimeoutError || err === E_TIMEOUT) {
        this.counters.timedOut++;
        throw err instanceof LockTimeoutError ? err : new LockTimeoutError(key, timeoutMs);
      }
      throw err;
    } finally {
      if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    }
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
   * caller must then drop its request. Keys stay registered until `endScope`.
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

  endScope(scope: string): void {
    this.continuations.delete(scope);
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

export const taskLockKey = (taskId: string): string => `task:${taskId}`;
export const fileLockKey = (absPath: string): string => `file:${absPath}`;
