import { spawn, type ChildProcess } from 'node:child_process';
import { createTurnQueue } from './turnQueue';

/**
 * How a host starts a worker process: `command args… --worker-id <id>`, its channel to the host
 * on fd 3 (WORKER_CHANNEL_FD).
 * Hosts pass `process.execPath` with `dist/worker.js` (or `dist/cli.js worker`); inside VS Code,
 * `electronRunAsNode` makes the extension host's own binary act as Node, so no other Node is
 * needed.
 */
export interface WorkerCommand {
  command: string;
  args: string[];
  /** Adds ELECTRON_RUN_AS_NODE=1 (the worker removes it again before it runs any tool). */
  electronRunAsNode?: boolean;
  /**
   * The worker's environment (default: this process's). Hosts pass the tool environment of their
   * secret keeper, so a worker holds no API key: the provider's key travels with each query.
   */
  baseEnv?: NodeJS.ProcessEnv;
  /** Extra environment variables (tests). */
  env?: Record<string, string>;
}

/**
 * V8 options every worker starts with (docs/benchmarks.md, pool: what each saves and costs).
 * - `--max-semi-space-size=1` caps each of the young generation's semi-spaces at 1 MB (Node 20's
 *   default grows them to 16 MB under allocation): a worker streams many small short-lived
 *   objects, so a busy query grew an idle worker's young generation by ~16–32 MB it kept
 *   afterwards. The cost is more frequent, shorter scavenges.
 * - `--no-wasm-tier-up --no-wasm-dynamic-tiering`: WebAssembly stays on V8's baseline compiler
 *   (Liftoff). A worker runs two wasm modules: undici's HTTP parser (llhttp, every provider
 *   stream) and tree-sitter's bash parser (permission analysis). Tiering their large functions
 *   up to TurboFan happened on background threads during a worker's first queries and held
 *   15–27 MB of compiler memory for a while after each (idle RSS 91–113 MB right after a query,
 *   74 MB without it); the baseline code is fast enough for both (the permission analysis was
 *   measured faster: no compiles competing for the machine's two cores).
 * - `--max-opt=1`: JavaScript's top tier is V8's baseline compiler (Sparkplug), not TurboFan.
 *   Within a worker's first queries xstate's state-path helpers get hot enough for TurboFan, and
 *   its first compile maps ~4 MB more of the `node` binary (the optimizing compiler's own code
 *   pages, counted in each worker's RSS): idle RSS 62.4 → 58.4 MB. A worker's heavy work is
 *   WebAssembly (tree-sitter, already on Liftoff), native JSON and regular expressions, and
 *   waiting for the model; the pool bench's CPU-bound phase (permission analysis of 300-command
 *   chains) was not slower without TurboFan (docs/benchmarks.md). Hosts keep TurboFan.
 */
export const WORKER_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=1', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering', '--max-opt=1'];

/**
 * Environment every worker starts with, unless the host's environment already sets the variable;
 * the worker removes these from its own environment (WORKER_ONLY_ENV) before any tool runs, so
 * tool processes never see them. glibc's malloc otherwise raises its mmap and trim thresholds
 * dynamically (up to 32 MB) after large blocks are freed, and keeps what V8's compiler and
 * parser freed as resident memory of an idle process; fixed 128 KB thresholds (the static
 * defaults) give large freed blocks back to the OS. Other C libraries ignore the variables.
 */
export const WORKER_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' };

/**
 * The default for a host whose bundle sits beside `worker.js` (dist/): the lean worker bundle
 * on this process's binary (`ELECTRON_RUN_AS_NODE` when that binary is Electron's).
 */
export function workerCommandBeside(bundleDir: string, join: (a: string, b: string) => string): WorkerCommand {
  return { command: process.execPath, args: [...WORKER_NODE_OPTIONS, join(bundleDir, 'worker.js')], electronRunAsNode: Boolean(process.versions.electron) };
}

/** Variables the host set only to start the worker; the worker deletes them from its own environment. */
export const WORKER_ONLY_ENV = 'KEEL_WORKER_UNSET_ENV';

/**
 * The worker's file descriptor for its channel to the host: one end of a socketpair that `spawn`
 * creates (stdio 'pipe' is a socketpair on Unix). It has no name in the file system, so no other
 * process can connect to it (a socket cannot be opened through /proc/PID/fd either); the host's
 * end is close-on-exec, so no other process it starts inherits it; and the worker's own end is
 * marked close-on-exec by Node when it starts, so the commands a worker runs do not get it.
 */
export const WORKER_CHANNEL_FD = 3;

/** What `spawn` is called with for one worker (the same in this thread and in the spawner thread). */
export interface SpawnSpec {
  command: string;
  args: string[];
  options: { env: NodeJS.ProcessEnv; detached: boolean; stdio: ['ignore', 'ignore', 'pipe', 'pipe']; windowsHide: true };
}

/**
 * The worker's command line and options: `command args… --worker-id <id>`, as the leader of a new
 * process group (so the whole group can be killed), stdin and stdout closed, stderr piped (a
 * worker's own log), and its channel to the host on fd 3 (WORKER_CHANNEL_FD).
 */
export function workerSpawnSpec(cmd: WorkerCommand, workerId: string): SpawnSpec {
  const env: NodeJS.ProcessEnv = { ...(cmd.baseEnv ?? process.env), ...cmd.env };
  const unset: string[] = [];
  const only: Record<string, string> = { ...WORKER_ENV, ...(cmd.electronRunAsNode ? { ELECTRON_RUN_AS_NODE: '1' } : {}) };
  for (const [name, value] of Object.entries(only)) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    unset.push(name);
  }
  if (unset.length > 0) env[WORKER_ONLY_ENV] = unset.join(',');
  return {
    command: cmd.command,
    args: [...cmd.args, '--worker-id', workerId],
    options: { env, detached: process.platform !== 'win32', stdio: ['ignore', 'ignore', 'pipe', 'pipe'], windowsHide: true },
  };
}

/**
 * Starts the worker in this thread (see {@link workerSpawnSpec}), with stderr to `onStderr`; the
 * host's end of its channel is `stdio[WORKER_CHANNEL_FD]`.
 * Throws only for what `spawn` throws synchronously (a bad argument); a missing binary arrives as
 * the child's `error` event. Hosts go through `launchWorkerProcess` (processLauncher.ts), which
 * spawns off the event loop.
 */
export function spawnWorkerProcess(cmd: WorkerCommand, workerId: string, onStderr: (text: string) => void): ChildProcess {
  const spec = workerSpawnSpec(cmd, workerId);
  const child = spawn(spec.command, spec.args, spec.options);
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => onStderr(d));
  return child;
}

/** SIGKILL to the worker's whole process group (its own children with it). Never throws. */
export function killProcessGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    if (process.platform === 'win32') process.kill(pid, 'SIGKILL');
    else process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Starting a process blocks this one's event loop for a while (tens of ms on a loaded machine,
 * more for a big host); a pool that starts four workers at once in one turn of the event loop
 * would block it four times as long. Spawns in this thread go through here: at most one per
 * turn, the others on the following turns, in order (turnQueue.ts). Returns a function that
 * withdraws a spawn not yet run.
 */
export const scheduleSpawn: (start: () => void) => () => void = createTurnQueue();
