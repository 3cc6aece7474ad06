import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, runCli } from './cliHarness';

/** Claude Code's PostToolUseFailure, SubagentStart and InstructionsLoaded hooks in keel run, in process and on a worker. */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-hook-events-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-hook-events-home-'));
});
afterEach(async () => {
  await server.close();
});

describe('more of Claude Code hook events', () => {
  it.each([['0'], ['1']])('fire with Claude Code fields (workers %s)', async (workers) => {
    const log = join(storage, 'events.log');
    const hook = join(storage, 'record.sh');
    writeFileSync(hook, `#!/bin/bash\njq -c '{e: .hook_event_name, tool: .tool_name, error: .error, agent: .agent_type, id: .agent_id, file: .file_path, type: .memory_type, reason: .load_reason}' >> ${log}\n`);
    chmodSync(hook, 0o755);
    const on = (matcher?: string) => [{ ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command: hook }] }];
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'KEEL.md'), 'Be brief.\n');
    writeFileSync(
      join(storage, '.keel', 'settings.json'),
      JSON.stringify({ hooks: { PostToolUseFailure: on('Bash'), PostToolUse: on('Bash'), SubagentStart: on(), InstructionsLoaded: on('session_start') } }),
    );
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_fail', name: 'Bash', input: { command: 'echo broken >&2; exit 3' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_task', name: 'Task', input: { description: 'look', prompt: 'say hi' } }] },
      say('hi from the sub-agent'),
      say('Done.'),
    );
    const r = await runCli(['run', 'try it', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', '--mode', 'bypassPermissions', '--workers', workers], KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(0);
    const events = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const named = (e: string) => events.filter((x) => x.e === e);
    // A failed Bash call is PostToolUseFailure's (with the error), not PostToolUse's.
    expect(named('PostToolUseFailure')).toEqual([expect.objectContaining({ tool: 'Bash', error: expect.stringContaining('broken') })]);
    expect(named('PostToolUse')).toEqual([]);
    expect(named('SubagentStart')).toEqual([expect.objectContaining({ agent: 'Task', id: expect.any(String) })]);
    // The person's KEEL.md, read into the parent's run and the sub-agent's.
    expect(named('InstructionsLoaded')[0]).toMatchObject({ file: join(storage, '.keel', 'KEEL.md'), type: 'User', reason: 'session_start' });
  });
});
