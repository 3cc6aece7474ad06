import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebFetchTool, webFetchTool } from '../../../src/core/tools/webFetch';
import { makeContext } from './helpers';

let server: Server;
let base: string;
let port: number;
const hanging = new Set<import('node:http').ServerResponse>();

const PAGE = `<!doctype html><html><head><title>Docs &amp; Notes</title><style>body{color:red}</style>
<script>var secret = "do-not-show";</script></head>
<body><h1>Install</h1><p>Run <code>npm i keel</code> first.</p><ul><li>one</li><li>two</li></ul>
<pre>line 1
  indented &lt;tag&gt;</pre><!-- hidden comment --></body></html>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/page':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
        break;
      case '/json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        break;
      case '/missing':
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
        break;
      case '/redirect-same':
        res.writeHead(302, { location: '/json' }).end();
        break;
      case '/redirect-other':
        res.writeHead(301, { location: `http://localhost:${port}/json` }).end();
        break;
      case '/big':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(50_000));
        break;
      case '/image':
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        break;
      case '/hang':
        hanging.add(res);
        break;
      default:
        res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const ctx = () => makeContext('/tmp');

describe('WebFetch', () => {
  it('converts HTML to readable text without scripts, styles or comments', async () => {
    const r = await webFetchTool.invoke({ url: `${base}/page`, prompt: 'how to install?' }, ctx());
    expect(r.isError).toBe(false);
    expect(r.content).toContain(`URL: ${base}/page`);
    expect(r.content).toContain('Prompt: how to install?');
    expect(r.content).toContain('Docs & Notes');
    expect(r.content).toContain('# Install');
    expect(r.content).toContain('Run npm i keel first.');
    expect(r.content).toContain('- one\n- two');
    expect(r.content).toContain('line 1\n  indented <tag>');
    expect(r.content).not.toContain('do-not-show');
    expect(r.content).not.toContain('color:red');
    expect(r.content).not.toContain('hidden comment');
    expect(r.content).not.toContain('<p>');
  });

  it('returns JSON as is and follows a redirect on the same host', async () => {
    const r = await webFetchTool.invoke({ url: `${base}/redirect-same` }, ctx());
    expect(r.isError).toBe(false);
    expect(r.content).toContain(`URL: ${base}/json`);
    expect(r.content).toContain('{"ok":true}');
  });

  it('reports a redirect to another host instead of following it', async () => {
    const r = await webFetchTool.invoke({ url: `${base}/redirect-other` }, ctx());
    expect(r.content).toContain(`redirects (HTTP 301) to a different host: http://localhost:${port}/json`);
    expect(r.content).not.toContain('{"ok":true}');
  });

  it('makes an HTTP error status an error result with the body', async () => {
    const r = await webFetchTool.invoke({ url: `${base}/missing` }, ctx());
    expect(r.isError).toBe(true);
    expect(r.summary).toBe('HTTP 404');
    expect(r.content).toContain('no such page');
  });

  it('rejects non-http URLs and malformed ones', async () => {
    const file = await webFetchTool.invoke({ url: 'file:///etc/passwd' }, ctx());
    expect(file.isError).toBe(true);
    expect(file.content).toContain('only http and https');
    const bad = await webFetchTool.invoke({ url: 'not a url' }, ctx());
    expect(bad.isError).toBe(true);
    expect(bad.content).toContain('Invalid URL');
  });

  it('refuses binary content', async () => {
    const r = await webFetchTool.invoke({ url: `${base}/image` }, ctx());
    expect(r.isError).toBe(true);
    expect(r.content).toContain('image/png');
  });

  it('caps the body size and the text length', async () => {
    const small = createWebFetchTool({ maxBytes: 1000, maxChars: 300 });
    const r = await small.invoke({ url: `${base}/big` }, ctx());
    expect(r.isError).toBe(false);
    expect(r.content).toContain('[Body truncated after 1000 bytes]');
    expect(r.content).toContain('700 more characters not shown');
  });

  it('times out on a server that never answers, and can be cancelled', async () => {
    const quick = createWebFetchTool({ timeoutMs: 200 });
    const timedOut = await quick.invoke({ url: `${base}/hang` }, ctx());
    expect(timedOut.isError).toBe(true);
    expect(timedOut.content).toContain('timed out after 200 ms');

    const c = ctx();
    const pending = webFetchTool.invoke({ url: `${base}/hang` }, c);
    await new Promise((r) => setTimeout(r, 50));
    c.controller.abort();
    const cancelled = await pending;
    expect(cancelled.summary).toBe('cancelled');
  });

  it('describes the URL it will fetch', () => {
    expect(webFetchTool.subject({ url: `${base}/page` }, { workspace: '/tmp' })).toEqual({ kind: 'network', tool: 'WebFetch', url: `${base}/page`, summary: `Fetch ${base}/page` });
  });
});
