import { dirname } from 'node:path';

/**
 * Records this process is still closing (their last writes and their lock's release run off the
 * event loop), by task folder, for every store of the process: a store waits for a task's close
 * before it reads, opens or deletes that task, so this process never finds its own task "running".
 */
const closing = new Map<string, Set<Promise<void>>>();

export function closingRecord(dir: string, done: Promise<void>): void {
  const set = closing.get(dir) ?? new Set();
  set.add(done);
  closing.set(dir, set);
  void done.finally(() => {
    set.delete(done);
    if (set.size === 0 && closing.get(dir) === set) closing.delete(dir);
  });
}

/** Resolves once every record being closed in `dirOrTasksDir` (a task folder, or every task under a tasks folder) is closed. */
export async function finishedWriting(dirOrTasksDir: string): Promise<void> {
  for (;;) {
    const pending = [...closing].filter(([dir]) => dir === dirOrTasksDir || dirname(dir) === dirOrTasksDir).flatMap(([, set]) => [...set]);
    if (pending.length === 0) return;
    await Promise.all(pending);
  }
}
