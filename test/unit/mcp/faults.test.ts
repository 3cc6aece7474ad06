import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpHub } from '../../../src/core/mcp/hub';
import { mcpCallSubject } from '../../../src/core/mcp/wiring';
import type { McpServerStatus } from '../../../src/core/mcp/types';
import { startHttpMcpServer, type HttpMcpServer } from '../../fixtures/mcp/httpServer';
import { isAlive } from '../tools/helpers';
import { FAULTY, hubOf, nodeServer, server, tempDir } from './helpers';

/**
 * Failures are states, not hangs: a small misbehaving server of our own (test/fixtures/mcp/
 * faultyServer.mjs, real processes) and a Streamable HTTP fixture on loopback. Every test waits for
 * what a person would see (the server's state, the message the model gets), never for a time.
 */
const FAST = { connectTimeoutMs: 15_000, backoffMs: [50, 100, 200, 400, 800], maxRestartAttempts: 5, startupWaitMs: 15_000 };
let hubs: McpHub[] = [];
let http: HttpMcpServer[] = [];
afterEach(async () => {
  await Promise.all(hubs.map((h) => h.dispose()));
  await Promise.all(http.map((h) => h.close()));
  hubs = [];
  http = [];
});

function faulty(mode: string, limits: Partial<typeof FAST> & { toolTimeoutMs?: number; maxOutputTokens?: number; maxMessageBytes?: number } = {}, env: Record<string, string> = {}) {
  const logFile = join(tempDir('keel-mcp-log-'), 'events.jsonl');
  const made = hubOf([server('faulty', nodeServer(FAULTY, ['--mode', mode, '--log', logFile], env))], { limits: { ...FAST, ...limits } });
  hubs.push(made.hub);
  const events = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { pid: number; event: string; tool?: string }) : []);
  return { ...made, events };
}

