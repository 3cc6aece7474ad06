import { readPools } from '../core/agents/statusSocket';
import { describePool, describeWorker } from '../core/workers/poolStatus';
import { storageOption } from './args';
import { WORKERS_HELP } from './help';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel workers [--json]`: the worker pools of this user's Keel processes (a VS Code window with
 * `keel.workers.max` set, a `keel run --workers N`, a `keel batch`), each worker with its state,
 * pid, task, uptime, queries processed and memory. A pool lives inside the process that owns it;
 * each such process publishes it on its status socket (docs/workers.md, "Seeing the pool").
 */
export async function workersCommand(argv: string[]): Promise<number> {
  let values: { json?: boolean | undefined; storage?: string | undefined };
  let keelHome: string;
  try {
    ({ values } = parseCommandLine(argv, { json: { type: 'boolean' }, storage: { type: 'string' } }, false));
    keelHome = storageOption(values.storage, process.env);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(WORKERS_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('workers', err);
    throw err;
  }
  const pools = await readPools(keelHome);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ pools })}\n`);
    return 0;
  }
  if (pools.length === 0) {
    process.stdout.write('No worker pools: no Keel process runs tasks on workers (keel run --workers N, keel batch, keel.workers.max in VS Code).\n');
    return 0;
  }
  const now = Date.now();
  for (const p of pools) {
    process.stdout.write(`${describePool(p)}\n`);
    if (p.workers.length === 0) process.stdout.write('  (no workers running)\n');
    for (const w of p.workers) {
      const line = describeWorker(w, now);
      process.stdout.write(`  ${line.label.padEnd(18)} ${line.description.padEnd(30)} ${line.detail}\n`);
    }
  }
  return 0;
}
