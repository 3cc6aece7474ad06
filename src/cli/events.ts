import { followBuses } from '../core/events/busFollower';
import { listBusEndpoints } from '../core/events/busSocket';
import { storageOption } from './args';
import { EVENTS_HELP } from './help';
import { followerStdout } from './follow';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel events --follow [--storage DIR]`: prints the live event bus of every Keel process using
 * that storage (`keel run`, `keel loop`, `keel batch`, a VS Code window with the extension's
 * storage) as NDJSON on stdout, one bus event per line with the `pid` it came from, until
 * interrupted; processes that start later are joined as they appear. Which buses were joined or
 * left goes to stderr, and so does a line saying it waits while no Keel process is there. The bus
 * is live only (the store keeps the history: `keel tasks show`), so `--follow` is required.
 *
 * Back-pressure: while stdout does not take more (a reader that stopped reading), no bus is read;
 * each host's bounded queue (1,000 events) then drops its oldest events and tells this reader with
 * one `{"kind":"Lagged","missed":N}` line; neither process buffers without bound. The first
 * SIGINT or SIGTERM ends it at once, even with output still waiting for its reader (exit 0).
 */
export async function eventsCommand(argv: string[]): Promise<number> {
  let values: { follow?: boolean | undefined; storage?: string | undefined };
  let storage: string;
  try {
    ({ values } = parseCommandLine(argv, { follow: { type: 'boolean' }, storage: { type: 'string' } }, false));
    if (!values.follow) throw new UsageError('--follow is required: the event bus is live only (stored events: keel tasks show ID)');
    storage = storageOption(values.storage, process.env);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(EVENTS_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('events', err);
    throw err;
  }
  const out = followerStdout('events');
  try {
    if (listBusEndpoints(storage).length === 0) process.stderr.write(`keel events: waiting for a Keel process (keel run, keel loop, keel batch, VS Code) using ${storage}; Ctrl+C ends\n`);
    await followBuses(storage, {
      signal: out.signal,
      onLine: (line) => out.write(`${line}\n`),
      onEndpoint: (ep, change) => process.stderr.write(`keel events: ${change} ${ep.label} (pid ${ep.pid})\n`),
    });
  } finally {
    out.dispose();
  }
  return out.exit();
}
