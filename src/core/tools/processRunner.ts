import { errorMessage } from '../../shared/domain/errors';
import { spawn, type ChildProcess } from 'node:child_process';
import { toolEnvironment } from '../security/toolEnvironment';
import { errnoCode } from './paths';

export interface RunProcessOptions {
  cwd: string;
  /** Aborting kills the whole process group. */
  signal: AbortSignal;
  /** Kill the whole process group after this many ms. Absent: no timeout. */
  timeoutMs?: number;
  /**
   * The child's whole environment. Default: `toolEnvironment()` — Keel's own without its keys and
   * without what would make the permission analysis unsound; never Keel's environment as is.
   */
  env?: NodeJS.ProcessEnv;
  onStdout?(chunk: string): void;
  onStderr?(chunk: string): void;
  /** Time between SIGTERM and SIGKILL when killing. Default 1000 ms. */
  killGraceMs?: number;
  /**
   * After the process exits, how long to wait for its output pipes to close. A background child
   * (`server &`) inherits them and may keep them open for ever; after this the pipes are dropped.
   * Default 250 ms.
   */
  drainMs?: number;
  /**
   * Written to the child's stdin, which is then closed. Absent: stdin is closed from the start.
   * A child that exits without reading it is not an error.
   */
  stdin?: string;
}

/**
 * The process groups (their leaders' pids) of the commands `runProcess` started in this process
 * that have not finished: a group goes in when its leader is spawned and out when its run settles
 * (its group killed on cancel or timeout, or its leader exited and its output drained).
 */
const runningGroups = new Set<number>();

/**
 * SIGKILL to the process group of every command this process started with `runProcess` that is
 * still running. For a process that is about to end without waiting for its commands (a worker
 * whose host is gone, on its way out): they would otherwise outlive it in groups of their own.
 * Background processes a finished command left behind are not touched (as in any other ending).
 * Synchronous, never throws; returns how many groups were signalled.
 */
export function killRunningProcessGroups(): number {
  let signalled = 0;
  for (const pid of runningGroups) {
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
      signalled++;
    } catch {
      // Already gone.
    }
  }
  runningGroups.clear();
  return signalled;
}

export type ProcessOutcome =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null; pipesHeldOpen: boolean }
  | { kind: 'timedOut'; timeoutMs: number }
  | { kind: 'cancelled' }
  | { kind: 'spawnFailed'; message: string };

/**
 * Runs `file args` as the leader of its own process group (`detached: true`), with stdin closed
 * (or fed `opts.stdin` and then closed), and decodes its output as UTF-8 into the callbacks in arrival order.
 *
 * Contract: never rejects. On timeout or abort the whole group gets SIGTERM, then SIGKILL after
 * `killGraceMs` if anything in it is still alive, so grandchildren die too; the promise resolves
 * only after that. An already-aborted signal resolves `cancelled` without spawning.
 */
export function runProcess(file: string, args: readonly string[], opts: RunProcessOptions): Promise<ProcessOutcome> {
  if (opts.signal.aborted) return Promise.resolve({ kind: 'cancelled' });
  return new Promise<ProcessOutcome>((resolve) => {
    const graceMs = opts.killGraceMs ?? 1000;
    const drainMs = opts.drainMs ?? 250;
    let child: ChildProcess;
    try {
      child = spawn(file, [...args], {
        cwd: opts.cwd,
        env: opts.env ?? toolEnvironment(),
        detached: process.platform !== 'win32',
        stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      resolve({ kind: 'spawnFailed', message: errorMessage(err) });
      return;
    }

    const leader = child.pid;
    if (leader !== undefined) runningGroups.add(leader);

    if (opts.stdin !== undefined && child.stdin) {
      // EPIPE when the child does not read its input: its choice, not a failure of the run.
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.stdin);
    }

    let settled = false;
    let killReason: 'timeout' | 'cancel' | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let killEscalated = false;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const timeoutTimer = opts.timeoutMs !== undefined ? setTimeout(() => killGroup('timeout'), opts.timeoutMs) : undefined;
    const onAbort = (): void => killGroup('cancel');
    opts.signal.addEventListener('abort', onAbort, { once: true });

    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => opts.onStdout?.(chunk));
    child.stderr?.on('data', (chunk: string) => opts.onStderr?.(chunk));

    child.on('error', (err) => {
      // Spawn failures (ENOENT for the binary or the cwd) arrive here without an 'exit'.
      if (child.pid === undefined) finish({ kind: 'spawnFailed', message: spawnMessage(err, file, opts.cwd) });
    });
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      if (killReason) maybeFinishKilled();
      else drainTimer = setTimeout(() => finishExited(true), drainMs);
    });
    child.on('close', () => {
      if (!killReason && exited) finishExited(false);
    });

    function signalGroup(sig: NodeJS.Signals): boolean {
      const pid = child.pid;
      if (pid === undefined) return false;
      try {
        if (process.platform === 'win32') child.kill(sig);
        else process.kill(-pid, sig);
        return true;
      } catch {
        return false; // ESRCH: nothing left in the group
      }
    }

    function groupAlive(): boolean {
      const pid = child.pid;
      if (pid === undefined || process.platform === 'win32') return false;
      try {
        process.kill(-pid, 0);
        return true;
      } catch (err) {
        return errnoCode(err) === 'EPERM';
      }
    }

    function killGroup(reason: 'timeout' | 'cancel'): void {
      if (settled || killReason) return;
      killReason = reason;
      signalGroup('SIGTERM');
      killTimer = setTimeout(() => {
        signalGroup('SIGKILL');
        killEscalated = true;
        maybeFinishKilled();
      }, graceMs);
      if (exited) maybeFinishKilled();
    }

    function maybeFinishKilled(): void {
      if (!exited) return;
      // The leader is gone; wait for SIGKILL unless nothing else is left in its group.
      if (!killEscalated && groupAlive()) return;
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish(killReason === 'timeout' ? { kind: 'timedOut', timeoutMs: opts.timeoutMs ?? 0 } : { kind: 'cancelled' });
    }

    function finishExited(pipesHeldOpen: boolean): void {
      if (!exited) return;
      if (pipesHeldOpen) {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }
      finish({ kind: 'exited', code: exited.code, signal: exited.signal, pipesHeldOpen });
    }

    function finish(outcome: ProcessOutcome): void {
      if (settled) return;
      settled = true;
      if (leader !== undefined) runningGroups.delete(leader);
      if (timeoutTimer) clearTimeout(timeoutTimer);
      if (killTimer) clearTimeout(killTimer);
      if (drainTimer) clearTimeout(drainTimer);
      opts.signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    }
  });
}

function spawnMessage(err: Error, file: string, cwd: string): string {
  if (errnoCode(err) === 'ENOENT') return `could not start ${file} in ${cwd}: ${err.message} (missing program or working directory)`;
  return `could not start ${file}: ${err.message}`;
}
