import { readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The CPU priority (a nice value, 0 normal … 19 lowest) workers run at by default: below the host.
 *
 * Why: the host is what the person sees (the extension host serves the editor and every view);
 * a worker streaming an answer or analysing a command can wait a few milliseconds for a core. On
 * a machine with fewer cores than busy processes (the pool bench: 4 workers, their commands and
 * the model server on 2 cores) a worker at the host's priority took the host's core for a whole
 * scheduler slice at a time: the host's longest event-loop delays (47–196 ms) were spans in which
 * it was runnable and did not run (docs/benchmarks.md, "The host's event-loop block"). At nice 10
 * a worker gets ~1/9 of the CPU the host gets when both want it, and all it wants when the host
 * is idle, so workers are no slower on an idle machine.
 *
 * What a worker starts inherits its nice value (Unix): the commands an agent runs on a worker
 * run at the same lower priority, yielding to the editor and to the person's own terminals when
 * the machine is busy (the decision is in docs/workers.md, "CPU priority").
 */
export const WORKER_NICENESS = 10;

/** What lowering a priority touches (a seam for tests). */
export interface PriorityIo {
  /** This process's (this thread's, on Linux) nice value. */
  getPriority(): number;
  setPriority(pid: number, nice: number): void;
  readFile(path: string): string;
  writeFile(path: string, text: string): void;
  /** Runs `fn` after `ms` without keeping the process alive. */
  later(ms: number, fn: () => void): void;
}

const REAL_IO: PriorityIo = {
  getPriority: () => getPriority(),
  setPriority,
  readFile: (path) => readFileSync(path, 'utf8'),
  writeFile: (path, text) => writeFileSync(path, text),
  later: (ms, fn) => setTimeout(fn, ms).unref(),
};

/** Linux lets an unprivileged process set an autogroup's nice once per 100 ms (system-wide); EAGAIN before that. */
export const AUTOGROUP_RETRY_MS = 110;
export const AUTOGROUP_TRIES = 20;

/**
 * Lowers the CPU priority of a worker process the host has just started to `nice`, or to the
 * host's own where that is lower still (a host run with `nice 15` gets workers at 15: raising a
 * priority needs a privilege). Never throws; what cannot be done is reported through `log` (the
 * worker then runs at the host's priority).
 *
 * Two knobs, because Linux has two ways of sharing the CPU between processes:
 * - the process's own nice value (`setpriority`), which everything it starts inherits; it
 *   weighs the worker against the host where both are scheduled in one group (macOS; Windows,
 *   where nice 10 is the below-normal priority class; Linux without autogroup, or with cgroups);
 * - on Linux, the nice value of the worker's **autogroup** (`/proc/PID/autogroup`). A worker is
 *   the leader of a session of its own (it is spawned `detached`, so that its process group can
 *   be killed), and with `kernel.sched_autogroup_enabled` (the default of most distributions'
 *   kernels) every new session is a scheduling group of its own, weighed against the host's
 *   session as a whole: the process's nice value then counts only inside that group, and each
 *   worker at autogroup nice 0 gets as much CPU as the host's whole session. Written only when
 *   the worker's autogroup is not the host's own (never lowers the host itself; a host in the
 *   root autogroup, as under a CI runner or a service manager, is `autogroupNice`'s case); an unprivileged
 *   write is refused with EAGAIN within 100 ms of another, so it is retried (a pool starts
 *   several workers at once) while `alive()` holds.
 */
export function lowerWorkerPriority(pid: number, nice: number, alive: () => boolean, log: (message: string) => void, io: PriorityIo = REAL_IO): void {
  const target = Math.max(nice, io.getPriority());
  try {
    io.setPriority(pid, target);
  } catch (err) {
    if (alive()) log(`could not lower its CPU priority (nice ${target}): ${errorMessage(err)}`);
  }
  if (process.platform !== 'linux') return;
  let groupTarget: number | null;
  try {
    groupTarget = autogroupNice(io.readFile('/proc/self/autogroup'), io.readFile(`/proc/${pid}/autogroup`), nice);
  } catch {
    // No autogroup (a kernel without it) or the worker is gone already: nothing more to do.
    return;
  }
  if (groupTarget === null) return;
  let tries = 0;
  const attempt = (): void => {
    if (!alive()) return;
    tries++;
    try {
      io.writeFile(`/proc/${pid}/autogroup`, String(groupTarget));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' && tries < AUTOGROUP_TRIES) io.later(AUTOGROUP_RETRY_MS, attempt);
      else if (code !== 'ENOENT' && code !== 'ESRCH' && alive()) log(`could not lower the CPU priority of its scheduling group (nice ${groupTarget}): ${errorMessage(err)}`);
    }
  };
  attempt();
}

/**
 * The nice value to give a worker's autogroup, from the texts of `/proc/self/autogroup` (the
 * host's) and `/proc/PID/autogroup` (the worker's), or null to leave it alone: when the worker has
 * no autogroup of its own, or shares the host's (never lower the host itself).
 *
 * An empty text is the **root** autogroup: the kernel prints nothing for a process in it, as for
 * everything started by init or a service manager without a session of its own (CI runners,
 * containers, services). That is a group the worker is not in — a detached worker always leads a
 * session of its own — and it weighs like one process at nice 0, so the worker's group is lowered
 * just as when the host has an autogroup of its own.
 *
 * Self-contained (nothing from outside its body, no nested functions): the spawner thread runs
 * its source text (processLauncher.ts), so the host and the thread decide with the same code.
 */
export function autogroupNice(ownText: string, theirsText: string, nice: number): number | null {
  const own = ownText.trim().split(/\s+/);
  const theirs = theirsText.trim().split(/\s+/);
  if (theirs[0] === '' || theirs[0] === own[0]) return null;
  return Math.max(nice, Number(own[2]) || 0);
}
