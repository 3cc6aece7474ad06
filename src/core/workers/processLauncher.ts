import type { Duplex } from 'node:stream';
import { MessageChannel as PortPair, Worker } from 'node:worker_threads';
import { PortStream, RELAY_SOURCE } from './portStream';
import { killProcessGroup, scheduleSpawn, spawnWorkerProcess, workerSpawnSpec, WORKER_CHANNEL_FD, type WorkerCommand } from './spawnWorker';
import { AUTOGROUP_RETRY_MS, AUTOGROUP_TRIES, autogroupNice, lowerWorkerPriority } from './workerPriority';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Starts worker processes without blocking the host's event loop.
 *
 * `child_process.spawn` is synchronous: it forks the host and waits until the child has exec'd.
 * For a big host (the extension host, a CLI with a pool) on a loaded machine that is 20–60 ms per
 * worker (measured with --cpu-prof in the pool bench: `ChildProcess.spawn` was the largest part
 * of every event-loop block over 50 ms). So spawns run on a **spawner thread** (one
 * `worker_threads` Worker per host process, started on the first spawn, unref'd): it calls
 * `spawn`, and posts back the pid, stderr, `error` and `exit`. Killing stays here
 * (`process.kill` by pid works from any thread). Where a thread cannot start, spawns run in this
 * thread as before, at most one per turn of the event loop (`scheduleSpawn`).
 */
export interface LaunchCallbacks {
  /** The host's end of the worker's channel (called once, just before `spawned`). */
  channel(stream: Duplex): void;
  /** The process exists (its pid). */
  spawned(pid: number): void;
  /** It could not be started (a missing binary: no pid) — or `error` after it started (pid set). */
  error(message: string, pid: number | undefined): void;
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  stderr(text: string): void;
  /** Something went wrong that does not stop the worker (its priority could not be lowered). */
  warn(message: string): void;
}

/**
 * Launches one worker; returns a function that withdraws it: no callback is called after it, and a
 * process that was not yet reported by `spawned` is killed as soon as it appears (one that was is
 * the caller's to kill).
 */
export function launchWorkerProcess(cmd: WorkerCommand, workerId: string, niceness: number | null, cb: LaunchCallbacks): () => void {
  const thread = spawnerThread();
  if (thread) return thread.launch(cmd, workerId, niceness, cb);
  return launchInThisThread(cmd, workerId, niceness, cb);
}

/** The fallback where no spawner thread can run (exported for its tests): spawns here, one per turn of the event loop. */
export function launchInThisThread(cmd: WorkerCommand, workerId: string, niceness: number | null, cb: LaunchCallbacks): () => void {
  return scheduleSpawn(() => {
    try {
      const child = spawnWorkerProcess(cmd, workerId, cb.stderr);
      let exited = false;
      const channel = child.stdio[WORKER_CHANNEL_FD] as Duplex | null | undefined;
      if (child.pid !== undefined && channel) {
        if (niceness !== null) lowerWorkerPriority(child.pid, niceness, () => !exited, cb.warn);
        cb.channel(channel);
        cb.spawned(child.pid);
      } else channel?.destroy();
      child.on('error', (err) => cb.error(err.message, child.pid));
      child.on('exit', (code, signal) => {
        exited = true;
        cb.exit(code, signal);
      });
    } catch (err) {
      cb.error(errorMessage(err), undefined);
    }
  });
}

type FromThread =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'error'; id: number; message: string; pid: number | undefined }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: 'stderr'; id: number; text: string }
  | { type: 'warn'; id: number; message: string };

