import { watch } from 'node:fs';
import { onTestFailed, onTestFinished } from 'vitest';

/**
 * Waiting on events, not on the clock. A `Changes` is told (`notify`) whenever what a test watches
 * may have changed — an actor's snapshot, a line from a child process, a request reaching a fake
 * server — and `until(ok)` resolves at the first notification after which `ok()` holds. There is
 * no timer: a condition that never comes true is bounded by the test's own timeout, and when the
 * test fails while waiting, `describe()` is printed with the failure, so a loaded machine makes a
 * test slower, never wrong.
 */
export class Changes {
  private readonly listeners = new Set<() => void>();

  /** Something watched may have changed: re-check every pending condition. */
  readonly notify = (): void => {
    for (const listener of [...this.listeners]) listener();
  };

  /** Calls `listener` at each notification until the returned function is called. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  until(ok: () => boolean, describe?: () => string): Promise<void> {
    return eventually(ok, describe, this);
  }

  /** Resolves at the next notification. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.subscribe(() => {
        stop();
        resolve();
      });
    });
  }
}

/** A Changes notified by something that takes listeners (the fake model server's `onChange`). */
export function changesOf(source: { onChange(listener: () => void): () => void }): Changes {
  const changes = new Changes();
  const stop = source.onChange(changes.notify);
  try {
    onTestFinished(() => void stop());
  } catch {
    /* outside a test: it lives as long as its source */
  }
  return changes;
}

/**
 * A Changes notified whenever a file in `dir` (not below it) is created, written or removed — what
 * another process writes, such as a pid file. Watched until the test ends.
 */
export function watchDir(dir: string): Changes {
  const changes = new Changes();
  const watcher = watch(dir, changes.notify);
  watcher.on('error', () => undefined);
  onTestFinished(() => watcher.close());
  return changes;
}

/** How often a condition with no event to wait on is checked: a rate, never a deadline. */
const CHECK_MS = 25;

/**
 * Resolves when `ok()` holds. With `sources`, it is checked at each of their notifications (the
 * test waits on events). Without, for state no event reports — another process's pid, a file
 * another process writes — it is checked every CHECK_MS. Either way there is no deadline: the
 * test's timeout bounds the wait, and `describe()` is printed if the test fails while waiting.
 * Rejects if `ok()` throws.
 */
export function eventually(ok: () => boolean, describe?: () => string, ...sources: Changes[]): Promise<void> {
  try {
    if (ok()) return Promise.resolve();
  } catch (err) {
    return Promise.reject(err);
  }
  let waiting = true;
  if (describe) {
    try {
      onTestFailed(() => {
        if (waiting) process.stderr.write(`still waiting: ${describe()}\n`);
      });
    } catch {
      /* not inside a test (a hook): nothing to report to */
    }
  }
  return new Promise<void>((resolve, reject) => {
    const stops: (() => void)[] = [];
    const end = (err?: unknown) => {
      waiting = false;
      for (const stop of stops) stop();
      if (err === undefined) resolve();
      else reject(err);
    };
    const check = () => {
      if (!waiting) return;
      try {
        if (ok()) end();
      } catch (err) {
        end(err);
      }
    };
    for (const s of sources) stops.push(s.subscribe(check));
    if (sources.length === 0) {
      const timer = setInterval(check, CHECK_MS);
      stops.push(() => clearInterval(timer));
    }
  });
}

/**
 * For in-memory fakes only (scripted actors, fake runtimes: no I/O), which settle within a few
 * turns of the event loop: waits at most `rounds` turns for `ok()` and says whether it held. What
 * has not happened by then will not happen, so a replay stops there and compares.
 */
export async function withinTurns(ok: () => boolean, rounds = 50): Promise<boolean> {
  for (let i = 0; i < rounds && !ok(); i++) await new Promise((r) => setImmediate(r));
  return ok();
}

/**
 * Lets everything already in motion on the event loop finish: pending promise callbacks and
 * immediates, a few rounds deep. Counts turns of the event loop, not milliseconds, so it behaves
 * the same on a loaded machine. For "nothing else happens after this" checks.
 */
export async function settled(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}
