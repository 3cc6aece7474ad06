import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * What covers a worker that could not stop its own commands: one killed with SIGKILL (by the host
 * after its grace period, by a person, by the kernel's OOM killer) dies without running any code,
 * and its commands, each the leader of a process group of its own, would live on.
 *
 * Decision: the host gives each worker a random **tag** in its environment (`KEEL_WORKER_TAG`);
 * the worker's commands inherit it (it is neither a key nor an analysis variable, so the tool
 * environment keeps it), and so do their children, whatever group or session they move to. When
 * a worker dies without cleaning up (a signal ended it, or the host killed it), the host kills
 * every process that carries that worker's tag, and the process group of each. A tag is 122 bits
 * of randomness the host made for this worker, so a process that carries it was started under
 * that worker: no other process is ever touched, and a reused pid cannot be mistaken for one
 * (which a list of pids could be). The cost: a background process a finished command left behind
 * (`server &`) is killed with a crashed worker, whereas a worker that ends normally leaves it.
 * A process that cleared its environment (`env -i`) is reached only through its group.
 *
 * Linux only (it reads /proc); elsewhere it does nothing and such commands may outlive a killed
 * worker (docs/workers.md, "Not yet").
 */
export const WORKER_TAG_ENV = 'KEEL_WORKER_TAG';

/**
 * SIGKILL to every process whose environment holds `KEEL_WORKER_TAG=<tag>` and to its process
 * group, repeated while new ones appear (a parent forking as it dies), a few rounds at most.
 * Never this process or its own group. Synchronous (for a process on its way out: a /proc scan
 * takes 5–30 ms), never throws; returns how many processes carried the tag.
 */
export function sweepWorkerProcesses(tag: string): number {
  if (process.platform !== 'linux' || tag === '') return 0;
  const needle = `${WORKER_TAG_ENV}=${tag}`;
  const ownGroup = groupOf(readText('/proc/self/stat'));
  let found = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const tagged: Tagged[] = [];
    for (const pid of processIds(readNames('/proc'))) {
      const t = tagged1(pid, needle, readText(`/proc/${pid}/environ`), () => readText(`/proc/${pid}/stat`));
      if (t) tagged.push(t);
    }
    if (tagged.length === 0) break;
    found += tagged.length;
    killAll(tagged, ownGroup);
  }
  return found;
}

/** {@link sweepWorkerProcesses} off the event loop (the files read in the background): for a host that goes on. */
export async function sweepWorkerProcessesInBackground(tag: string): Promise<number> {
  if (process.platform !== 'linux' || tag === '') return 0;
  const needle = `${WORKER_TAG_ENV}=${tag}`;
  const ownGroup = groupOf(await readTextLater('/proc/self/stat'));
  let found = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const names = await readdir('/proc').catch(() => []);
    const tagged = (
      await Promise.all(
        processIds(names).map(async (pid) => {
          const environ = await readTextLater(`/proc/${pid}/environ`);
          if (!environ.includes(needle)) return null;
          const stat = await readTextLater(`/proc/${pid}/stat`);
          return tagged1(pid, needle, environ, () => stat);
        }),
      )
    ).filter((t): t is Tagged => t !== null);
    if (tagged.length === 0) break;
    found += tagged.length;
    killAll(tagged, ownGroup);
  }
  return found;
}

const ROUNDS = 4;

interface Tagged {
  pid: number;
  pgrp: number | null;
}

function processIds(names: string[]): number[] {
  return names.filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid).map(Number);
}

/** The process, if its environment (NUL-separated) holds exactly `needle`. */
function tagged1(pid: number, needle: string, environ: string, stat: () => string): Tagged | null {
  if (!environ.split('\0').includes(needle)) return null;
  return { pid, pgrp: groupOf(stat()) };
}

function killAll(tagged: Tagged[], ownGroup: number | null): void {
  for (const { pid, pgrp } of tagged) {
    if (pgrp !== null && pgrp > 1 && pgrp !== ownGroup) signal(-pgrp);
    signal(pid);
  }
}

// Another user's process, or one that just ended: not ours to look at, or nothing left ('').
function readText(path: string): string {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return '';
  }
}

function readTextLater(path: string): Promise<string> {
  return readFile(path, 'latin1').catch(() => '');
}

function readNames(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/** The process group from a /proc stat line (after the command name, which may hold spaces); null if unreadable. */
function groupOf(stat: string): number | null {
  if (stat === '') return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const pgrp = Number(fields[2]);
  return Number.isInteger(pgrp) && pgrp > 0 ? pgrp : null;
}

function signal(target: number): void {
  try {
    process.kill(target, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
