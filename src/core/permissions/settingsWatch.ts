import { realpathSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Tells when any of a set of files may have changed, by watching them (issue 25: no stat of every
 * settings file on every decision). Each file's folder is watched for its name, and the folder's
 * own parent for the folder's name (a `.claude/` created, removed, renamed or replaced by a link);
 * a file that is a link is watched where it leads too. Any event re-arms the watches, since the
 * folders themselves may have changed.
 *
 * Freshness: on Linux, inotify queues the event during the write itself, and a watcher's callback
 * runs in the event loop's poll phase. `settled()` waits for two `setImmediate` turns, so a whole
 * poll phase lies between the call and its end whichever phase the caller runs in (one turn is
 * not enough: called from an I/O callback, the check phase comes before the next poll). So after
 * `await settled()`, a change finished before the call is always seen (the engine does this
 * before each decision). Where watching is not possible (no inotify watches left, an unusual file system),
 * `changed()` falls back to comparing `stamp()` each time, as before. Never throws.
 */
export class FileWatch {
  private watchers: FSWatcher[] = [];
  private dirty = false;
  private fallback = false;
  private lastStamp = '';

  /**
   * `paths`: the files to watch. `stamp`: what identifies their state now (used only when
   * watching failed). Call `changed()` to learn whether to re-read them.
   */
  constructor(
    private readonly paths: readonly string[],
    private readonly stamp: () => string,
  ) {
    this.arm();
    if (this.fallback) this.lastStamp = this.stamp();
  }

  /** Resolves after the watch events already queued were handled (see the freshness note). */
  static settled(): Promise<void> {
    return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
  }

  /** True (once) when a watched file may have changed since the last call that returned true. */
  changed(): boolean {
    if (this.fallback) {
      const now = this.stamp();
      if (now === this.lastStamp) return false;
      this.lastStamp = now;
      return true;
    }
    if (!this.dirty) return false;
    this.dirty = false;
    return true;
  }

  dispose(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  private arm(): void {
    this.dispose();
    const byDir = new Map<string, Set<string>>();
    const want = (dir: string, name: string) => {
      let names = byDir.get(dir);
      if (!names) byDir.set(dir, (names = new Set()));
      names.add(name);
    };
    for (const p of this.paths) {
      const dir = dirname(p);
      want(dir, basename(p));
      want(dirname(dir), basename(dir));
      const real = realOrNull(p);
      if (real && real !== p) {
        want(dirname(real), basename(real));
        const realDir = realOrNull(dir);
        if (realDir && realDir !== dir) want(realDir, basename(p));
      }
    }
    for (const [dir, names] of byDir) {
      if (!isDirectory(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, (_event, name) => {
          if (name !== null && !names.has(String(name))) return;
          this.dirty = true;
          // The folders may have changed too (created, replaced by a link): watch them anew.
          queueMicrotask(() => this.arm());
        });
        w.on('error', () => this.giveUp());
        this.watchers.push(w);
      } catch {
        this.giveUp();
        return;
      }
    }
  }

  private giveUp(): void {
    if (this.fallback) return;
    this.fallback = true;
    this.dirty = true;
    this.dispose();
    this.lastStamp = '';
  }
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
