import { watch, type FSWatcher } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { busDir, listBusEndpoints, type BusEndpoint } from './busSocket';
import { makeDirs } from '../store/makeDirs';

export interface FollowOptions {
  /**
   * Called with each line read (one JSON bus event, without its newline), in each bus's order.
   * A returned promise is the reader's back-pressure: no bus is read until it settles, so a
   * reader that stops reading makes each host's bounded queue fill and drop (the host then sends
   * a `Lagged` line), instead of this process buffering without bound.
   */
  onLine(line: string): void | Promise<void>;
  /** A bus was joined or left (for a note on stderr). */
  onEndpoint?(ep: BusEndpoint, change: 'joined' | 'left'): void;
  signal: AbortSignal;
}

/**
 * Follows every live bus under `storage` (see busSocket.ts) and the ones that start later, until
 * `signal` aborts. Lines of one bus come in its order; lines of different buses interleave as they
 * arrive. Resolves when stopped. Never throws for a bus that goes away.
 */
export async function followBuses(storage: string, opts: FollowOptions): Promise<void> {
  const dir = busDir(storage);
  makeDirs(dir, 0o700);
  const joined = new Map<number, Socket>();
  // While the reader holds us back, every socket is paused (and a bus joined then starts paused).
  let holding: Promise<void> | null = null;
  const hold = (until: Promise<void>) => {
    if (holding) return;
    holding = until.then(
      () => undefined,
      () => undefined,
    );
    for (const s of joined.values()) s.pause();
    void holding.then(() => {
      holding = null;
      if (!opts.signal.aborted) for (const s of joined.values()) s.resume();
    });
  };
  const join = (ep: BusEndpoint) => {
    if (joined.has(ep.pid) || opts.signal.aborted) return;
    const socket = connect(ep.socket);
    joined.set(ep.pid, socket);
    if (holding) socket.pause();
    let carry = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => opts.onEndpoint?.(ep, 'joined'));
    socket.on('data', (chunk: string) => {
      const parts = (carry + chunk).split('\n');
      carry = parts.pop() ?? '';
      for (const line of parts) {
        if (!line) continue;
        const wait = opts.onLine(line);
        if (wait) hold(wait);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (joined.get(ep.pid) !== socket) return;
      joined.delete(ep.pid);
      opts.onEndpoint?.(ep, 'left');
    });
  };
  const scan = () => {
    for (const ep of listBusEndpoints(storage)) join(ep);
  };
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dir, () => scan());
  } catch {
    /* no watcher: only the buses alive now */
  }
  scan();
  await new Promise<void>((resolve) => {
    if (opts.signal.aborted) return resolve();
    opts.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  watcher?.close();
  for (const s of joined.values()) s.destroy();
}
