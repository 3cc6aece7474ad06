import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirs } from '../store/makeDirs';
import type { BusSubscription, EventBus } from './eventBus';
import type { BusDelivery, BusEvent } from './types';
import { processAlive } from '../locks/processAlive';

/**
 * A host's bus, readable by other processes of the same user (`keel events --follow`): a Unix
 * socket that streams every bus event as one JSON line (with the `pid` of the process it came
 * from), after the process's `AppStarted`. Each connection is a queued subscriber (1,000 events):
 * a reader that does not keep up gets a `{"kind":"Lagged","missed":N}` line, never slows the host.
 *
 * Discovery: `<storage>/events/<pid>.json` describes each live bus (`BusEndpoint`); the socket is
 * `<storage>/events/<pid>.sock` (mode 0600, in a folder of mode 0700) unless that path is too long
 * for a Unix socket, then under `$TMPDIR/keel-<uid>/` (also 0700).
 */
export interface BusEndpoint {
  pid: number;
  /** "keel run", "VS Code window", … */
  label: string;
  socket: string;
  startedAt: number;
}

/** How long a closing host waits for a bus reader to take what is queued for it (a reader that reads takes it in far less). */
const CLOSE_GRACE_MS = 2000;

/** Unix socket paths longer than this are refused by some kernels (108 bytes with the NUL on Linux). */
const MAX_SOCKET_PATH = 100;

export function busDir(storage: string): string {
  return join(storage, 'events');
}

/** The live buses described under `storage` (their process still exists), oldest first. Stale descriptors are removed. */
export function listBusEndpoints(storage: string): BusEndpoint[] {
  const dir = busDir(storage);
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const out: BusEndpoint[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let ep: BusEndpoint;
    try {
      ep = JSON.parse(readFileSync(path, 'utf8')) as BusEndpoint;
      if (typeof ep.pid !== 'number' || typeof ep.socket !== 'string') continue;
    } catch {
      continue; // being written, or not ours
    }
    if (!processAlive(ep.pid)) {
      rmSync(path, { force: true });
      if (ep.socket.startsWith(dir)) rmSync(ep.socket, { force: true });
      continue;
    }
    out.push(ep);
  }
  return out.sort((a, b) => a.startedAt - b.startedAt);
}

function privateDir(path: string): void {
  makeDirs(path, 0o700);
  chmodSync(path, 0o700);
}

function socketPathFor(storage: string, pid: number): string {
  const local = join(busDir(storage), `${pid}.sock`);
  if (Buffer.byteLength(local) <= MAX_SOCKET_PATH) return local;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const hash = createHash('sha256').update(storage).digest('hex').slice(0, 12);
  return join(tmpdir(), `keel-${uid}`, `${hash}-${pid}.sock`);
}

interface Connection {
  socket: Socket;
  sub: BusSubscription;
}

/** The socket side of one host's bus. `close` is idempotent and synchronous enough for exit paths. */
export class BusSocketServer {
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly endpoint: BusEndpoint,
    private readonly descriptor: string,
    private readonly connections: Set<Connection>,
  ) {}

  /**
   * Starts listening and writes the descriptor. `hello` is the host's AppStarted event, sent first
   * on every connection. Rejects when the folder or the socket cannot be made (the host goes on
   * without it; the caller logs why).
   */
  static async start(bus: EventBus, opts: { storage: string; label: string; hello: BusEvent }): Promise<BusSocketServer> {
    const dir = busDir(opts.storage);
    privateDir(dir);
    const socketPath = socketPathFor(opts.storage, process.pid);
    if (!socketPath.startsWith(dir)) privateDir(join(socketPath, '..'));
    try {
      if (statSync(socketPath).isSocket()) unlinkSync(socketPath); // left by a dead process with our pid
    } catch {
      /* none */
    }
    const conns = new Set<Connection>();
    let n = 0;
    const server = createServer((socket) => {
      socket.unref();
      socket.setNoDelay(true);
      socket.on('error', () => undefined); // a reader that went away
      const write = (line: string): Promise<void> | void => {
        if (socket.destroyed) return;
        if (!socket.write(line)) return new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
      };
      void write(`${JSON.stringify({ ...opts.hello, pid: process.pid })}\n`);
      const sub = bus.subscribe((d: BusDelivery) => write(`${JSON.stringify({ ...d, pid: process.pid })}\n`), { name: `socket reader ${++n}` });
      const entry = { socket, sub };
      conns.add(entry);
      socket.on('close', () => {
        sub.unsubscribe();
        conns.delete(entry);
      });
      // Readers only read; what they send is ignored.
      socket.on('data', () => undefined);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(socketPath, 0o600);
    server.unref();
    const endpoint: BusEndpoint = { pid: process.pid, label: opts.label, socket: socketPath, startedAt: opts.hello.at };
    const descriptor = join(dir, `${process.pid}.json`);
    writeFileSync(descriptor, `${JSON.stringify(endpoint)}\n`, { mode: 0o600 });
    return new BusSocketServer(server, endpoint, descriptor, conns);
  }

  /**
   * Stops accepting, lets connected readers take what is queued for them (so an `AppShutdown`
   * published just before reaches them), then closes them, and removes the socket and descriptor.
   * A reader that does not read never holds the host up: it gets at most `CLOSE_GRACE_MS` to take
   * its queue, then its connection is dropped with whatever it did not take (it sees the bus leave).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    rmSync(this.descriptor, { force: true });
    this.server.close();
    await Promise.all(
      [...this.connections].map(async (c) => {
        let grace: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          grace = setTimeout(resolve, CLOSE_GRACE_MS);
          grace.unref();
        });
        await Promise.race([c.sub.idle(), late]);
        c.sub.unsubscribe();
        if (!c.socket.destroyed) {
          const closed = new Promise<void>((resolve) => c.socket.once('close', () => resolve()));
          c.socket.end();
          await Promise.race([closed, late]);
        }
        clearTimeout(grace);
        // A reader still behind after the grace is cut off with what it did not take.
        c.socket.destroy();
      }),
    );
    rmSync(this.endpoint.socket, { force: true });
  }
}
