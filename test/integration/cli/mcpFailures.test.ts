import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
import { cliBundle, keelMcp, ofType, runCli } from './cliHarness';

/**
 * Issue 26 items 5 and 13: what becomes of an MCP server is visible in `keel run` — a server that
 * cannot start, a hung one, a broken `.mcp.json` — on stderr and as `mcp` lines in stream-json; a
 * failed server is a warning (the run goes on without its tools and exits with the task's status,
 * as Claude Code does); a hung server does not hold the first request up for the connect timeout;
 * `keel mcp list` names a broken file. Real stdio servers (test/fixtures/mcp/faultyServer.mjs).
 */
const FAULTY = resolve(__dirname, '../../fixtures/mcp/faultyServer.mjs');
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
let server: FakeModelServer;
let workspace: string;

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-mcpfail-ws-'));
});
afterEach(async () => {
  await server.close();
});

function config(servers: Record<string, string>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'keel-mcpfail-cfg-')), 'servers.json');
  writeFileSync(file, JSON.stringify({ mcpServers: Object.fromEntries(Object.entries(servers).map(([name, mode]) => [name, { command: process.execPath, args: [FAULTY, '--mode', mode] }])) }));
  return file;
}
const run = (env: Record<string, string>, ...extra: string[]) =>
  runCli(['run', 'hello', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--no-memory', ...extra], { ...KEY, ...env });
const toolsOf = (i: number) => ((server.requests[i]!.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name).filter((n) => n.startsWith('mcp__'));

describe('keel run: MCP servers that fail are visible', () => {
  it('a server that exits at start: a stderr line and an mcp line naming why; the good one is ready; the run completes (exit 0)', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Hi.' }] });
    const r = await run({}, '--mcp-config', config({ good: 'normal', broken: 'exit-at-start' }), '--output-format', 'stream-json');
    expect((await r.exit).code, r.stderr()).toBe(0);
    const mcp = ofType(r.events, 'mcp');
    const taskId = r.events.find((e) => e.type === 'user_message')!.taskId;
    expect(mcp).toContainEqual({ type: 'mcp', taskId, status: 'ready', server: 'good', tools: expect.any(Number) });
    expect(mcp).toContainEqual({ type: 'mcp', taskId, status: 'failed', server: 'broken', message: expect.stringMatching(/^failed to start: .*told to exit at start/) });
    expect(r.stderr()).toMatch(/^keel: MCP server "broken" failed to start: .*told to exit at start.*; its tools are not available while it is down/m);
    // One line per failure, however many times it is retried with the same error.
    expect(r.stderr().match(/MCP server "broken" failed to start/g)).toHaveLength(1);
    expect(toolsOf(0)).toContain('mcp__good__echo');
    expect(toolsOf(0).filter((n) => n.startsWith('mcp__broken__'))).toEqual([]);
  }, 120_000);

  it('a hung server (never answers initialize) does not hold up the first request: it is named, and the run goes on', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Hi without tools.' }] });
    // A connect timeout of 10 minutes: waiting for it would outlast this test.
    const r = await run({ MCP_TIMEOUT: '600000' }, '--mcp-config', config({ hung: 'silent' }));
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stdout()).toContain('Hi without tools.');
    expect(r.stderr()).toContain('keel: MCP server hung is still starting after 5 s; this request goes without its tools, which join a later one once it is ready (KEEL_MCP_STARTUP_WAIT)');
    expect(toolsOf(0)).toEqual([]);
  }, 120_000);

  it('a model that calls a tool of a server still starting is told the server is starting (on its worker), and nothing is called', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_early', name: 'mcp__hung__echo', input: { message: 'too soon' } }] }, { blocks: [{ type: 'text', text: 'I will wait for it.' }] });
    const r = await run({ MCP_TIMEOUT: '600000', KEEL_MCP_STARTUP_WAIT: '200' }, '--mcp-config', config({ hung: 'silent' }), '--mode', 'bypassPermissions', '--workers', '1');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stdout()).toContain('I will wait for it.');
    const results = (server.requests[1]!.body as { messages: { role: string; content: unknown }[] }).messages.at(-1)!.content as { type: string; content?: unknown; is_error?: boolean }[];
    expect(results).toEqual([
      expect.objectContaining({
        type: 'tool_result',
        is_error: true,
        content: expect.stringContaining('MCP server hung is still starting, so its tools were not offered in this request; they will be in a later one once it is ready. mcp__hung__echo was not called'),
      }),
    ]);
  }, 120_000);

  it('a broken .mcp.json: named on stderr and as an mcp line, and keel mcp list says the file is broken (exit 1)', async () => {
    writeFileSync(join(workspace, '.mcp.json'), '{"mcpServers": {"x": ');
    server.enqueue({ blocks: [{ type: 'text', text: 'Hi.' }] });
    const r = await run({}, '--output-format', 'stream-json');
    expect((await r.exit).code, r.stderr()).toBe(0);
    const file = join(workspace, '.mcp.json');
    expect(r.stderr()).toMatch(new RegExp(`^keel: MCP configuration ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: not valid JSON`, 'm'));
    expect(ofType(r.events, 'mcp')).toEqual([expect.objectContaining({ type: 'mcp', status: 'config_problem', file, message: expect.stringMatching(/^not valid JSON/) })]);

    const list = await keelMcp(r.storage, 'list', '--workspace', workspace);
    expect(list.code, list.stderr).toBe(1);
    expect(list.stdout).toBe(`No MCP server could be read: ${file} is broken (see above); its servers are not listed.\n`);
    expect(list.stderr).toContain(`keel mcp: ${file}: not valid JSON`);
  }, 120_000);
});

