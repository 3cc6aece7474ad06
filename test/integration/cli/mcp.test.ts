import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { startOAuthMcpServer } from '../../fixtures/mcp/oauthServer';
import { cliBundle, keelMcp, ofType, runCli } from './cliHarness';

/**
 * MCP end to end through the built CLI: `keel run` against the fake model server, whose scripted
 * model calls a tool of the real server-everything (a devDependency, started by Keel), and the
 * result reaches the model in the next request. Also `keel mcp add/list/tools/remove`.
 */
const EVERYTHING = resolve(__dirname, '../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
let server: FakeModelServer;
let workspace: string;

function mcpConfig(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'keel-mcp-cfg-')), 'servers.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
  return file;
}
const run = (prompt: string, ...extra: string[]) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', ...extra], KEY);
type Body = { tools?: { name: string }[]; messages: { role: string; content: unknown }[] };
const body = (i: number) => server.requests[i]!.body as Body;

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-mcp-ws-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel run with MCP servers', () => {
  it('the model calls an MCP tool allowed by a rule, and the result reaches the model', async () => {
    // The rule is the person's own (~/.keel/settings.json; HOME is the run's storage folder).
    const storage = mkdtempSync(join(tmpdir(), 'keel-mcp-home-'));
    mkdirSync(join(storage, '.keel'));
    writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['mcp__everything__get-sum'] } }));
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_sum', name: 'mcp__everything__get-sum', input: { a: 2, b: 3 } }] }, { blocks: [{ type: 'text', text: 'It is 5.' }] });
    const r = await runCli(['run', 'add 2 and 3', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mcp-config', mcpConfig()], KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(body(0).tools!.map((t) => t.name)).toContain('mcp__everything__get-sum');
    expect(ofType(r.events, 'permission')).toEqual([expect.objectContaining({ tool: 'mcp__everything__get-sum', decision: 'allow' })]);
    expect(ofType(r.events, 'turn').map((e) => e.state)).toContain('mcpCall');
    expect(ofType(r.events, 'tool_result')).toEqual([expect.objectContaining({ id: 'toolu_sum', is_error: false })]);
    const answer = JSON.stringify(body(1).messages.at(-1));
    expect(answer).toContain('toolu_sum');
    expect(answer).toContain('The sum of 2 and 3 is 5');
    expect(r.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  }, 120_000);

  it('@server:uri brings the resource to the model; /mcp__server__prompt becomes the prompt', async () => {
    // The answer, the gatekeeper's lesson call after it (nothing to keep), the second run's answer.
    server.enqueue({ blocks: [{ type: 'text', text: 'Read it.' }] }, { blocks: [{ type: 'text', text: 'NONE' }] }, { blocks: [{ type: 'text', text: 'Sunny.' }] });
    const config = mcpConfig();
    const r = await run('What does @everything:demo://resource/static/document/architecture.md say?', '--mcp-config', config);
    expect((await r.exit).code, r.stderr()).toBe(0);
    const first = JSON.stringify(body(0).messages[0]);
    expect(first).toContain('@everything:demo://resource/static/document/architecture.md say?');
    expect(first).toContain('<mcp-resource server=\\"everything\\" uri=\\"demo://resource/static/document/architecture.md\\">');
    expect(r.stderr()).toContain('keel: MCP read everything:demo://resource/static/document/architecture.md');
    const p = await run('/mcp__everything__args-prompt Paris', '--mcp-config', config);
    expect((await p.exit).code, p.stderr()).toBe(0);
    expect(JSON.stringify(body(2).messages[0])).toContain("What's weather in Paris?");
  }, 120_000);

  it('without a rule a headless run denies the call and tells the model why', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_echo', name: 'mcp__everything__echo', input: { message: 'hi' } }] }, { blocks: [{ type: 'text', text: 'Denied.' }] });
    const r = await run('echo', '--mcp-config', mcpConfig());
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(ofType(r.events, 'permission').map((e) => e.decision)).toEqual(['ask', 'deny']);
    expect(ofType(r.events, 'turn').map((e) => e.state)).not.toContain('mcpCall');
    expect(JSON.stringify(body(1).messages.at(-1))).toMatch(/Permission denied: Keel would ask first \(calling an MCP tool\) and a headless run has no one to ask; --mode bypassPermissions, or the allow rule \\"mcp__everything__echo\\"/);
  }, 120_000);

  it('an image from an MCP tool is sent to the model as an image block; progress shows as tool output', async () => {
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_img', name: 'mcp__everything__get-tiny-image', input: {} }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_long', name: 'mcp__everything__trigger-long-running-operation', input: { duration: 1, steps: 2 } }] },
      { blocks: [{ type: 'text', text: 'A tiny image.' }] },
    );
    const r = await run('show me', '--mcp-config', mcpConfig(), '--mode', 'bypassPermissions');
    expect((await r.exit).code, r.stderr()).toBe(0);
    const result = (body(1).messages.at(-1)!.content as { type: string; content: unknown }[]).find((b) => b.type === 'tool_result')!;
    expect(result.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'image', source: expect.objectContaining({ media_type: 'image/png' }) })]));
    expect(ofType(r.events, 'tool_output').filter((e) => e.id === 'toolu_long').map((e) => e.chunk)).toContain('progress 1/2\n');
    // The tool card's output shows what came back, the image named; the image itself comes as a
    // checked data: URL for the card.
    expect(ofType(r.events, 'tool_output').filter((e) => e.id === 'toolu_img').map((e) => e.chunk).join('')).toMatch(/\[image image\/png, about \d+ KB, sent to the model; shown below\]/);
    expect(ofType(r.events, 'tool_images').find((e) => e.id === 'toolu_img')?.images).toEqual([{ src: expect.stringMatching(/^data:image\/png;base64,iVBOR/), alt: expect.stringContaining('image/png') }]);
  }, 120_000);

  it('a project .mcp.json server that is not approved is not started, and the run says how to approve it', async () => {
    writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
    server.enqueue({ blocks: [{ type: 'text', text: 'No tools.' }] });
    const r = await run('hi');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stderr()).toMatch(/MCP server everything: .*server-everything.*waits for approval/);
    expect(r.stderr()).toContain('keel trust approve');
    // Said once on stderr (the trust notice), and as the server's own mcp line in stream-json.
    expect(r.stderr().split('\n').filter((l) => /MCP server "?everything\b/.test(l)), r.stderr()).toHaveLength(1);
    expect(r.events.filter((e) => e.type === 'mcp' && e.server === 'everything')).toEqual([
      expect.objectContaining({ status: 'not_approved', message: expect.stringContaining('keel trust approve') }),
    ]);
    expect(body(0).tools!.map((t) => t.name).filter((n) => n.startsWith('mcp__'))).toEqual([]);
  }, 60_000);

  it('a --mcp-config that cannot be read is bad usage', async () => {
    const r = await run('hi', '--mcp-config', join(workspace, 'nope.json'));
    expect((await r.exit).code).toBe(2);
    expect(r.stderr()).toContain('--mcp-config');
    expect(r.stderr()).toContain(`--mcp-config ${join(workspace, 'nope.json')}: no such file`);
    expect(server.requests).toHaveLength(0);
  });
});

