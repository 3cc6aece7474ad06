import { resolve } from 'node:path';
import { followBuses } from '../core/events/busFollower';
import { defaultStorage } from './args';
import { EVENTS_HELP } from './help';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel events --follow [--storage DIR]`: prints the live event bus of every Keel process using
 * that storage (`keel run`, `keel loop`, `keel batch`, a VS Code window with the extension's
 * storage) as NDJSON on stdout, one bus event per line with the `pid` it came from, until
 * interrupted; processes that start later are joined as they appear. Which buses were joined or
 * left goes to stderr. The bus is live only (the store keeps the history: `keel tasks show`), so
 * `--follow` is required.
 */
export async function eventsCommand(argv: string[]): Promise<number> {
  let values: { follow?: boolean | undefined; storage?: string | undefined };
  try {
    ({ values } = parseCommandLine(argv, { follow: { type: 'boolean' }, storage: { type: 'string' } }, false));
    if (!values.follow) throw new UsageError('--follow is required: the event bus is live only (stored events: keel tasks show ID)');
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(EVENTS_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('events', err);
    throw err;
  }
  const storage = values.storage ? resolve(values.storage) : defaultStorage(process.env);
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await followBuses(storage, {
      signal: ac.signal,
      onLine: (line) => process.stdout.write(`${line}\n`),
      onEndpoint: (ep, change) => process.stderr.write(`keel events: ${change} ${ep.label} (pid ${ep.pid})\n`),
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
}
