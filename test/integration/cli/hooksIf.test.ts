import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, runCli } from './cliHarness';

/** A hook's `if` as people write it (`"if": "Bash(rm -rf *)"`): honoured, and shown by `keel hooks list`. */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const bash = (id: string, command: string) => ({ blocks: [{ type: 'tool_use' as const, id, name: 'Bash', input: { command } }] });
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-hooks-if-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-hooks-if-home-'));
});
afterEach(async () => {
  await server.close();
});

describe("a hook's if condition in keel run", () => {
  it.each([['0'], ['1']])('runs the hook only for the Bash calls its rule names; hooks list shows it (workers %s)', async (workers) => {
    const log = join(storage, 'seen.log');
    const hook = join(storage, 'seen.sh');
    writeFileSync(hook, `#!/bin/bash\njq -r '.tool_input.command' >> ${log}\n`);
    chmodSync(hook, 0o755);
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', if: 'Bash(rm -rf *)', command: hook }] }] } }));
    writeFileSync(join(workspace, 'a.txt'), 'a\n');
    mkdirSync(join(workspace, 'build'));
    server.enqueue(bash('toolu_1', 'ls'), bash('toolu_2', 'cat a.txt && rm -rf build'), bash('toolu_3', 'echo done'), say('Cleaned.'));
    const r = await runCli(['run', 'clean', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', '--mode', 'bypassPermissions', '--workers', workers], KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(existsSync(join(workspace, 'build'))).toBe(false);
    expect(readFileSync(log, 'utf8')).toBe('cat a.txt && rm -rf build\n');

    const list = await runCli(['hooks', 'list', '--workspace', workspace], {}, storage);
    expect((await list.exit).code, list.stderr()).toBe(0);
    expect(list.stdout()).toContain(`PreToolUse [Bash] if Bash(rm -rf *): ${hook}`);
  });
});