describe('keel mcp', () => {
  it('add, list, tools, revoke, remove', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-mcp-home-'));
    let r = await keelMcp(home, 'add', '--workspace', workspace, 'everything', '--', process.execPath, EVERYTHING, 'stdio');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(workspace, '.mcp.json'), 'utf8'))).toEqual({ mcpServers: { everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] } } });
    // The person typed the command: approved as written.
    r = await keelMcp(home, 'list', '--json', '--workspace', workspace);
    expect(r.code, r.stderr).toBe(0);
    const listed = JSON.parse(r.stdout) as { servers: { name: string; phase: string; approval: string }[] };
    expect(listed.servers).toEqual([expect.objectContaining({ name: 'everything', phase: 'ready', approval: 'approved' })]);
    r = await keelMcp(home, 'tools', 'everything', '--workspace', workspace);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('mcp__everything__get-sum');
    r = await keelMcp(home, 'revoke', 'everything', '--workspace', workspace);
    expect(r.code).toBe(0);
    r = await keelMcp(home, 'list', '--workspace', workspace);
    expect(r.stdout).toContain('everything  [project, stdio]  waits for the approval of this workspace — review: keel trust show; approve: keel trust approve');
    r = await keelMcp(home, 'tools', 'everything', '--workspace', workspace);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('waits for the approval of this workspace');
    r = await keelMcp(home, 'approve', 'everything', '--workspace', workspace);
    expect(r.stdout).toContain(`Approved for ${workspace}, exactly as it is now:`);
    expect(r.stdout).toMatch(/MCP server everything: .*server-everything/);
    r = await keelMcp(home, 'remove', 'everything', '--workspace', workspace);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(workspace, '.mcp.json'), 'utf8'))).toEqual({ mcpServers: {} });
    r = await keelMcp(home, 'remove', 'everything', '--workspace', workspace);
    expect(r.code).toBe(1);
  }, 120_000);

  it('add --transport http writes a URL entry with headers to the user file', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-mcp-home-'));
    const r = await keelMcp(home, 'add', '--transport', 'http', '--scope', 'user', '-H', 'Authorization: Bearer ${TOKEN}', 'web', 'https://example.com/mcp');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'mcp.json'), 'utf8'))).toEqual({ mcpServers: { web: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } } } });
  });

  it('bad usage exits 2 with a message', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-mcp-home-'));
    for (const a of [['add'], ['add', 'x'], ['add', '--transport', 'http', 'x', 'not-a-url'], ['add', '--transport', 'carrier-pigeon', 'x', 'y'], ['frobnicate'], ['list', '--bogus']]) {
      const r = await keelMcp(home, ...a, '--workspace', workspace);
      expect(r.code, a.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^keel mcp( [a-z]+)?: [^\n]+ \(see keel mcp( [a-z]+)? --help\)\n$/);
    }
  });
});

