import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../../src/core/sandbox/bwrap';
import { Sandbox, type SandboxOptions } from '../../../src/core/sandbox/sandbox';
import { loadSandboxSettings, type SandboxSettings } from '../../../src/core/sandbox/settings';
import { createBashTool } from '../../../src/core/tools/bash';
import { makeContext, makeTempDir } from '../tools/helpers';

/**
 * The sandbox's network allow-list with real processes: real bwrap, the real proxy on a Unix
 * socket, the forwarder inside, curl and node as the commands. Test host names (`allowed.test`,
 * `other.allowed.test`) are mapped to a loopback HTTP server on the host by the proxy's resolver;
 * the sandbox itself has no DNS and no route anywhere.
 */
const avail = detectSandbox();
const hasCurl = existsSync('/usr/bin/curl');

let web: Server;
let port = 0;
const hits: string[] = [];
beforeAll(async () => {
  web = createServer((req, res) => {
    hits.push(`${req.method} ${req.headers.host} ${req.url}`);
    res.end(`hello from ${req.headers.host}${req.url}`);
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  port = (web.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => web.close(() => r()));
});

const sandboxes: Sandbox[] = [];
const dirs: { cleanup: () => void }[] = [];
afterEach(async () => {
  for (const s of sandboxes.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) d.cleanup();
  hits.length = 0;
});

/**
 * Every name the proxy is asked to reach resolves to the test server's loopback address, and the
 * proxy connects to the test server's port: the allow-list (names, then addresses) decides.
 */
const toTestServer: Pick<SandboxOptions, 'lookup' | 'portFor'> = { lookup: async () => [{ address: '127.0.0.1', family: 4 }], portFor: () => port };

function sandboxOf(settings: SandboxSettings, opts: SandboxOptions = {}): Sandbox {
  const s = new Sandbox(settings, { ...toTestServer, ...opts });
  sandboxes.push(s);
  return s;
}

async function run(sandbox: Sandbox, command: string): Promise<{ content: string; isError: boolean }> {
  const ws = makeTempDir('keel-net-ws-');
  dirs.push(ws);
  const r = await createBashTool({ sandbox }).invoke({ command }, makeContext(ws.dir));
  return { content: r.content, isError: r.isError === true };
}

describe.runIf(avail.available && hasCurl)('the sandbox network allow-list (real bwrap, real proxy)', () => {
  const allowing = (...allowedDomains: string[]): SandboxSettings => ({ enabled: true, network: { allowedDomains } });

  it('an allowed host answers through the proxy, over plain HTTP and over CONNECT', async () => {
    const s = sandboxOf(allowing('allowed.test'));
    const plain = await run(s, 'curl -sS http://allowed.test/plain');
    expect(plain.content).toBe('hello from allowed.test/plain');
    const tunnel = await run(s, 'curl -sS --proxytunnel http://allowed.test:8080/tunnel');
    expect(tunnel.content).toBe('hello from allowed.test:8080/tunnel');
    expect(hits).toEqual(['GET allowed.test /plain', 'GET allowed.test:8080 /tunnel']);
  });

  it('a host not on the list gets 403 with a body that says why, and nothing is contacted', async () => {
    const s = sandboxOf(allowing('allowed.test'));
    const r = await run(s, 'curl -sS -w "\\nstatus=%{http_code}" http://evil.test/x');
    expect(r.content).toContain('status=403');
    expect(r.content).toContain('evil.test is not in sandbox.network.allowedDomains');
    const tunnel = await run(s, 'curl -sS https://evil.test/');
    expect(tunnel.isError).toBe(true);
    expect(tunnel.content).toMatch(/CONNECT tunnel failed, response 403|403/);
    expect(hits).toEqual([]);
  });

  it('node reaches an allowed host through HTTPS_PROXY with a CONNECT of its own', async () => {
    // The test server is on loopback: a wildcard reaches it only because its address is listed.
    const s = sandboxOf(allowing('*.allowed.test', '127.0.0.1'));
    const script = [
      "const http=require('http');const p=new URL(process.env.HTTPS_PROXY);",
      "const rq=http.request({host:p.hostname,port:p.port,method:'CONNECT',path:process.argv[1]});",
      "rq.on('connect',(res,sock)=>{if(res.statusCode!==200){console.log('refused',res.statusCode);process.exit(0)}",
      "sock.write('GET /n HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n');let t='';sock.on('data',d=>t+=d);sock.on('end',()=>console.log(t.split('\\r\\n\\r\\n')[1]))});rq.end();",
    ].join('');
    const ok = await run(s, `node -e "${script}" a.allowed.test:443`);
    expect(ok.content).toBe('hello from x/n');
    const bare = await run(s, `node -e "${script}" allowed.test:443`);
    expect(bare.content).toBe('refused 403');
  });

  it('without the proxy nothing is reachable: no DNS, no route, not even the host loopback', async () => {
    const s = sandboxOf(allowing('allowed.test'));
    const direct = await run(s, `curl -sS --noproxy '*' -m 5 http://127.0.0.1:${port}/direct`);
    expect(direct.isError).toBe(true);
    expect(direct.content).toMatch(/Couldn't connect|Failed to connect|Connection refused/);
    const dns = await run(s, "curl -sS --noproxy '*' -m 5 http://allowed.test/");
    expect(dns.content).toMatch(/Could not resolve host/);
    expect(hits).toEqual([]);
  });

  it('with an empty allow-list there is no proxy at all', async () => {
    const s = sandboxOf({ enabled: true });
    const r = await run(s, 'echo "proxy=${HTTPS_PROXY:-none}"; curl -sS -m 5 http://allowed.test/');
    expect(r.content).toContain('proxy=none');
    expect(r.content).toMatch(/Could not resolve host/);
    expect(hits).toEqual([]);
  });

  it('denied domains win, and IP addresses and localhost are reached only when listed exactly', async () => {
    const s = sandboxOf({ enabled: true, network: { allowedDomains: ['*', '127.0.0.1'], deniedDomains: ['*.blocked.test'] } });
    // --noproxy '': NO_PROXY keeps loopback names off the proxy (the sandbox's own loopback).
    const status = (url: string) => run(s, `curl -sS -o /dev/null -w "%{http_code}" --proxytunnel --noproxy '' ${url}`);
    expect((await status('http://anything.test/')).content).toBe('200');
    expect((await status('http://a.blocked.test/')).content).toMatch(/403/);
    expect((await status('http://127.0.0.1/')).content).toBe('200');
    expect((await status('http://127.0.0.2/')).content).toMatch(/403/);
    expect((await status('http://localhost/')).content).toMatch(/403/);
    expect((await status('http://2130706434/')).content).toMatch(/403/);
    // Without the address listed, `*` does not reach a name that resolves to the loopback.
    const star = sandboxOf({ enabled: true, network: { allowedDomains: ['*'] } });
    const r = await run(star, 'curl -sS -w "\\nstatus=%{http_code}" http://anything.test/');
    expect(r.content).toContain('status=403');
    expect(r.content).toContain('anything.test resolves to 127.0.0.1, an address of this machine or a private network');
  });

  it('one proxy serves every command of a runtime, started on first use and closed by dispose', async () => {
    const runtimeDir = makeTempDir('keel-net-run-');
    dirs.push(runtimeDir);
    const s = sandboxOf({ ...allowing('allowed.test'), excludedCommands: ['git'] }, { runtimeDir: runtimeDir.dir });
    expect(await s.plan({ command: 'git status' })).toEqual({ kind: 'direct', why: 'excluded' });
    expect(readdirSync(runtimeDir.dir)).toEqual([]);
    const a = await s.plan({ command: 'curl x' });
    const b = await s.plan({ command: 'curl y' });
    expect(a).toMatchObject({ kind: 'wrapped', proxySocket: expect.any(String) });
    expect(b).toEqual(a);
    const socket = (a as { proxySocket: string }).proxySocket;
    expect(existsSync(socket)).toBe(true);
    expect(readdirSync(runtimeDir.dir)).toHaveLength(1);
    await s.dispose();
    expect(existsSync(socket)).toBe(false);
    const after = await run(s, 'curl -sS http://allowed.test/');
    expect(after).toMatchObject({ isError: true, content: expect.stringContaining('network proxy could not start (the runtime was disposed)') });
  });

  it('a proxy that cannot start refuses the command instead of running it', async () => {
    const notADir = makeTempDir('keel-net-bad-');
    dirs.push(notADir);
    writeFileSync(join(notADir.dir, 'file'), '');
    const s = sandboxOf(allowing('allowed.test'), { runtimeDir: join(notADir.dir, 'file') });
    const ws = makeTempDir('keel-net-ws-');
    dirs.push(ws);
    const r = await createBashTool({ sandbox: s }).invoke({ command: 'touch ran' }, makeContext(ws.dir));
    expect(r).toMatchObject({ isError: true, summary: 'sandbox unavailable' });
    expect(r.content).toMatch(/network proxy could not start \(ENOTDIR/);
    expect(existsSync(join(ws.dir, 'ran'))).toBe(false);
  });

  it('the allow-list comes from the settings files: the user file allows, a project file can only deny', async () => {
    const home = makeTempDir('keel-net-home-');
    const ws = makeTempDir('keel-net-proj-');
    dirs.push(home, ws);
    mkdirSync(join(home.dir, '.keel'));
    writeFileSync(join(home.dir, '.keel', 'settings.json'), JSON.stringify({ sandbox: { enabled: true, network: { allowedDomains: ['allowed.test', 'docs.allowed.test'] } } }));
    mkdirSync(join(ws.dir, '.keel'));
    writeFileSync(
      join(ws.dir, '.keel', 'settings.json'),
      JSON.stringify({ sandbox: { network: { allowedDomains: ['project.test'], deniedDomains: ['docs.allowed.test'] } }, permissions: { deny: ['WebFetch(domain:allowed.test)'] } }),
    );
    const loaded = loadSandboxSettings({ workspace: ws.dir, home: home.dir });
    expect(loaded.problems).toEqual([expect.stringContaining('sandbox.network.allowedDomains is ignored; a project can narrow the network, not widen it')]);
    const s = sandboxOf(loaded.settings);
    const code = async (host: string) => (await run(s, `curl -sS -o /dev/null -w "%{http_code}" http://${host}/`)).content;
    expect(await code('project.test')).toBe('403');
    expect(await code('docs.allowed.test')).toBe('403');
    expect(await code('allowed.test')).toBe('403');
    writeFileSync(join(ws.dir, '.keel', 'settings.json'), '{}');
    const s2 = sandboxOf(loadSandboxSettings({ workspace: ws.dir, home: home.dir }).settings);
    expect((await run(s2, 'curl -sS http://docs.allowed.test/')).content).toBe('hello from docs.allowed.test/');
  });
});

describe.runIf(avail.available)('the runtime owns its sandbox', () => {
  it('every Bash command of a runtime goes through its sandbox, whose proxy dispose closes', async () => {
    const { TaskRuntime } = await import('../../../src/core/runtime/taskRuntime');
    const ws = makeTempDir('keel-net-rt-');
    dirs.push(ws);
    const runtime = new TaskRuntime({ workspace: ws.dir, sandbox: { enabled: true, network: { allowedDomains: ['allowed.test'] } } });
    const plan = await runtime.sandbox.plan({ command: 'curl http://allowed.test/' });
    expect(plan).toMatchObject({ kind: 'wrapped', proxySocket: expect.any(String) });
    const socket = (plan as { proxySocket: string }).proxySocket;
    expect(existsSync(socket)).toBe(true);
    runtime.dispose();
    await runtime.sandbox.dispose();
    expect(existsSync(socket)).toBe(false);
  });
});
