import { existsSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decideAddresses } from '../../../src/core/sandbox/addresses';
import { decideHost } from '../../../src/core/sandbox/domains';
import { NetworkProxy, splitHostPort } from '../../../src/core/sandbox/networkProxy';

/**
 * The host side of the sandbox network on its own: the proxy on its Unix socket, spoken to as
 * the forwarder would, in front of a real loopback HTTP server. Runs without bubblewrap.
 */
let web: Server;
let port = 0;
let seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
beforeAll(async () => {
  web = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.end(`ok ${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  port = (web.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => web.close(() => r()));
});

let proxy: NetworkProxy | undefined;
const logged: string[] = [];
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  seen = [];
  logged.length = 0;
});

/** Test names resolve as `names` says (default: every name to the loopback server); the proxy connects to the port of the test server. */
async function start(allowed: string[], names: Record<string, string> = {}, looked: string[] = []): Promise<NetworkProxy> {
  proxy = await NetworkProxy.start({
    decide: (h) => decideHost(h, allowed, []),
    checkAddresses: (h, addresses) => decideAddresses(h, addresses, allowed, []),
    lookup: async (h) => {
      looked.push(h);
      const address = names[h] ?? '127.0.0.1';
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    },
    portFor: () => port,
    log: (_level, m) => logged.push(m),
  });
  return proxy;
}

function viaProxy(p: NetworkProxy, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: p.socketPath, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

function connectVia(p: NetworkProxy, target: string): Promise<{ status: number; socket: Socket; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: p.socketPath, method: 'CONNECT', path: target });
    req.on('connect', (res, socket: Socket, head: Buffer) => {
      let body = head.toString();
      socket.on('data', (d: Buffer) => (body += d.toString()));
      if (res.statusCode === 200) resolve({ status: 200, socket, body });
      else socket.on('end', () => resolve({ status: res.statusCode ?? 0, socket, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the sandbox network proxy (host side)', () => {
  it('forwards an allowed plain HTTP request with its method, body and headers, but not proxy credentials', async () => {
    const p = await start(['allowed.test']);
    const r = await viaProxy(p, { method: 'POST', path: 'http://allowed.test/api?q=1', headers: { host: 'allowed.test', 'x-mine': '1', 'proxy-authorization': 'Basic c2VjcmV0', 'content-type': 'text/plain' }, body: 'payload' });
    expect(r).toEqual({ status: 200, body: 'ok POST /api?q=1' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/api?q=1', body: 'payload', headers: expect.objectContaining({ host: 'allowed.test', 'x-mine': '1' }) });
    expect(seen[0]!.headers['proxy-authorization']).toBeUndefined();
  });

  it('refuses a host off the list with 403 and says why, on both paths, and logs it', async () => {
    const p = await start(['allowed.test']);
    const r = await viaProxy(p, { path: 'http://evil.test/', headers: { host: 'evil.test' } });
    expect(r.status).toBe(403);
    expect(r.body).toContain('Keel sandbox: evil.test is not in sandbox.network.allowedDomains');
    const c = await connectVia(p, 'evil.test:443');
    expect(c.status).toBe(403);
    expect(c.body).toContain('evil.test is not in sandbox.network.allowedDomains');
    expect(seen).toEqual([]);
    expect(logged).toEqual([expect.stringContaining('refused GET evil.test'), expect.stringContaining('refused CONNECT evil.test:443')]);
  });

  it('decides on the URL\'s host, not on the Host header', async () => {
    const p = await start(['allowed.test']);
    const r = await viaProxy(p, { path: 'http://evil.test/', headers: { host: 'allowed.test' } });
    expect(r.status).toBe(403);
    const looked: string[] = [];
    await proxy?.close();
    const p2 = await start(['allowed.test'], {}, looked);
    expect((await viaProxy(p2, { path: 'http://ALLOWED.test./x', headers: { host: 'evil.test' } })).status).toBe(200);
    expect(looked).toEqual(['allowed.test']);
  });

  it('tunnels an allowed CONNECT both ways', async () => {
    const p = await start(['allowed.test']);
    const c = await connectVia(p, 'allowed.test:443');
    expect(c.status).toBe(200);
    const answer = new Promise<string>((resolve) => {
      let t = '';
      c.socket.on('data', (d: Buffer) => (t += d.toString()));
      c.socket.on('end', () => resolve(t));
    });
    c.socket.write('GET /through HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n');
    expect(await answer).toMatch(/ok GET \/through$/);
  });

  it('answers 400 to what is not a proxy request and 502 when the host cannot be reached', async () => {
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    proxy = await NetworkProxy.start({
      decide: (h) => decideHost(h, ['allowed.test', 'dead.test'], []),
      checkAddresses: (h, addresses) => decideAddresses(h, addresses, ['allowed.test', 'dead.test'], []),
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
      portFor: (asked) => (asked === 8443 || asked === 81 ? deadPort : port),
    });
    const p = proxy;
    expect((await viaProxy(p, { path: '/relative' })).status).toBe(400);
    expect((await viaProxy(p, { path: 'https://allowed.test/' })).status).toBe(400);
    expect((await connectVia(p, 'allowed.test')).status).toBe(400);
    const down = await viaProxy(p, { path: 'http://dead.test:81/' });
    expect(down.status).toBe(502);
    expect(down.body).toContain('dead.test:81 could not be reached');
    expect((await connectVia(p, 'dead.test:8443')).status).toBe(502);
  });

  it('`*` never reaches an address of this machine or a private network that a name resolves to, on either path', async () => {
    const names = { 'vm.test': '127.0.1.1', 'ip6-localhost': '::1', 'router.lan': '192.168.1.1', 'mapped.test': '::ffff:127.0.0.1', 'nat64.test': '64:ff9b::7f00:1', 'meta.test': '169.254.169.254' };
    const p = await start(['*'], names);
    for (const host of Object.keys(names)) {
      const r = await viaProxy(p, { path: `http://${host}/x`, headers: { host } });
      expect(r.status, host).toBe(403);
      expect(r.body).toContain(`${host} resolves to ${names[host as keyof typeof names]}, an address of this machine or a private network`);
      expect((await connectVia(p, `${host}:443`)).status, host).toBe(403);
    }
    expect(seen).toEqual([]);
  });

  it('a listed address or an exactly listed name reaches loopback; the connection goes to the address checked, not to the name again', async () => {
    // `exact.test` does not exist for the system resolver: only a connection to the checked address can succeed.
    const looked: string[] = [];
    const p = await start(['exact.test', '*'], { 'exact.test': '127.0.0.1', 'other.test': '127.0.0.1' }, looked);
    expect(await viaProxy(p, { path: 'http://exact.test/a', headers: { host: 'exact.test' } })).toEqual({ status: 200, body: 'ok GET /a' });
    expect((await connectVia(p, 'exact.test:443')).status).toBe(200);
    expect(looked).toEqual(['exact.test', 'exact.test']);
    expect((await viaProxy(p, { path: 'http://other.test/b', headers: { host: 'other.test' } })).status).toBe(403);
    await proxy?.close();
    const p2 = await start(['*', '127.0.0.1'], { 'other.test': '127.0.0.1' });
    expect((await viaProxy(p2, { path: 'http://other.test/c', headers: { host: 'other.test' } })).status).toBe(200);
  });

  it('close cuts open tunnels and removes its socket', async () => {
    const p = await start(['allowed.test']);
    const c = await connectVia(p, 'allowed.test:443');
    const ended = new Promise<void>((r) => c.socket.on('close', () => r()));
    await p.close();
    await ended;
    expect(existsSync(p.socketPath)).toBe(false);
    await p.close();
  });
});

it('reads CONNECT targets as host:port only', () => {
  expect(splitHostPort('github.com:443')).toEqual({ host: 'github.com', port: 443 });
  expect(splitHostPort('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
  for (const bad of ['github.com', 'github.com:0', 'github.com:70000', '[nothost]:80', '::1:80', 'a:b:80', 'http://x:80']) expect(splitHostPort(bad)).toBeNull();
});
