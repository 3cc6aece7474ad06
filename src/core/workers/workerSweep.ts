import { readdirSync, readFileSync } from 'node:fs';

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
 * Never this process or its own group. Synchronous, never throws; returns how many processes
 * carried the tag.
 */
export function sweepWorkerProcesses(tag: string): number {
  if (process.platform !== 'linux' || tag === '') return 0;
  const needle = `${WORKER_TAG_ENV}=${tag}`;
  const ownGroup = groupOf('self');
  let found = 0;
  for (let round = 0; round < 4; round++) {
    const tagged = taggedProcesses(needle);
    if (tagged.length === 0) break;
    found += tagged.length;
    for (const { pid, pgrp } of tagged) {
      if (pgrp !== null && pgrp > 1 && pgrp !== ownGroup) signal(-pgrp);
      signal(pid);
    }
  }
  return found;
}

function taggedProcesses(needle: string): { pid: number; pgrp: number | null }[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: { pid: number; pgrp: number | null }[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      // Another user's process, or one that just ended: not ours to look at, or nothing left.
      environ = readFileSync(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(needle)) continue;
    out.push({ pid, pgrp: groupOf(name) });
  }
  return out;
}

/** The process group of /proc/<pid>, from its stat line (after the command name, which may hold spaces). */
function groupOf(pid: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgrp = Number(fields[2]);
    return Number.isInteger(pgrp) ? pgrp : null;
  } catch {
    return null;
  }
}

function signal(target: number): void {
  try {
    process.kill(target, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
