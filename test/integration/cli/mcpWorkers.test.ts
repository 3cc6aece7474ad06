import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { eventually } from '../../unit/helpers/changes';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * MCP on workers, as a person runs it: `keel run --workers 1 --mcp-config FILE`. The task's turn
 * loop runs in a worker process; the MCP server (the real server-everything) is the CLI's — a
 * child of the CLI process, never of the worker — and the worker's calls go through the CLI's hub
 * over the worker protocol. The scripted model asks for the tools; their results reach it.
 */
const EVERYTHING = resolve(__dirname, '../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
// Memory off: the requests are counted (no gatekeeper lesson call after the run).
const KEY = { ANTHROPIC_API_KEY: 'sk-test', KEEL_MEMORY: 'off' };
let server: FakeModelServer;
let workspace: string;
let storage: string;

function mcpConfig(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'keel-mcpw-cfg-')), 'servers.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
  return file;
}
/** The workspace's allow rules, approved by the person (keel trust approve): the worker decides with them. */
async function allow(...rules: string[]): Promise<void> {
  mkdirSync(join(workspace, '.keel'), { recursive: true });
  writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: rules } }));
  const r = await runCli(['trust', 'approve', '--workspace', workspace], {}, storage);
  expect((await r.exit).code, r.stderr()).toBe(0);
}
const run = (prompt: string, ...extra: string[]) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--workers', '1', '--mcp-config', mcpConfig(), ...extra], KEY, storage);
type Body = { tools?: { name: string }[]; messages: { role: string; content: unknown }[] };
const body = (i: number) => server.requests[i]!.body as Body;

