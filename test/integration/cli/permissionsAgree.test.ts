import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * `keel permissions check` tells the truth: for a table of tool calls, in every mode, it answers
 * what a real `keel run` decides (a scripted model makes every call of the table in one turn;
 * headless, a call that would ask shows a `permission` event `ask` and is then denied). Both read
 * the same workspace settings and the same (empty) home.
 */
const run$ = promisify(execFile);
const MODES: PermissionMode[] = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'];

type Call = { tool: string; input: Record<string, unknown> };
const TABLE: Call[] = [
  ...[
    'git status',
    'ls -la src',
    'cat src/a.txt | head -1',
    'touch made.txt',
    'touch other.txt',
    'rm -rf src',
    'ls; rm -rf src',
    'timeout 5 rm -rf src',
    'git push origin main',
    'cat /etc/hostname',
    'echo hi > notes.txt',
    'echo x > .keel/settings.local.json',
    'curl http://127.0.0.1:9/',
    'printenv',
    'env -iu ls rm -rf src',
    'sort -o sorted.txt src/a.txt',
  ].map((command) => ({ tool: 'Bash', input: { command } })),
  { tool: 'Bash', input: {} },
  { tool: 'Write', input: { file_path: 'src/new.txt', content: 'x' } },
  { tool: 'Write', input: { file_path: 'README.md', content: 'x' } },
  { tool: 'Write', input: { file_path: '.keel/settings.local.json', content: '{"permissions":{"allow":["Bash"]}}' } },
  { tool: 'Read', input: { file_path: 'src/a.txt' } },
  { tool: 'Read', input: { file_path: 'secrets/key.txt' } },
  { tool: 'Read', input: { file_path: '/etc/hostname' } },
  { tool: 'Grep', input: { pattern: 'x', path: 'secrets' } },
  { tool: 'Grep', input: { pattern: 'hello' } },
];

let server: FakeModelServer;
let home: string;

beforeAll(async () => {
  await cliBundle();
  server = await startFakeModelServer();
  home = mkdtempSync(join(tmpdir(), 'keel-agree-home-'));
}, 120_000);
afterAll(async () => {
  await server.close();
});

function workspace(): string {
  const ws = mkdtempSync(join(tmpdir(), 'keel-agree-ws-'));
  for (const d of ['src', 'secrets', '.keel']) mkdirSync(join(ws, d));
  writeFileSync(join(ws, 'src', 'a.txt'), 'hello\n');
  writeFileSync(join(ws, 'secrets', 'key.txt'), 'not for reading\n');
  writeFileSync(
    join(ws, '.keel', 'settings.json'),
    JSON.stringify({
      permissions: {
        allow: ['Bash(git status)', 'Bash(ls:*)', 'Bash(touch made.txt)', 'Bash(echo:*)', 'Bash(sort:*)', 'Edit(./src/**)'],
        deny: ['Bash(rm:*)', 'Bash(curl:*)', 'Read(./secrets/**)'],
        ask: ['Bash(git push:*)'],
      },
    }),
  );
  return ws;
}

/** What `keel permissions check` answers for each call of the table, in order. */
async function checked(ws: string, mode: PermissionMode): Promise<string[]> {
  const cli = await cliBundle();
  const tools = [...new Set(TABLE.map((c) => c.tool))];
  const answers = new Map<string, { decision: string; reason: string }[]>();
  await Promise.all(
    tools.map(async (tool) => {
      const inputs = TABLE.filter((c) => c.tool === tool).flatMap((c) => ['--input', JSON.stringify(c.input)]);
      const { stdout } = await run$(process.execPath, [cli, 'permissions', 'check', '--tool', tool, ...inputs, '--workspace', ws, '--home', home, '--mode', mode], { env: { PATH: process.env.PATH, HOME: home } });
      answers.set(tool, stdout.trim().split('\n').map((l) => JSON.parse(l) as { decision: string; reason: string }));
    }),
  );
  return TABLE.map((c) => {
    const a = answers.get(c.tool)!.shift()!;
    return a.decision === 'deny' && a.reason.startsWith('invalid call') ? 'invalid' : a.decision;
  });
}

/** What a real headless run decides for each call: `ask` when it asked (then denied), else its decision. */
async function ran(ws: string, mode: PermissionMode): Promise<string[]> {
  server.enqueue({ blocks: TABLE.map((c, i) => ({ type: 'tool_use' as const, id: `toolu_${i}`, name: c.tool, input: c.input })) }, { blocks: [{ type: 'text', text: 'Done.' }] });
  const run = await runCli(['run', 'try everything', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', ws, '--output-format', 'stream-json', '--mode', mode], {
    ANTHROPIC_API_KEY: 'sk-test-key-agreement',
    HOME: home,
  });
  const { code } = await run.exit;
  expect(code, run.stderr()).toBe(0);
  const permissions = ofType(run.events, 'permission');
  return TABLE.map((_, i) => {
    const mine = permissions.filter((e) => e.toolCallId === `toolu_${i}`);
    if (mine.some((e) => e.decision === 'ask')) return 'ask';
    return (mine[0]?.decision as string | undefined) ?? 'invalid';
  });
}

describe('keel permissions check agrees with keel run', () => {
  it.each(MODES)('in %s mode', async (mode) => {
    const [check, real] = await Promise.all([checked(workspace(), mode), ran(workspace(), mode)]);
    const rows = TABLE.map((c, i) => `${c.tool} ${JSON.stringify(c.input)}: check ${check[i]}, run ${real[i]}`);
    expect(check, rows.join('\n')).toEqual(real);
    // The table means something in this mode: it holds more than one kind of answer.
    expect(new Set(real).size, rows.join('\n')).toBeGreaterThan(1);
  }, 180_000);
});
