import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionError } from '../../../src/core/providers/connectionErrors';
import { connectionFailure, findErrorCode, type Failure } from '../../../src/core/providers/failures';
import { nodeFetch } from '../../../src/core/providers/transport/nodeFetch';

/** A loopback server whose handler the test writes; tracks its sockets to see them close. */
interface Loopback {
  url: string;
  sockets: Socket[];
  close(): Promise<void>;
}

const open: Loopback[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(handler: http.RequestListener): Promise<Loopback> {
  const sockets: Socket[] = [];
  const server = http.createServer(handler);
  server.on('connection', (s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const lb: Loopback = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  open.push(lb);
  return lb;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

function classify(err: unknown, url: string) {
  return connectionError(connectionFailure(err) as Extract<Failure, { kind: 'connection' }>, url);
}

describe('nodeFetch: fetch on node:http for a worker', () => {
  it('streams a chunked SSE body chunk by chunk, as the server writes it', async () => {
    // The server writes the next event only once the client has read the previous one: a
    // transport that buffered the answer would never see the second event.
    let next: (() => void) | undefined;
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      next = () => {
        n += 1;
        if (n <= 3) res.write(`event: ping\ndata: {"n":${n}}\n\n`);
        else res.end();
      };
      next();
    });
    const response = await nodeFetch(`${server.url}/v1/messages`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const seen: string[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      seen.push(new TextDecoder().decode(r.value));
      next!();
    }
    expect(seen).toEqual(['event: ping\ndata: {"n":1}\n\n', 'event: ping\ndata: {"n":2}\n\n', 'event: ping\ndata: {"n":3}\n\n']);
  });

  it('reads status, status text, headers (retry-after, request-id, repeated fields) and the body', async () => {
    const server = await serve((req, res) => {
      res.setHeader('retry-after', '7');
      res.setHeader('request-id', 'req_123');
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(429, 'Too Many Requests', { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, key: req.headers['x-api-key'], type: req.headers['content-type'] }));
    });
    const response = await nodeFetch(server.url, { method: 'post', headers: { 'X-Api-Key': 'sk-1' }, body: 'x' });
    expect(response).toMatchObject({ status: 429, statusText: 'Too Many Requests', ok: false, redirected: false });
    expect(response.headers.get('Retry-After')).toBe('7');
    expect(response.headers.get('request-id')).toBe('req_123');
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(await response.json()).toEqual({ method: 'POST', key: 'sk-1', type: 'text/plain;charset=UTF-8' });
    expect(response.bodyUsed).toBe(true);
  });

  it('aborting mid-body errors the stream with the reason and closes the socket', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
    });
    const controller = new AbortController();
    const response = await nodeFetch(server.url, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    const closed = new Promise((r) => server.sockets[0]!.once('close', r));
    controller.abort();
    expect(await rejection(reader.read())).toMatchObject({ name: 'AbortError' });
    await closed;
    expect(server.sockets[0]!.destroyed).toBe(true);
  });

  it('aborting before the response rejects with AbortError and closes the socket; an aborted signal sends nothing, nor one aborted on the way', async () => {
    let got = 0;
    const server = await serve(() => {
      got += 1; // never answers
    });
    const controller = new AbortController();
    const pending = nodeFetch(server.url, { signal: controller.signal });
    while (got === 0) await new Promise((r) => setImmediate(r));
    const closed = new Promise((r) => server.sockets[0]!.once('close', r));
    controller.abort();
    expect(await rejection(pending)).toMatchObject({ name: 'AbortError' });
    await closed;
    expect(await rejection(nodeFetch(server.url, { signal: AbortSignal.abort() }))).toMatchObject({ name: 'AbortError' });
    // Aborted right after the call, while nodeFetch is still on its way to the socket.
    const late = new AbortController();
    const lateFetch = nodeFetch(server.url, { signal: late.signal });
    late.abort();
    expect(await rejection(lateFetch)).toMatchObject({ name: 'AbortError' });
    expect(got).toBe(1);
  });

  it('cancelling the body (a consumer that stops) closes the socket', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const response = await nodeFetch(server.url);
    const reader = response.body!.getReader();
    await reader.read();
    const closed = new Promise((r) => server.sockets[0]!.once('close', r));
    await reader.cancel();
    await closed;
  });

  it('a body cut off by the server is TypeError terminated, with the socket error code as its cause', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: part\n\n', () => res.socket!.destroy());
    });
    const response = await nodeFetch(server.url);
    const reader = response.body!.getReader();
    await reader.read();
    const err = await rejection(reader.read());
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('terminated');
    expect(findErrorCode(err)).toBe('ECONNRESET');
  });

  it('connection failures carry the codes failures.ts reads: refused, bad port, unknown scheme, TLS', async () => {
    const server = await serve(() => undefined);
    const closedUrl = server.url;
    await server.close();
    const refused = await rejection(nodeFetch(closedUrl));
    expect(refused).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect(classify(refused, closedUrl)).toMatchObject({ code: 'connection_refused', retryable: false });
    expect(classify(await rejection(nodeFetch('http://127.0.0.1:9/v1')), 'http://127.0.0.1:9').message).toContain('fetch refuses port 9');
    expect(classify(await rejection(nodeFetch('ftp://127.0.0.1:2121/')), 'ftp://127.0.0.1:2121')).toMatchObject({ code: 'invalid_input' });
    const plain = await serve((_req, res) => res.end('x'));
    const tlsUrl = plain.url.replace('http:', 'https:');
    const tls = classify(await rejection(nodeFetch(tlsUrl)), tlsUrl);
    expect(tls).toMatchObject({ code: 'connection_refused', retryable: false });
    // (node:https reports the failed handshake as EPROTO where undici says ERR_SSL_WRONG_VERSION_NUMBER: both are TLS codes.)
    expect(tls.message).toMatch(/secure connection to https:\/\/127\.0\.0\.1:\d+: .*\((ERR_SSL_\w+|EPROTO)\)/);
  });

  it('follows a same-origin redirect with its body; refuses one to another origin; manual and error as fetch', async () => {
    const other = await serve((_req, res) => res.end('other host'));
    const server = await serve((req, res) => {
      if (req.url === '/old') {
        res.writeHead(307, { location: '/new' });
        res.end();
      } else if (req.url === '/away') {
        res.writeHead(302, { location: `${other.url}/steal` });
        res.end();
      } else {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => res.end(`${req.method} ${req.url} ${body}`));
      }
    });
    const moved = await nodeFetch(`${server.url}/old`, { method: 'POST', body: 'payload' });
    expect(moved.redirected).toBe(true);
    expect(moved.url).toBe(`${server.url}/new`);
    expect(await moved.text()).toBe('POST /new payload');
    const away = await rejection(nodeFetch(`${server.url}/away`, { method: 'POST', body: 'payload' }));
    expect(away).toMatchObject({ message: 'fetch failed' });
    expect(String((away as Error).cause)).toContain('another origin');
    const manual = await nodeFetch(`${server.url}/away`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe(`${other.url}/steal`);
    expect(await rejection(nodeFetch(`${server.url}/old`, { redirect: 'error' }))).toMatchObject({ message: 'fetch failed' });
  });

  it('decodes a gzip body, as fetch does', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gzipSync('hello, compressed'));
    });
    const response = await nodeFetch(server.url);
    expect(await response.text()).toBe('hello, compressed');
  });

  it('sends byte and URLSearchParams bodies; refuses FormData with a clear error', async () => {
    const server = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => res.end(`${req.headers['content-type'] ?? '-'}|${req.headers['content-length'] ?? '-'}|${body}`));
    });
    expect(await (await nodeFetch(server.url, { method: 'PUT', body: new TextEncoder().encode('bytes') })).text()).toBe('-|5|bytes');
    expect(await (await nodeFetch(server.url, { method: 'POST', body: new URLSearchParams({ a: '1' }) })).text()).toBe('application/x-www-form-urlencoded;charset=UTF-8|3|a=1');
    const form = await rejection(nodeFetch(server.url, { method: 'POST', body: new FormData() }));
    expect(form).toBeInstanceOf(TypeError);
    expect((form as Error).message).toContain('FormData');
  });
});
