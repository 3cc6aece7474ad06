import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentRow } from '../../shared/domain/agents';
import type { ActivityEvent, ActivitySource } from '../events/activityFeed';
import type { PoolStatus } from '../workers/poolStatus';
import { errorMessage } from '../../shared/domain/errors';
import { processAlive } from '../locks/processAlive';

/**
 * The local socket through which outside tools watch Keel (`keel status --follow`, docs/hooks.md):
 * each Keel process (a VS Code window, a `keel run`, a `keel loop`) listens on
 * `<keel home>/run/<pid>.sock` (a 0700 folder; the socket itself 0600). A client first gets one
 * NDJSON line `{"type":"snapshot","pid":…,"agents":[…]}`, then one line per event as it happens:
 * `{"type":"hook","pid":…,"at":…,"hook_event_name":…, …Claude Code's fields}`, `{"type":"loop",…}`
 * and `{"type":"agents","pid":…,"agents":[…]}` when the board changes. A process running tasks on a
 * worker pool also puts `pool` (its `PoolStatus`) in the snapshot and sends
 * `{"type":"pool","pid":…,"pool":{…}}` when the pool changes (`keel workers`). Long strings are cut at
 * 10,000 characters. A client that does not read (more than 1 MB queued) is disconnected: one slow
 * watcher never holds Keel back.
 */
export const MAX_QUEUED_BYTES = 1024 * 1024;
const STRING_CAP = 10_000;

/** Where the sockets of processes using `keelHome` live (a short path: Unix sockets are limited to ~100 bytes). */
export function socketDir(keelHome: string): string {
  const dir = join(keelHome, 'run');
  if (dir.length + 16 <= 100) return dir;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return join(tmpdir(), `keel-${uid}-${createHash('sha256').update(keelHome).digest('hex').slice(0, 12)}`);
}

export interface StatusPublisherOptions {
  keelHome: string;
  feed: ActivitySource;
  /** The board's rows now. */
  agents(): AgentRow[];
  /** Called when the board changes; returns the unsubscribe function. */
  onAgentsChanged(listener: () => void): () => void;
  log?(level: 'info' | 'warn', message: string): void;
}

/** A worker pool as the status socket sees it (WorkerPool is one). */
export interface PoolSource {
  status(): PoolStatus;
  /** Called after every change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

export class StatusPublisher {
  private server: Server | undefined;
  private pool: PoolSource | undefined;
  private readonly clients = new Set<Socket>();
  private readonly stops: (() => void)[] = [];
  readonly path: string;

  constructor(private readonly opts: StatusPublisherOptions) {
    this.path = join(socketDir(opts.keelHome), `${process.pid}.sock`);
  }

  /** Starts listening. Resolves false (and logs) when the socket cannot be created: Keel works on without it. */
  async start(): Promise<boolean> {
    const dir = socketDir(this.opts.keelHome);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      rmSync(this.path, { force: true });
    } catch (err) {
      this.opts.log?.('warn', `status socket: cannot prepare ${dir}: ${errorMessage(err)}`);
      return false;
    }
    const server = createServer((socket) => this.accept(socket));
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', (err) => {
        this.opts.log?.('warn', `status socket: cannot listen on ${this.path}: ${err.message}`);
        resolve(false);
      });
      server.listen(this.path, () => resolve(true));
    });
    if (!ok) return false;
    chmodSync(this.path, 0o600);
    server.unref();
    this.server = server;
    this.stops.push(this.opts.feed.subscribe((e) => this.event(e)));
    this.stops.push(this.opts.onAgentsChanged(() => this.broadcast({ type: 'agents', pid: process.pid, agents: this.opts.agents() })));
    return true;
  }

  /** Publishes `pool` from now on: in every snapshot, and a `pool` line on each of its changes. */
  publishPool(pool: PoolSource): void {
    this.pool = pool;
    this.stops.push(pool.onChange(() => this.broadcast({ type: 'pool', pid: process.pid, pool: pool.status() })));
  }

  close(): void {
    for (const s of this.stops.splice(0)) s();
    for (const c of this.clients) c.destroy();
    this.clients.clear();
    this.server?.close();
    this.server = undefined;
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone.
    }
  }

  private accept(socket: Socket): void {
    socket.on('error', () => this.clients.delete(socket));
    socket.on('close', () => this.clients.delete(socket));
    // Clients only listen; anything they send is ignored.
    socket.on('data', () => undefined);
    this.clients.add(socket);
    this.send(socket, { type: 'snapshot', pid: process.pid, agents: this.opts.agents(), ...(this.pool ? { pool: this.pool.status() } : {}) });
  }

  private event(e: ActivityEvent): void {
    if (e.kind === 'hook') this.broadcast({ type: 'hook', pid: process.pid, at: e.at, ...capStrings(e.input) });
    else if (e.kind === 'loop') this.broadcast({ ...e.event, pid: process.pid, at: e.at });
  }

  private broadcast(line: Record<string, unknown>): void {
    for (const c of this.clients) this.send(c, line);
  }

  private send(socket: Socket, line: Record<string, unknown>): void {
    if (socket.writableLength > MAX_QUEUED_BYTES) {
      socket.destroy();
      this.clients.delete(socket);
      return;
    }
    socket.write(`${JSON.stringify(line)}\n`);
  }
}

