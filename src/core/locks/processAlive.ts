/**
 * True while a process with this pid exists on this machine (a zombie counts until it is reaped;
 * one owned by another user counts too: `EPERM` says it exists). What every stale claim is judged
 * by — a task's lock, a leftover temporary file or rewrite named by its writer's pid, a socket's
 * endpoint file, a worker's process. Never throws.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
