import { runWorker } from '../core/workers/workerMain';
import { parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel worker --socket PATH --worker-id ID`: the worker process of a pool (docs/workers.md).
 * Hosts start it; people do not. It exits when its host says `shutdown` or the connection ends.
 */
export async function workerCommand(argv: string[]): Promise<number> {
  let socket: string | undefined;
  let workerId: string | undefined;
  try {
    const { values } = parseCommandLine(argv, { socket: { type: 'string' }, 'worker-id': { type: 'string' } }, false);
    socket = values.socket;
    workerId = values['worker-id'];
    if (!socket || !workerId) throw new UsageError('--socket and --worker-id are required (a pool starts this command; see docs/workers.md)');
  } catch (err) {
    if (err instanceof UsageError) return reportUsage('worker', err);
    throw err;
  }
  const code = await runWorker({ socket, workerId });
  // Whatever a tool left behind (timers, a sandbox proxy) must not keep a finished worker alive.
  process.exit(code);
}
