import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/** Claude Code settings and .mcp.json keys Keel does not use: said plainly, once, never silently ignored. */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });
const run = (...extra: string[]) =>
  runCli(['run', 'hi', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', ...extra], KEY, storage);

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-claude-settings-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-claude-settings-home-'));
});
afterEach(async () => {
  await server.close();
});

describe('Claude Code settings Keel does not use', () => {
  it('"model" and "statusLine" of .claude/settings.json get one notice; the run uses --model', async () => {
    mkdirSync(join(workspace, '.claude'), { recursive: true });
    writeFileSync(join(workspace, '.claude', 'settings.json'), JSON.stringify({ model: 'opus', statusLine: { type: 'command', command: 'echo hi' } }));
    server.enqueue(say('Hello.'));
    const r = await run();
    expect((await r.exit).code, r.stderr()).toBe(0);
    const notices = r.stderr().split('\n').filter((l) => l.includes('Keel ignores'));
    expect(notices).toEqual([
      'keel: .claude/settings.json: Keel ignores "model" (choose the model with --model or the keel.model setting) and "statusLine" (Keel has no status line; the chat header and keel status show the task)',
    ]);
    expect((server.requests[0]!.body as { model: string }).model).toBe('claude-test');
  });

  it('.mcp.json keys cwd, alwaysAllow and disabledTools are reported by keel mcp list and keel run', async () => {
    writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { fs: { command: 'node', args: ['-e', '1'], cwd: '/tmp', alwaysAllow: ['read'], disabledTools: ['write'] } } }));
    const list = await runCli(['mcp', 'list', '--workspace', workspace], {}, storage);
    expect((await list.exit).code, list.stderr()).toBe(0);
    expect(list.stderr()).toContain('server "fs": "cwd" is not supported by Keel and was ignored: the server starts in the workspace folder');
    expect(list.stderr()).toContain('server "fs": "alwaysAllow" is not supported by Keel and was ignored: allow a tool with a permission rule (mcp__fs__<tool>)');
    expect(list.stderr()).toContain('server "fs": "disabledTools" is not supported by Keel and was ignored: deny a tool with a permission rule (mcp__fs__<tool>)');

    server.enqueue(say('Hello.'));
    const r = await run();
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stderr()).toMatch(/MCP configuration .*\.mcp\.json: server "fs": "alwaysAllow" is not supported by Keel/);
    expect(ofType(r.events, 'mcp').filter((e) => e.status === 'config_problem').map((e) => String(e.message))).toEqual(
      expect.arrayContaining([expect.stringContaining('"cwd" is not supported'), expect.stringContaining('"disabledTools" is not supported')]),
    );
  });
});
