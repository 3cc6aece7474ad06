import { lookup as dnsLookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { AddressVerdict } from './addresses';
import type { HostVerdict } from './domains';

/**
 * Keel's side of the sandbox network: an HTTP proxy on a Unix socket in a private folder (0700),
 * which the forwarder inside bwrap reaches. It serves `CONNECT host:port` (HTTPS and any tunnel)
 * and plain HTTP requests in absolute form (`GET http://host/…`), asks `decide` about every host
 * before connecting, and answers a refused one with 403 and a body that says why. It does the
 * name resolution and the connection itself, so the sandbox needs no DNS: it resolves the host
 * once, has `checkAddresses` judge the addresses it got (loopback and private ones are not reached
 * through a wildcard: addresses.ts), and connects to the address it checked — never to the name,
 * which a second resolution could turn into another address.
 */
export interface NetworkProxyOptions {
  /** The allow-list decision for one host as the client named it (domains.ts `decideHost`). */
  decide(host: string): HostVerdict;
  /** The decision on the addresses an allowed host resolved to (addresses.ts `decideAddresses`). */
  checkAddresses(host: string, addresses: readonly { address: string; family: number }[]): AddressVerdict;
  /** The resolver: every address of a name, in the system's order. Default: the system resolver (getaddrinfo, /etc/hosts included). */
  lookup?(host: string): Promise<{ address: string; family: number }[]>;
  /** Tests only: the port to connect to for the port a client asked for (their servers listen on free ports). The address is never changed. */
  portFor?(port: number): number;
  /** Folder to create the socket's private folder in. Default: the OS temp folder. */
  parentDir?: string;
  /** Told about every refusal and upstream failure, for the host's log. */
  log?(level: 'info', message: string): void;
}

/** How long an upstream connection may take to open before the client gets 504. */
const CONNECT_TIMEOUT_MS = 30_000;

export class NetworkProxy {
  private readonly sockets = new Set<Duplex>();
  private closed = false;

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    /** The Unix socket the forwarder connects to. */
    readonly socketPath: string,
  ) {}

  /** Starts listening. Rejects (nothing left behind) when the folder or the socket cannot be made. */
  static async start(opts: NetworkProxyOptions): Promise<NetworkProxy> {
    const dir = mkdtempSync(join(opts.parentDir ?? tmpdir(), 'keel-net-'));
    const socketPath = join(dir, 'proxy.sock');
    const server = createServer();
    const proxy = new NetworkProxy(server, dir, socketPath);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.forward(req, res, opts));
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => proxy.tunnel(req, socket, head, opts));
    server.on('connection', (s: Socket) => proxy.track(s));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return proxy;
  }

  /** Stops listening, cuts every open connection and removes the socket's folder. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private track(s: Duplex): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    // A client that goes away mid-request must not take the host process down.
    s.on('error', () => s.destroy());
  }

  private tunnel(req: IncomingMessage, client: Duplex, head: Buffer, opts: NetworkProxyOptions): void {
    const target = splitHostPort(req.url ?? '');
    if (!target) return refuseRaw(client, 400, 'Bad Request', `Keel sandbox proxy: "${req.url}" is not host:port\n`);
    const verdict = opts.decide(target.host);
    if (!verdict.allowed) {
      opts.log?.('info', `sandbox network: refused CONNECT ${target.host}:${target.port} (${verdict.reason})`);
      return refuseRaw(client, 403, 'Forbidden', refusalText(verdict.reason));
    }
    void this.resolved(verdict.host, opts).then((checked) => {
      if (!checked.allowed) {
        opts.log?.('info', `sandbox network: refused CONNECT ${target.host}:${target.port} (${checked.reason})`);
        const refused = checked.status === 403;
        return refuseRaw(client, checked.status, refused ? 'Forbidden' : 'Bad Gateway', refused ? refusalText(checked.reason) : `Keel sandbox proxy: ${checked.reason}\n`);
      }
      this.open(client, head, `${verdict.host}:${target.port}`, checked, opts.portFor ? opts.portFor(target.port) : target.port, opts);
    });
  }

  /**
   * Resolves `host` once and judges the addresses: the one to connect to, or why not (403 for a
   * refusal, 502 when the name does not resolve).
   */
  private async resolved(host: string, opts: NetworkProxyOptions): Promise<(AddressVerdict & { allowed: true }) | { allowed: false; status: 403 | 502; reason: string }> {
    let addresses: { address: string; family: number }[];
    try {
      const lookup = opts.lookup ?? ((h: string) => dnsLookup(h, { all: true, verbatim: true }));
      addresses = await withTimeout(lookup(host), CONNECT_TIMEOUT_MS, `resolving ${host} timed out`);
    } catch (err) {
      return { allowed: false, status: 502, reason: `${host} could not be resolved (${err instanceof Error ? err.message : String(err)})` };
    }
    const checked = opts.checkAddresses(host, addresses);
    return checked.allowed ? checked : { allowed: false, status: 403, reason: checked.reason };
  }

  /** The tunnel to the checked address (`shown`: the host and port as the client asked, for messages). */
  private open(client: Duplex, head: Buffer, shown: string, checked: { address: string; family: 4 | 6 }, port: number, opts: NetworkProxyOptions): void {
    if (client.destroyed) return;
    const upstream = connect({ host: checked.address, family: checked.family, port, timeout: CONNECT_TIMEOUT_MS });
    this.track(upstream);
    let connected = false;
    upstream.once('timeout', () => upstream.destroy(new Error('timed out')));
    upstream.once('error', (err) => {
      opts.log?.('info', `sandbox network: ${shown} unreachable (${err.message})`);
      if (!connected) refuseRaw(client, 502, 'Bad Gateway', `Keel sandbox proxy: ${shown} could not be reached (${err.message})\n`);
      else client.destroy();
    });
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    client.once('close', () => upstream.destroy());
  }

  private forward(req: IncomingMessage, res: ServerResponse, opts: NetworkProxyOptions): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return refuse(res, 400, `Keel sandbox proxy: only absolute http:// URLs and CONNECT are served, not "${req.url}"\n`);
    }
    if (url.protocol !== 'http:') return refuse(res, 400, `Keel sandbox proxy: ${url.protocol} URLs go through CONNECT\n`);
    const verdict = opts.decide(url.hostname);
    if (!verdict.allowed) {
      opts.log?.('info', `sandbox network: refused ${req.method} ${url.host} (${verdict.reason})`);
      return refuse(res, 403, refusalText(verdict.reason));
    }
    const port = url.port ? Number(url.port) : 80;
    // Hold the body until the host is resolved and judged.
    req.pause();
    void this.resolved(verdict.host, opts).then((checked) => {
      if (!checked.allowed) {
        opts.log?.('info', `sandbox network: refused ${req.method} ${url.host} (${checked.reason})`);
        return refuse(res, checked.status, checked.status === 403 ? refusalText(checked.reason) : `Keel sandbox proxy: ${checked.reason}\n`);
      }
      this.send(req, res, url, checked, opts.portFor ? opts.portFor(port) : port, opts);
    });
  }

  /** The request to the checked address; the client's Host header goes with it. */
  private send(req: IncomingMessage, res: ServerResponse, url: URL, checked: { address: string; family: 4 | 6 }, port: number, opts: NetworkProxyOptions): void {
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const path = `${url.pathname}${url.search}`;
    const upstream = httpRequest({ host: checked.address, family: checked.family, port, method: req.method, path, headers, setHost: false, timeout: CONNECT_TIMEOUT_MS });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
      answer.pipe(res);
    });
    upstream.on('timeout', () => upstream.destroy(new Error('timed out')));
    upstream.on('error', (err) => {
      opts.log?.('info', `sandbox network: ${url.host} unreachable (${err.message})`);
      if (!res.headersSent) refuse(res, 502, `Keel sandbox proxy: ${url.host} could not be reached (${err.message})\n`);
      else res.destroy();
    });
    req.pipe(upstream);
    req.resume();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer));
}

function refusalText(reason: string): string {
  return (
    `Keel sandbox: ${reason}. Commands in the sandbox reach only the hosts in sandbox.network.allowedDomains ` +
    '(ask the user to add it to ~/.keel/settings.json or keel.sandbox.network.allowedDomains).\n'
  );
}

function refuse(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

function refuseRaw(socket: Duplex, status: number, text: string, body: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/** `host:port` or `[v6]:port` of a CONNECT line; null when it is not that. */
export function splitHostPort(target: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
  if (!m) return null;
  const host = m[1] ?? m[2] ?? '';
  const port = Number(m[3]);
  if (port < 1 || port > 65535 || (m[1] !== undefined && isIP(host) !== 6)) return null;
  return { host, port };
}