describe('keel run: a huge MCP result (issue 26 item 6)', () => {
  it('a 20 MB result reaches the model capped, with the truncation note, and the server is never restarted', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'keel-mcpfail-log-')), 'events.jsonl');
    const file = join(mkdtempSync(join(tmpdir(), 'keel-mcpfail-cfg-')), 'servers.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { faulty: { command: process.execPath, args: [FAULTY, '--log', log] } } }));
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_big', name: 'mcp__faulty__big', input: { chars: 20_000_000 } }] }, { blocks: [{ type: 'text', text: 'That was a lot.' }] });
    const r = await run({}, '--mcp-config', file, '--mode', 'bypassPermissions', '--output-format', 'stream-json');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(ofType(r.events, 'tool_result')).toEqual([expect.objectContaining({ id: 'toolu_big', is_error: false })]);
    const result = JSON.stringify((server.requests[1]!.body as { messages: unknown[] }).messages.at(-1));
    expect(result).toContain('[Output truncated: this MCP tool returned about 5000000 tokens; Keel keeps at most 25000 (MAX_MCP_OUTPUT_TOKENS)');
    expect(result).not.toMatch(/stopped during the call/);
    expect(result.length).toBeLessThan(200_000);
    expect(r.stderr()).not.toMatch(/MCP server "faulty" (stopped|failed)/);
    expect(readFileSync(log, 'utf8').match(/"event":"started"/g)).toHaveLength(1);
  }, 120_000);
});

describe('keel run: Ctrl+C during an MCP call (issue 26 item 11)', () => {
  it('the task ends aborted and nothing of the call is recorded or printed after its done, though the server goes on sending progress', async () => {
    // 10,000 progress steps, 10 ms apart; the tool does not stop when it is told the call was cancelled.
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_slow', name: 'mcp__faulty__progress', input: { steps: 10_000 } }] });
    const r = await run({}, '--mcp-config', config({ faulty: 'normal' }), '--mode', 'bypassPermissions', '--output-format', 'stream-json');
    await waitUntil(() => ofType(r.events, 'tool_output').length > 5 || r.child.exitCode !== null, () => `no MCP progress: ${r.stderr()}`, 60_000);
    r.child.kill('SIGINT');
    expect((await r.exit).code, r.stderr()).toBe(1);
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    const taskId = String(r.events[0]!.taskId);
    const log = readFileSync(join(r.storage, 'tasks', taskId, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => (JSON.parse(l) as { event: { type: string } }).event.type);
    expect(log.at(-1), log.join(' ')).toBe('done');
  }, 120_000);
});

