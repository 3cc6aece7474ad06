import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpHub } from '../../../src/core/mcp/hub';
import type { ToolResultContentBlock } from '../../../src/shared/domain/messages';
import { eventually, watchDir } from '../../unit/helpers/changes';
import { isAlive } from '../../unit/tools/helpers';
import { cliBundle } from './cliHarness';

/**
 * `keel mcp serve` as an MCP client sees it: the built CLI started over stdio (here by Keel's own
 * hub, an MCP client on the official SDK), its six tools listed, and every call decided by Keel's
 * permission engine for the workspace — what would ask is refused with the reason.
 */
let hubs: McpHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.map((h) => h.dispose()));
  hubs = [];
});
beforeAll(async () => {
  await cliBundle();
}, 120_000);

async function serve(mode: string, setup?: (ws: string) => void) {
  const workspace = mkdtempSync(join(tmpdir(), 'keel-serve-ws-'));
  mkdirSync(join(workspace, 'src'));
  writeFileSync(join(workspace, 'src', 'a.txt'), 'alpha\n');
  setup?.(workspace);
  const cli = await cliBundle();
  const spec = { transport: 'stdio' as const, command: process.execPath, args: [cli, 'mcp', 'serve', '--workspace', workspace, '--mode', mode], env: {} };
  const hub = new McpHub({ workspace, keelHome: mkdtempSync(join(tmpdir(), 'keel-serve-home-')), config: { servers: [{ name: 'keel', scope: 'user', source: 'test', template: spec, resolved: spec, problems: [] }], problems: [] } });
  hubs.push(hub);
  await hub.toolDefinitions();
  const call = async (tool: string, input: Record<string, unknown>) => {
    const out = await hub.callTool(`mcp__keel__${tool}`, input, { signal: new AbortController().signal });
    return { ...out, text: typeof out.content === 'string' ? out.content : (out.content as ToolResultContentBlock[]).map((b) => (b.type === 'text' ? b.text : '')).join('') };
  };
  return { hub, workspace, call };
}

describe('keel mcp serve', () => {
  it('lists Read, Write, Edit, Bash, Glob, Grep with their input schemas', async () => {
    const { hub } = await serve('default');
    const defs = await hub.toolDefinitions();
    expect(defs.map((d) => d.name).sort()).toEqual(['mcp__keel__Bash', 'mcp__keel__Edit', 'mcp__keel__Glob', 'mcp__keel__Grep', 'mcp__keel__Read', 'mcp__keel__Write']);
    expect(defs.find((d) => d.name === 'mcp__keel__Read')!.input_schema).toMatchObject({ type: 'object', properties: { file_path: expect.anything() } });
    expect(hub.status()[0]!.serverInfo).toEqual({ name: 'keel', version: expect.any(String) });
  }, 60_000);

  it('default mode: reads in the workspace run; a write or a read outside is refused with the reason', async () => {
    const { call, workspace } = await serve('default');
    expect((await call('Read', { file_path: 'src/a.txt' })).text).toContain('alpha');
    expect((await call('Glob', { pattern: 'src/*.txt' })).text).toContain('a.txt');
    const write = await call('Write', { file_path: 'src/b.txt', content: 'beta' });
    expect(write.isError).toBe(true);
    expect(write.text).toMatch(/^Permission denied: Keel would ask first \(.+\) and keel mcp serve has nobody to ask; --mode acceptEdits, or the allow rule "Edit\(.+\)" in the workspace's .keel\/settings.local.json once you approve it \(keel trust approve\), would allow it\.$/);
    expect(existsSync(join(workspace, 'src', 'b.txt'))).toBe(false);
    const outside = await call('Read', { file_path: '/etc/passwd' });
    expect(outside).toMatchObject({ isError: true, text: expect.stringContaining('Permission denied') });
    const rm = await call('Bash', { command: `rm -rf ${join(workspace, 'src')}` });
    expect(rm.isError).toBe(true);
    expect(existsSync(join(workspace, 'src', 'a.txt'))).toBe(true);
  }, 60_000);

  it('acceptEdits mode writes and edits in the workspace; a deny rule still wins in bypassPermissions', async () => {
    const edits = await serve('acceptEdits');
    expect((await edits.call('Write', { file_path: 'src/b.txt', content: 'beta\n' })).isError).toBe(false);
    expect(readFileSync(join(edits.workspace, 'src', 'b.txt'), 'utf8')).toBe('beta\n');
    expect((await edits.call('Edit', { file_path: 'src/b.txt', old_string: 'beta', new_string: 'gamma' })).isError).toBe(false);
    expect(readFileSync(join(edits.workspace, 'src', 'b.txt'), 'utf8')).toBe('gamma\n');

    const bypass = await serve('bypassPermissions', (ws) => {
      mkdirSync(join(ws, '.keel'));
      writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm:*)'] } }));
    });
    const rm = await bypass.call('Bash', { command: 'rm -rf src' });
    expect(rm).toMatchObject({ isError: true, text: expect.stringContaining('Permission denied: denied by Bash(rm:*)') });
    expect(existsSync(join(bypass.workspace, 'src', 'a.txt'))).toBe(true);
    expect((await bypass.call('Bash', { command: 'echo served-ok' })).text).toContain('served-ok');
  }, 90_000);

  it('plan mode refuses changes before any rule is read; invalid input is an error result', async () => {
    const { call } = await serve('plan');
    expect((await call('Write', { file_path: 'src/c.txt', content: 'x' })).text).toBe('Permission denied: plan mode allows read-only tools only.');
    const bad = await call('Read', { nope: 1 });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('invalid input for tool "Read"');
  }, 60_000);
});

describe('keel mcp serve ends without leaving a command behind', () => {
  // The client (the official SDK's, as any MCP client would) starts a Bash call whose command and
  // child ignore SIGTERM, then goes away in one of the ways clients do.
  it.each([
    ['SIGTERM', (t: StdioClientTransport): void => void process.kill(t.pid!, 'SIGTERM')],
    ['SIGINT', (t: StdioClientTransport): void => void process.kill(t.pid!, 'SIGINT')],
    ['the client closing its end', (t: StdioClientTransport): void => void t.close()],
  ] as const)('%s mid-call: the server exits and the command dies with it', async (_how, leave) => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-serve-ws-'));
    const pidfile = join(workspace, 'sleep.pid');
    const cli = await cliBundle();
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', 'serve', '--workspace', workspace, '--mode', 'bypassPermissions'], env: { PATH: process.env.PATH ?? '', HOME: workspace }, stderr: 'ignore' });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(transport);
    const server = transport.pid!;
    const call = client.callTool({ name: 'Bash', arguments: { command: `trap '' TERM; sleep 120 & echo $! > ${pidfile}; wait` } }).catch((err: unknown) => err);
    await eventually(() => existsSync(pidfile) && readFileSync(pidfile, 'utf8').trim() !== '', () => 'the command never started', watchDir(workspace));
    const sleeper = Number(readFileSync(pidfile, 'utf8').trim());
    expect(isAlive(sleeper)).toBe(true);
    leave(transport);
    await eventually(() => !isAlive(server), () => `keel mcp serve (pid ${server}) did not exit`);
    await eventually(() => !isAlive(sleeper), () => `sleep ${sleeper} outlived keel mcp serve`);
    await client.close().catch(() => undefined);
    await call;
  }, 90_000);
});
