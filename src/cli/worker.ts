import { Socket } from 'node:net';
import { killRunningProcessGroups } from '../core/tools/processRunner';
import { WORKER_CHANNEL_FD } from '../core/workers/spawnWorker';
import { runWorker } from '../core/workers/workerMain';
import { signalExitCode } from './signals';
import { parseCommandLine, reportUsage, UsageError } from './usage';
import { errorMessage } from '../shared/domain/errors';

/**
 * `keel worker --worker-id ID`: the worker process of a pool (docs/workers.md), its channel to the
 * host the socket it inherits on fd 3 (WORKER_CHANNEL_FD). Hosts start it; people do not. It
 * exits when its host says `shutdown` or the connection ends.
 *
 * However this process ends — its host gone (the connection closed), `shutdown`, SIGTERM, SIGHUP
 * or SIGINT, an uncaught error — the commands it started do not outlive it: the running query is
 * cancelled first (its commands get SIGTERM, then SIGKILL), and on the way out whatever command is
 * still running has its process group killed. Only SIGKILL of this process skips both; the host
 * covers that case (`sweepWorkerProcesses`, workers/workerSweep.ts).
 */
export async function workerCommand(argv: string[]): Promise<number> {
  let workerId: string | undefined;
  let channel: Socket;
  try {
    const { values } = parseCommandLine(argv, { 'worker-id': { type: 'string' } }, false);
    workerId = values['worker-id'];
    if (!workerId) throw new UsageError('--worker-id is required (a pool starts this command; see docs/workers.md)');
    channel = openChannel();
  } catch (err) {
    if (err instanceof UsageError) return reportUsage('worker', err);
    throw err;
  }
  // 'exit' runs on process.exit, at the natural end and after an uncaught exception.
  process.on('exit', () => killRunningProcessGroups());
  const stop = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    stoppedBy ??= signal;
    stop.abort();
  };
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(signal, onSignal);
  const code = await runWorker({ channel, workerId, signal: stop.signal });
  // Whatever a tool left behind (timers, a sandbox proxy) must not keep a finished worker alive.
  process.exit(stoppedBy ? signalExitCode(stoppedBy) : code);
}

/** The inherited channel: fd 3 must be a socket (a pool's socketpair), else this was not started by a pool. */
function openChannel(): Socket {
  try {
    return new Socket({ fd: WORKER_CHANNEL_FD, readable: true, writable: true });
  } catch (err) {
    throw new UsageError(`no channel to a host on fd ${WORKER_CHANNEL_FD} (${errorMessage(err)}); a pool starts this command, see docs/workers.md`);
  }
}