// The thread's whole program: plain JavaScript (eval'd, so it works from any bundle or from source).
// \`lower\` is lowerWorkerPriority (workerPriority.ts) in plain JavaScript (its decision about the
// autogroup is autogroupNice's own source text, so the two cannot disagree), run here right after the
// spawn so the worker is below the host's priority before it loads its program (from the host's
// thread it came 40–200 ms later, while the busy host waited for the core new workers took).
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const { getPriority, setPriority } = require('node:os');
const { readFileSync, writeFileSync } = require('node:fs');
${RELAY_SOURCE}
const autogroupNice = ${autogroupNice.toString()};
function lower(pid, nice, alive, warn) {
  const target = Math.max(nice, getPriority());
  try { setPriority(pid, target); } catch (err) { if (alive()) warn('could not lower its CPU priority (nice ' + target + '): ' + err.message); }
  if (process.platform !== 'linux') return;
  let groupTarget;
  try {
    groupTarget = autogroupNice(readFileSync('/proc/self/autogroup', 'utf8'), readFileSync('/proc/' + pid + '/autogroup', 'utf8'), nice);
  } catch { return; }
  if (groupTarget === null) return;
  let tries = 0;
  const attempt = () => {
    if (!alive()) return;
    tries++;
    try { writeFileSync('/proc/' + pid + '/autogroup', String(groupTarget)); } catch (err) {
      if (err.code === 'EAGAIN' && tries < ${AUTOGROUP_TRIES}) setTimeout(attempt, ${AUTOGROUP_RETRY_MS}).unref();
      else if (err.code !== 'ENOENT' && err.code !== 'ESRCH' && alive()) warn('could not lower the CPU priority of its scheduling group (nice ' + groupTarget + '): ' + err.message);
    }
  };
  attempt();
}
parentPort.on('message', (m) => {
  let child;
  try {
    child = spawn(m.command, m.args, m.options);
  } catch (err) {
    m.port.close();
    parentPort.postMessage({ type: 'error', id: m.id, message: String(err && err.message), pid: undefined });
    return;
  }
  let exited = false;
  const channel = child.stdio[${WORKER_CHANNEL_FD}];
  if (channel) relay(channel, m.port);
  else m.port.close();
  if (child.pid !== undefined) {
    if (m.niceness !== null) lower(child.pid, m.niceness, () => !exited, (message) => parentPort.postMessage({ type: 'warn', id: m.id, message }));
    parentPort.postMessage({ type: 'spawned', id: m.id, pid: child.pid });
  }
  child.on('error', (err) => parentPort.postMessage({ type: 'error', id: m.id, message: String(err && err.message), pid: child.pid }));
  child.on('exit', (code, signal) => {
    exited = true;
    parentPort.postMessage({ type: 'exit', id: m.id, code, signal });
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => parentPort.postMessage({ type: 'stderr', id: m.id, text }));
});
`;

interface Launch {
  cb: LaunchCallbacks;
  /** The host's end of the channel until the process is reported (then the caller's). */
  stream: PortStream | null;
  pid: number | undefined;
  withdrawn: boolean;
}

class SpawnerThread {
  private nextId = 1;
  private readonly launches = new Map<number, Launch>();

  constructor(private readonly worker: Worker) {
    worker.on('message', (m: FromThread) => this.onMessage(m));
    // A thread that dies takes its children's exit events with it (their sockets still close,
    // which the pool reports); spawns run in this thread from then on.
    worker.on('error', () => this.lost());
    worker.on('exit', () => this.lost());
    // After the listeners (a 'message' listener refs the thread again): the thread never keeps
    // the host alive; a worker process whose host has gone sees its socket close and exits.
    worker.unref();
  }

  launch(cmd: WorkerCommand, workerId: string, niceness: number | null, cb: LaunchCallbacks): () => void {
    const id = this.nextId++;
    const ports = new PortPair();
    const launch: Launch = { cb, stream: new PortStream(ports.port1), pid: undefined, withdrawn: false };
    this.launches.set(id, launch);
    this.worker.postMessage({ id, niceness, port: ports.port2, ...workerSpawnSpec(cmd, workerId) }, [ports.port2]);
    // A process whose pid was given is the caller's to kill; one that appears after this is killed here.
    return () => {
      launch.withdrawn = true;
    };
  }

  private onMessage(m: FromThread): void {
    const launch = this.launches.get(m.id);
    if (!launch) return;
    switch (m.type) {
      case 'spawned': {
        launch.pid = m.pid;
        const stream = launch.stream;
        launch.stream = null;
        // Withdrawn while the thread was starting it: it must not live on.
        if (launch.withdrawn || !stream) {
          stream?.destroy();
          killProcessGroup(m.pid);
          return;
        }
        launch.cb.channel(stream);
        launch.cb.spawned(m.pid);
        return;
      }
      case 'error':
        if (m.pid === undefined) {
          launch.stream?.destroy();
          launch.stream = null;
          this.launches.delete(m.id);
        }
        if (!launch.withdrawn) launch.cb.error(m.message, m.pid);
        return;
      case 'exit':
        this.launches.delete(m.id);
        if (!launch.withdrawn) launch.cb.exit(m.code, m.signal);
        return;
      case 'stderr':
        if (!launch.withdrawn) launch.cb.stderr(m.text);
        return;
      case 'warn':
        if (!launch.withdrawn) launch.cb.warn(m.message);
        return;
    }
  }

  private lost(): void {
    if (thread === this) {
      thread = null;
      threadFailed = true;
    }
    for (const [id, launch] of this.launches) {
      this.launches.delete(id);
      launch.stream?.destroy();
      if (!launch.withdrawn) launch.cb.error('the spawner thread stopped', launch.pid);
    }
  }
}

let thread: SpawnerThread | null = null;
/** Set when a thread could not start or stopped: spawns run in this thread from then on. */
let threadFailed = false;

/** The process's spawner thread, started on first use; null where threads are unavailable. */
function spawnerThread(): SpawnerThread | null {
  if (thread || threadFailed) return thread;
  try {
    thread = new SpawnerThread(new Worker(THREAD_SOURCE, { eval: true }));
  } catch {
    threadFailed = true;
  }
  return thread;
}