describe('keel mcp login / logout (OAuth, a real loopback authorization server)', () => {
  it('a run says how to sign in; login prints the address, the browser comes back, the token is stored 0600; the run then calls the tool; logout forgets it', async () => {
    const oauth = await startOAuthMcpServer();
    try {
      const home = mkdtempSync(join(tmpdir(), 'keel-mcp-home-'));
      writeFileSync(join(home, 'mcp.json'), JSON.stringify({ mcpServers: { remote: { type: 'http', url: oauth.url } } }));
      const runIn = (prompt: string) =>
        runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions'], KEY, home);

      server.enqueue({ blocks: [{ type: 'text', text: 'No tools.' }] });
      let r = await runIn('hi');
      expect((await r.exit).code, r.stderr()).toBe(0);
      expect(r.stderr()).toContain('MCP server "remote" needs you to sign in');
      expect(r.stderr()).toContain('keel mcp login remote');
      expect(oauth.counts.registrations).toBe(0);

      // The person: runs keel mcp login, opens the printed address in a browser.
      const cli = await cliBundle();
      const child = spawn(process.execPath, [cli, 'mcp', 'login', 'remote', '--workspace', workspace], { env: { PATH: process.env.PATH, HOME: home, KEEL_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const address = await new Promise<string>((res, rej) => {
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          stdout += d;
          const m = /^ {2}(http:\/\/\S+)$/m.exec(stdout);
          if (m) res(m[1]!);
        });
        child.once('close', () => rej(new Error(`login ended before printing an address: ${stdout} ${stderr}`)));
      });
      expect(stdout).toContain('The MCP server "remote" (' + oauth.url + ') asks you to sign in.');
      expect(new URL(address).origin).toBe(oauth.issuer);
      await (await fetch(address)).text();
      const code = await new Promise<number | null>((res) => child.once('close', (c) => res(c)));
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('signed in to "remote"');
      expect(stdout).toContain('"remote" is ready: 1 tool');
      expect(statSync(join(home, 'mcp-oauth.json')).mode & 0o777).toBe(0o600);

      server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_who', name: 'mcp__remote__whoami', input: {} }] }, { blocks: [{ type: 'text', text: 'Done.' }] });
      r = await runIn('who am I?');
      expect((await r.exit).code, r.stderr()).toBe(0);
      expect(ofType(r.events, 'tool_result')).toEqual([expect.objectContaining({ id: 'toolu_who', is_error: false })]);
      // The request that carries the tool's result (a run may make other model requests too).
      const answered = server.requests.map((q) => JSON.stringify((q.body as Body).messages.at(-1))).find((m) => m.includes('toolu_who'));
      expect(answered).toMatch(/client [0-9a-f-]{36}/);

      const out = await keelMcp(home, 'logout', 'remote', '--workspace', workspace);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain('signed out of "remote"');
      const listed = await keelMcp(home, 'list', '--workspace', workspace);
      expect(listed.stdout).toContain('needs you to sign in — run: keel mcp login remote');
    } finally {
      await oauth.close();
    }
  }, 180_000);
});
