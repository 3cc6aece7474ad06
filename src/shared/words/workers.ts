/**
 * Worker processes and their pool in people's words ("Keel: Show Workers", `keel workers`, the
 * chat header's tooltip): never the worker or pool machine's state names ("ready", "atCapacity").
 */

/** Each worker machine state in words (docs/workers.md); a state not named here reads "working". */
const WORKER_WORDS: Readonly<Record<string, string>> = {
  starting: 'starting',
  ready: 'idle',
  busy: 'running a task',
  shuttingDown: 'stopping',
  dead: 'stopped',
};

/** A worker's state in words ("idle", "running a task"). */
export function workerStateWords(state: string): string {
  return WORKER_WORDS[state] ?? 'working';
}

/**
 * "4 workers, all idle", "3 workers: 2 running a task, 1 idle", "No workers running", with
 * "; 1 task waits for a free worker (at most 4)" while tasks queue. What a person needs of a pool.
 */
export function poolHeadline(p: { workers: readonly { state: string }[]; waiting: number; max: number }): string {
  const n = p.workers.length;
  const counts = new Map<string, number>();
  for (const w of p.workers) counts.set(workerStateWords(w.state), (counts.get(workerStateWords(w.state)) ?? 0) + 1);
  let text: string;
  if (n === 0) text = 'No workers running';
  else if (counts.size === 1) text = n === 1 ? `1 worker, ${[...counts.keys()][0]}` : `${n} workers, ${n === 2 ? 'both' : 'all'} ${[...counts.keys()][0]}`;
  else text = `${n} workers: ${[...counts].map(([words, k]) => `${k} ${words}`).join(', ')}`;
  if (p.waiting > 0) text += `; ${p.waiting} task${p.waiting === 1 ? ' waits' : 's wait'} for a free worker (at most ${p.max})`;
  return text;
}

/** How the header's tooltip names the worker a task runs on. */
export function taskWorkerTooltip(w: { id: string; state: string; pid: number | null }): string {
  const where = w.pid === null ? `worker ${w.id} (starting)` : `worker ${w.id} (pid ${w.pid})`;
  const doing = w.state === 'busy' ? 'running this task' : workerStateWords(w.state);
  return `Runs in ${where}, ${doing}. Keel: Show Workers lists every worker.`;
}