// Prints the worker's command line (the Bash tool's parent is the process running the turn) and
// the parent pid of every server-everything process. `dis[t]` keeps this command's own text from matching.
const WHO_RUNS_WHAT =
  'tr "\\0" " " < /proc/$PPID/cmdline; echo; echo "worker=$PPID"; for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "server-everything/dis[t]/index.js stdio"; then echo "everything-parent=$(cut -d" " -f4 $p/stat)"; fi; done';

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-mcpw-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-mcpw-home-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel run --workers 1 with MCP servers', () => {
  it('the turn runs on a worker, the server is the CLI\'s, and echo and get-sum results reach the model', async () => {
    await allow('Bash', 'mcp__everything__echo', 'mcp__everything__get-sum');
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_who', name: 'Bash', input: { command: WHO_RUNS_WHAT } }] },
      {
        blocks: [
          { type: 'tool_use', id: 'toolu_echo', name: 'mcp__everything__echo', input: { message: 'through the host' } },
          { type: 'tool_use', id: 'toolu_sum', name: 'mcp__everything__get-sum', input: { a: 2, b: 3 } },
        ],
      },
      { blocks: [{ type: 'text', text: 'It is 5.' }] },
    );
    const r = await run('What does @everything:demo://resource/static/document/architecture.md say? Then add 2 and 3.');
    expect((await r.exit).code, r.stderr()).toBe(0);
    // The resource mention was expanded by the CLI before the task reached the worker.
    expect(JSON.stringify(body(0).messages[0])).toContain('<mcp-resource server=\\"everything\\" uri=\\"demo://resource/static/document/architecture.md\\">');
    // The worker's request offers the host's MCP tools, under the same names.
    expect(body(0).tools!.map((t) => t.name)).toEqual(expect.arrayContaining(['Bash', 'mcp__everything__echo', 'mcp__everything__get-sum']));

    const who = ofType(r.events, 'tool_output').filter((e) => e.id === 'toolu_who').map((e) => e.chunk).join('');
    expect(who).toMatch(/\S+\/worker\.js --worker-id w1/);
    const workerPid = Number(/worker=(\d+)/.exec(who)?.[1]);
    const cliPid = r.child.pid!;
    expect(workerPid).toBeGreaterThan(0);
    expect(workerPid).not.toBe(cliPid);
    const parents = [...who.matchAll(/everything-parent=(\d+)/g)].map((m) => Number(m[1]));
    // Other test files may run their own server-everything: this run's is the CLI's child, none is the worker's.
    expect(parents).toContain(cliPid);
    expect(parents).not.toContain(workerPid);

    expect(ofType(r.events, 'permission').filter((e) => String(e.tool).startsWith('mcp__'))).toEqual([
      expect.objectContaining({ tool: 'mcp__everything__echo', decision: 'allow' }),
      expect.objectContaining({ tool: 'mcp__everything__get-sum', decision: 'allow' }),
    ]);
    expect(ofType(r.events, 'turn').map((e) => e.state)).toContain('mcpCall');
    expect(ofType(r.events, 'tool_result').map((e) => [e.id, e.is_error])).toEqual([
      ['toolu_who', false],
      ['toolu_echo', false],
      ['toolu_sum', false],
    ]);
    const answer = JSON.stringify(body(2).messages.at(-1));
    expect(answer).toContain('Echo: through the host');
    expect(answer).toContain('The sum of 2 and 3 is 5');
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
    expect(server.requests).toHaveLength(3);
  }, 120_000);

  it('progress reaches the tool card and an image reaches the model, from a worker', async () => {
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_long', name: 'mcp__everything__trigger-long-running-operation', input: { duration: 1, steps: 2 } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_img', name: 'mcp__everything__get-tiny-image', input: {} }] },
      { blocks: [{ type: 'text', text: 'A tiny image.' }] },
    );
    const r = await run('show me', '--mode', 'bypassPermissions');
    expect((await r.exit).code, r.stderr()).toBe(0);
    // The last step's notification races the result inside the SDK's client (it hands
    // notifications on a microtask later than responses), so only the first is certain, as in
    // the in-process test (cli/mcp.test.ts).
    expect(ofType(r.events, 'tool_output').filter((e) => e.id === 'toolu_long').map((e) => e.chunk)).toContain('progress 1/2\n');
    const result = (body(2).messages.at(-1)!.content as { type: string; content: unknown }[]).find((b) => b.type === 'tool_result')!;
    expect(result.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'image', source: expect.objectContaining({ media_type: 'image/png' }) })]));
    expect(ofType(r.events, 'tool_images').find((e) => e.id === 'toolu_img')?.images).toEqual([{ src: expect.stringMatching(/^data:image\/png;base64,iVBOR/), alt: expect.stringContaining('image/png') }]);
  }, 120_000);

  it('Ctrl+C during a long MCP call on a worker cancels the task cleanly: aborted, the worker not lost', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_long', name: 'mcp__everything__trigger-long-running-operation', input: { duration: 600, steps: 600 } }] });
    const r = await run('take your time', '--mode', 'bypassPermissions');
    await eventually(() => ofType(r.events, 'tool_output').some((e) => e.id === 'toolu_long'), () => `no progress yet; stderr: ${r.stderr()}`, r.changes);
    r.child.kill('SIGINT');
    expect((await r.exit).code, r.stderr()).toBe(1);
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    expect(ofType(r.events, 'error').map((e) => e.code)).not.toContain('worker_lost');
    // The model was not asked again: the cancelled call ended the task.
    expect(server.requests).toHaveLength(1);
  }, 120_000);

  it('without a rule the worker asks the CLI, which denies headless, and the model is told', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_echo', name: 'mcp__everything__echo', input: { message: 'hi' } }] }, { blocks: [{ type: 'text', text: 'Denied.' }] });
    const r = await run('echo');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(ofType(r.events, 'permission').map((e) => e.decision)).toEqual(['ask', 'deny']);
    expect(ofType(r.events, 'turn').map((e) => e.state)).not.toContain('mcpCall');
    expect(JSON.stringify(body(1).messages.at(-1))).toMatch(/Permission denied: Keel would ask first \(calling an MCP tool\) and a headless run has no one to ask; --mode bypassPermissions, or the allow rule \\"mcp__everything__echo\\"/);
  }, 120_000);
});