async function until<T>(what: () => T | undefined | false, label: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = what();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const statusOf = (hub: McpHub): McpServerStatus => hub.status()[0]!;
const signal = () => new AbortController().signal;

describe('a stdio server that misbehaves', () => {
  it('exits in the middle of a call: the model is told, the call is never re-run, the server restarts', async () => {
    const { hub, events } = faulty('normal');
    await hub.toolDefinitions();
    const out = await hub.callTool('mcp__faulty__crash', {}, { signal: signal() });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/stopped during the call to crash .*did not run the call again/s);
    // It restarts by itself and works again, on a new process.
    await until(() => statusOf(hub).phase === 'ready' && events().filter((e) => e.event === 'started').length === 2, 'the restart');
    expect((await hub.callTool('mcp__faulty__echo', { message: 'again' }, { signal: signal() })).content).toBe('echo: again');
    expect(events().filter((e) => e.event === 'called' && e.tool === 'crash')).toHaveLength(1);
  });

  it('writes garbage to stdout: the garbage is ignored and the server works', async () => {
    const { hub } = faulty('garbage');
    expect((await hub.toolDefinitions()).map((d) => d.name)).toContain('mcp__faulty__echo');
    expect(await hub.callTool('mcp__faulty__echo', { message: 'through the noise' }, { signal: signal() })).toMatchObject({ content: 'echo: through the noise', isError: false });
  });

  it('never answers initialize: error after the connect timeout, then restarts, and a call says it is down', async () => {
    const { hub } = faulty('silent', { connectTimeoutMs: 400 });
    await hub.start();
    const s = statusOf(hub);
    expect(['error', 'restarting']).toContain(s.phase);
    expect(s.lastError).toContain('did not answer initialize within 400 ms (MCP_TIMEOUT)');
    expect(await hub.toolDefinitions()).toEqual([]);
  });

  it('never answers initialize: a model request waits for it once, at most the startup wait, and goes on without its tools (issue 26 item 5)', async () => {
    // A connect timeout of 10 minutes (waiting for it would outlast the test) and a startup wait of 200 ms.
    const { hub, logs } = faulty('silent', { connectTimeoutMs: 600_000, startupWaitMs: 200 });
    expect(await hub.toolDefinitions()).toEqual([]);
    // Still starting (spawning or in its handshake, which it never answers).
    expect(['connecting', 'stdio', 'initializing']).toContain(statusOf(hub).phase);
    const waiting = () => logs.filter((l) => l.includes('still starting'));
    expect(waiting(), logs.join('\n')).toEqual(['warn: MCP server faulty is still starting after 0.2 s; this request goes without its tools, which join a later one once it is ready (KEEL_MCP_STARTUP_WAIT)']);
    // The next request does not wait again, nor warn again.
    expect(await hub.toolDefinitions()).toEqual([]);
    expect(waiting()).toHaveLength(1);
    // A model that names one of its tools anyway (it saw them before a resume) is told the server is starting, not that no such tool exists.
    expect(hub.startingServers()).toEqual(['faulty']);
    expect(mcpCallSubject(hub, { type: 'tool_use', id: 't1', name: 'mcp__faulty__echo', input: {} })).toEqual({
      ok: false,
      message: 'MCP server faulty is still starting, so its tools were not offered in this request; they will be in a later one once it is ready. mcp__faulty__echo was not called: go on with the tools you were given.',
    });
    expect(mcpCallSubject(hub, { type: 'tool_use', id: 't2', name: 'mcp__other__echo', input: {} })).toEqual({ ok: false, message: 'There is no MCP tool named mcp__other__echo. Use only the tools you were given.' });
  });

  it('exits at start: the error names the exit and the last stderr line; after the allowed restarts it stays in error', async () => {
    // Two restarts here (the default five, and the backoff timing, are in backoff.test.ts).
    const { hub, events } = faulty('exit-at-start', { maxRestartAttempts: 2 });
    await hub.start();
    const final = await until(() => {
      const s = statusOf(hub);
      return s.phase === 'error' && s.attempts === 3 && s;
    }, 'the server to give up');
    expect(final.lastError).toMatch(/process exited before it finished initializing; its last output: fatal: the faulty server was told to exit at start/);
    expect(final.stderrTail).toContain('fatal: the faulty server was told to exit at start');
    expect(events().filter((e) => e.event === 'started')).toHaveLength(3);
    const down = await hub.callTool('mcp__faulty__echo', { message: 'x' }, { signal: signal() });
    expect(down.content).toMatch(/no MCP tool named|not available/);
    // The person restarts it: one more attempt.
    hub.restart('faulty');
    await until(() => events().filter((e) => e.event === 'started').length === 4, 'the manual restart');
  });

  it('a call to a server that gave up says so and is not made', async () => {
    const { hub } = faulty('normal');
    await hub.toolDefinitions();
    hub.disable('faulty');
    await until(() => statusOf(hub).phase === 'disabled', 'disabled');
    const out = await hub.callTool('mcp__faulty__echo', { message: 'x' }, { signal: signal() });
    expect(out).toMatchObject({ isError: true, content: expect.stringContaining('The MCP server faulty is not available (disabled), so echo was not called') });
  });

  it('tools/list_changed refreshes the tools the model gets', async () => {
    const { hub } = faulty('normal');
    expect((await hub.toolDefinitions()).map((d) => d.name)).not.toContain('mcp__faulty__added');
    await hub.callTool('mcp__faulty__add_tool', {}, { signal: signal() });
    await until(() => statusOf(hub).tools.some((t) => t.name === 'added'), 'the refreshed list');
    expect((await hub.toolDefinitions()).map((d) => d.name)).toContain('mcp__faulty__added');
    expect((await hub.callTool('mcp__faulty__added', {}, { signal: signal() })).content).toBe('the added tool ran');
  });

  it('cancelling a call sends notifications/cancelled to the server', async () => {
    const { hub, events } = faulty('normal');
    await hub.toolDefinitions();
    const ac = new AbortController();
    const pending = hub.callTool('mcp__faulty__slow', { ms: 60_000 }, { signal: ac.signal });
    await until(() => events().some((e) => e.event === 'called' && e.tool === 'slow'), 'the call to reach the server');
    expect(statusOf(hub).state).toBe('ready.toolCall');
    ac.abort();
    expect(await pending).toMatchObject({ isError: true, content: expect.stringContaining('was cancelled') });
    await until(() => events().some((e) => e.event === 'cancelled'), 'the server to hear of the cancel');
    await until(() => statusOf(hub).state === 'ready.idle', 'idle again');
  });

  it('a call longer than the tool timeout ends with a clear result and the server is told to stop', async () => {
    const { hub, events } = faulty('normal', { toolTimeoutMs: 300 });
    await hub.toolDefinitions();
    const out = await hub.callTool('mcp__faulty__slow', { ms: 60_000 }, { signal: signal() });
    expect(out).toMatchObject({ isError: true, content: expect.stringContaining('no answer within 300 ms (MCP_TOOL_TIMEOUT)') });
    await until(() => events().some((e) => e.event === 'cancelled'), 'the cancel');
  });

  it('caps what a tool may add to the conversation, with a note saying so', async () => {
    const { hub } = faulty('normal', { maxOutputTokens: 100 });
    await hub.toolDefinitions();
    const out = await hub.callTool('mcp__faulty__big', { chars: 20_000 }, { signal: signal() });
    expect(typeof out.content).toBe('string');
    const textOut = out.content as string;
    expect(textOut.length).toBeLessThan(1000);
    expect(textOut).toContain('[Output truncated: this MCP tool returned about 5000 tokens; Keel keeps at most 100 (MAX_MCP_OUTPUT_TOKENS)');
    expect(out.summary).toContain('truncated');
  });

  it('a 20 MB result is read and capped like a 5 MB one: same note, no restart, the server goes on (issue 26 item 6)', async () => {
    const { hub, events } = faulty('normal');
    await hub.toolDefinitions();
    for (const chars of [5_000_000, 20_000_000]) {
      const out = await hub.callTool('mcp__faulty__big', { chars }, { signal: signal() });
      expect(out.isError, String(out.content).slice(0, 300)).toBe(false);
      expect(out.content).toContain(`[Output truncated: this MCP tool returned about ${chars / 4} tokens; Keel keeps at most 25000 (MAX_MCP_OUTPUT_TOKENS)`);
    }
    expect(statusOf(hub).phase).toBe('ready');
    expect(events().filter((e) => e.event === 'started')).toHaveLength(1);
    expect((await hub.callTool('mcp__faulty__echo', { message: 'still here' }, { signal: signal() })).content).toBe('echo: still here');
  });

  it('a message past the read limit is not read: its call gets an error saying how big it was; the same server answers the next call', async () => {
    const { hub, events } = faulty('normal', { maxMessageBytes: 1024 * 1024 });
    await hub.toolDefinitions();
    const out = await hub.callTool('mcp__faulty__big', { chars: 3_000_000 }, { signal: signal() });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/the server sent a message of 3 MB, more than Keel reads from one server message \(1 MB\); it was not read\. Ask the tool for less\./);
    expect((await hub.callTool('mcp__faulty__echo', { message: 'next' }, { signal: signal() })).content).toBe('echo: next');
    expect(statusOf(hub).phase).toBe('ready');
    expect(events().filter((e) => e.event === 'started')).toHaveLength(1);
  });

  it('the server process does not get Keel provider keys, but gets the variables its config names', async () => {
    const logFile = join(tempDir(), 'e.jsonl');
    const { hub } = hubOf([server('faulty', nodeServer(FAULTY, ['--log', logFile], { NAMED_BY_CONFIG: 'yes' }))], {
      env: { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-test-secret-value', OPENAI_API_KEY: 'sk-openai-secret', KEEL_PLAIN: 'kept' },
      limits: FAST,
    });
    hubs.push(hub);
    await hub.toolDefinitions();
    const env = async (name: string) => (await hub.callTool('mcp__faulty__env', { name }, { signal: signal() })).content;
    expect(await env('ANTHROPIC_API_KEY')).toBe('(unset)');
    expect(await env('OPENAI_API_KEY')).toBe('(unset)');
    expect(await env('NAMED_BY_CONFIG')).toBe('yes');
    expect(await env('KEEL_PLAIN')).toBe('kept');
  });

  it('dispose ends the server process', async () => {
    const { hub, events } = faulty('normal');
    await hub.toolDefinitions();
    const pid = events().find((e) => e.event === 'started')!.pid;
    expect(isAlive(pid)).toBe(true);
    await hub.dispose();
    await until(() => !isAlive(pid), 'the process to end');
  });
});