function capStrings<T>(value: T): T {
  if (typeof value === 'string') return (value.length > STRING_CAP ? `${value.slice(0, STRING_CAP)}… (cut)` : value) as T;
  if (Array.isArray(value)) return value.map(capStrings) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capStrings(v)])) as T;
  return value;
}

/** The sockets of live Keel processes; a socket whose process is gone is removed. */
export function liveSockets(keelHome: string): string[] {
  const dir = socketDir(keelHome);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const m = /^(\d+)\.sock$/.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    if (!processAlive(Number(m[1]))) {
      rmSync(path, { force: true });
      continue;
    }
    try {
      if (statSync(path).isSocket()) out.push(path);
    } catch {
      // Went away meanwhile.
    }
  }
  return out;
}

/**
 * Connects to one socket and calls `onLine` for each NDJSON line; resolves when it closes. A
 * promise returned by `onLine` is the reader's back-pressure: the socket is not read until it
 * settles (the publisher then disconnects a reader that stays behind; see above).
 */
export function watchSocket(path: string, onLine: (line: Record<string, unknown>) => void | Promise<void>, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    let partial = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) {
        if (!l.trim()) continue;
        let wait: void | Promise<void>;
        try {
          wait = onLine(JSON.parse(l) as Record<string, unknown>);
        } catch {
          continue; // Not ours: skip.
        }
        if (wait && !socket.isPaused()) {
          socket.pause();
          void wait.then(() => socket.resume());
        }
      }
    });
    const done = () => resolve();
    socket.on('close', done);
    socket.on('error', done);
    signal?.addEventListener('abort', () => socket.destroy(), { once: true });
  });
}

/** The agents of every live Keel process (each socket's first line). */
export async function readAgents(keelHome: string, timeoutMs = 2000): Promise<AgentRow[]> {
  const all = await Promise.all(
    liveSockets(keelHome).map(async (path) => {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), timeoutMs);
      let rows: AgentRow[] = [];
      await watchSocket(
        path,
        (line) => {
          if (line.type === 'snapshot' && Array.isArray(line.agents)) {
            rows = (line.agents as AgentRow[]).map((r) => ({ ...r, pid: Number(line.pid) }));
            ac.abort();
          }
        },
        ac.signal,
      );
      clearTimeout(timer);
      return rows;
    }),
  );
  return all.flat();
}

/** The worker pools of every live Keel process that runs one (each socket's snapshot). */
export async function readPools(keelHome: string, timeoutMs = 2000): Promise<PoolStatus[]> {
  const all = await Promise.all(
    liveSockets(keelHome).map(async (path) => {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), timeoutMs);
      const found: { pool: PoolStatus | null } = { pool: null };
      await watchSocket(
        path,
        (line) => {
          if (line.type !== 'snapshot') return;
          if (line.pool && typeof line.pool === 'object') found.pool = line.pool as PoolStatus;
          ac.abort();
        },
        ac.signal,
      );
      clearTimeout(timer);
      return found.pool;
    }),
  );
  return all.filter((p): p is PoolStatus => p !== null);
}