describe('an HTTP server that misbehaves', () => {
  async function httpHub(status?: number) {
    const srv = await startHttpMcpServer(status ? { status } : {});
    http.push(srv);
    const made = hubOf([server('remote', { transport: 'http', url: srv.url, headers: {} })], { limits: FAST });
    hubs.push(made.hub);
    return { srv, hub: made.hub };
  }

  it('answers 500: error with the status, restarted with backoff', async () => {
    const { hub, srv } = await httpHub(500);
    await hub.start();
    expect(statusOf(hub).lastError).toContain('HTTP 500');
    await until(() => srv.log.filter((r) => r.rpc === 'initialize').length >= 3, 'restarts');
    srv.setStatus(null);
    await until(() => statusOf(hub).phase === 'ready', 'recovery once the server answers');
  });

  it('answers 401: needs a sign-in (a state, not an error), and no restart loop', async () => {
    const { hub, srv } = await httpHub(401);
    await hub.start();
    const s = statusOf(hub);
    expect(s.phase).toBe('needsAuthorization');
    expect(s.lastError).toMatch(/needs you to sign in.*or give it credentials in "headers"/);
    const tries = srv.log.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(srv.log.length).toBe(tries);
  });

  it('an SSE stream that cannot open is an error with the status', async () => {
    const srv = await startHttpMcpServer({ status: 503 });
    http.push(srv);
    const { hub } = hubOf([server('old', { transport: 'sse', url: srv.url, headers: {} })], { limits: FAST });
    hubs.push(hub);
    await hub.start();
    const s = statusOf(hub);
    expect(s.via).toBe('sse');
    expect(['error', 'restarting']).toContain(s.phase);
    expect(s.lastError).toMatch(/503/);
    expect(srv.log[0]).toMatchObject({ method: 'GET', status: 503 });
  });

  it('an expired session (404) initializes a new one and the call still answers', async () => {
    const { hub, srv } = await httpHub();
    await hub.toolDefinitions();
    expect((await hub.callTool('mcp__remote__echo', { message: 'one' }, { signal: signal() })).content).toBe('echo: one');
    srv.expireSessions();
    expect((await hub.callTool('mcp__remote__echo', { message: 'two' }, { signal: signal() })).content).toBe('echo: two');
    expect(srv.log.some((r) => r.status === 404 && r.rpc === 'tools/call')).toBe(true);
    expect(srv.log.filter((r) => r.rpc === 'initialize')).toHaveLength(2);
    expect(srv.log.filter((r) => r.rpc === 'tools/call' && r.status === 200)).toHaveLength(2);
  });
});
