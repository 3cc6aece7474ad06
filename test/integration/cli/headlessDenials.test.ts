import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Issue 26 item 12: a headless `keel run` denies what would ask, and says what denied it — no one
 * to ask, not "the user" — in the text output, in stream-json and to the model; its advice names
 * a mode or allow rule that really allows the call, which the test checks by following it (`keel
 * permissions check` with that mode, or with that rule in the workspace's settings.local.json
 * once the workspace is approved with `keel trust approve`).
 */
let server: FakeModelServer;
let cli: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const FAULTY_MCP = resolve(__dirname, '../../fixtures/mcp/faultyServer.mjs');
const workspaces: string[] = [];

beforeAll(async () => {
  cli = await cliBundle();
  server = await startFakeModelServer();
}, 120_000);
afterAll(async () => {
  await server.close();
});

function workspace(): string {
  const ws = mkdtempSync(join(tmpdir(), 'keel-denials-'));
  writeFileSync(join(ws, 'notes.txt'), 'notes\n');
  workspaces.push(ws);
  return ws;
}

/** The tool result the model got for `id` (in its next request). */
function toldTheModel(id: string): string {
  for (const r of server.requests) {
    for (const m of (r.body as { messages?: { content: unknown }[] }).messages ?? []) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content as { type: string; tool_use_id?: string; content?: unknown }[]) if (b.type === 'tool_result' && b.tool_use_id === id) return JSON.stringify(b.content);
    }
  }
  throw new Error(`no tool result for ${id}`);
}

/** The person's own home for `keel permissions check` and `keel trust` (never the workspace: ~/.keel is not the workspace's .keel). */
const home = mkdtempSync(join(tmpdir(), 'keel-denials-home-'));
const asPerson = { PATH: process.env.PATH, HOME: home, KEEL_HOME: join(home, '.keel') };

async function check(ws: string, tool: string, input: Record<string, unknown>, mode: string): Promise<{ decision: string; reason: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, 'permissions', 'check', '--tool', tool, '--input', JSON.stringify(input), '--mode', mode, '--workspace', ws], { env: asPerson });
  return JSON.parse(stdout) as { decision: string; reason: string };
}

/** `keel trust approve` of `ws`, as the person runs it after reading what it approves. */
async function approve(ws: string): Promise<void> {
  await promisify(execFile)(process.execPath, [cli, 'trust', 'approve', '--workspace', ws], { env: asPerson });
}

const cases = [
  { what: 'a command in acceptEdits', tool: 'Bash', input: { command: 'touch made.txt' }, mode: 'acceptEdits', advisedMode: 'bypassPermissions', rule: 'Bash(touch:*)' },
  { what: 'an edit in default mode', tool: 'Write', input: { file_path: 'new.txt', content: 'x' }, mode: 'default', advisedMode: 'acceptEdits', rule: 'Edit(./new.txt)' },
] as const;

describe('headless denials say what denied them and what would allow the call', () => {
  it.each(cases)('$what', async ({ tool, input, mode, advisedMode, rule }) => {
    const ws = workspace();
    const id = `toolu_${tool}_${mode}`;
    server.enqueue({ blocks: [{ type: 'tool_use', id, name: tool, input }] }, { blocks: [{ type: 'text', text: 'It was refused.' }] });
    const common = ['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', ws, '--mode', mode, '--no-memory'];
    const json = await runCli(['run', 'do it', ...common, '--output-format', 'stream-json'], KEY);
    expect((await json.exit).code, json.stderr()).toBe(0);
    const denial = ofType(json.events, 'permission').find((e) => e.decision === 'deny');
    const reason = String(denial?.reason);
    // Who denied it: nobody was there to ask; never "the user".
    expect(reason).toMatch(/^Keel would ask first \(.+\) and a headless run has no one to ask; /);
    expect(reason).not.toMatch(/by the user|user denied/i);
    // The advice: the least permissive mode that allows it, and the allow rule.
    expect(reason).toContain(`--mode ${advisedMode}`);
    expect(reason).toContain(`"${rule}" in the workspace's .keel/settings.local.json once you approve it (keel trust approve)`);
    if (advisedMode === 'bypassPermissions') expect(reason).not.toContain('--mode acceptEdits');
    // The model is told the same, not that the user refused.
    expect(toldTheModel(id)).toContain('Permission denied: Keel would ask first');
    expect(toldTheModel(id)).not.toMatch(/user denied/i);

    // In text mode: the same words on stderr, once (not again as the tool's result).
    server.enqueue({ blocks: [{ type: 'tool_use', id: `${id}_2`, name: tool, input }] }, { blocks: [{ type: 'text', text: 'It was refused.' }] });
    const text = await runCli(['run', 'do it', ...common], KEY);
    expect((await text.exit).code, text.stderr()).toBe(0);
    expect(text.stderr().split('\n').filter((l) => l.includes('Keel would ask first'))).toEqual([`  ✗ permission denied for ${tool}: ${reason}`]);
    expect(text.stderr()).not.toMatch(/by the user/);

    // Following the advice really allows the call.
    expect((await check(ws, tool, input, advisedMode)).decision).toBe('allow');
    mkdirSync(join(ws, '.keel'), { recursive: true });
    writeFileSync(join(ws, '.keel', 'settings.local.json'), JSON.stringify({ permissions: { allow: [rule] } }));
    // A workspace's allow rule counts only once the person approved the workspace (docs/permissions.md, "Trust").
    expect((await check(ws, tool, input, mode)).decision).toBe('ask');
    await approve(ws);
    expect((await check(ws, tool, input, mode)).decision).toBe('allow');
  }, 120_000);

  it('an MCP tool in acceptEdits: bypassPermissions or an mcp__ allow rule, never acceptEdits', async () => {
    const ws = workspace();
    const config = join(ws, 'servers.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { faulty: { command: process.execPath, args: [FAULTY_MCP] } } }));
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_mcp', name: 'mcp__faulty__echo', input: { message: 'hi' } }] }, { blocks: [{ type: 'text', text: 'It was refused.' }] });
    const run = await runCli(['run', 'echo', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', ws, '--mode', 'acceptEdits', '--no-memory', '--mcp-config', config, '--output-format', 'stream-json'], KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    const reason = String(ofType(run.events, 'permission').find((e) => e.decision === 'deny')?.reason);
    expect(reason).toMatch(/^Keel would ask first \(calling an MCP tool\) and a headless run has no one to ask; --mode bypassPermissions, or the allow rule "mcp__faulty__echo"/);
    expect(reason).not.toContain('acceptEdits');
    expect(toldTheModel('toolu_mcp')).not.toMatch(/user denied/i);
    expect((await check(ws, 'mcp__faulty__echo', { message: 'hi' }, 'bypassPermissions')).decision).toBe('allow');
  });

  it('a call an ask rule asks about: no mode or rule would run it unattended, only a person', async () => {
    const ws = workspace();
    mkdirSync(join(ws, '.keel'));
    writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ permissions: { ask: ['Bash(git push:*)'] } }));
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_push', name: 'Bash', input: { command: 'git push origin main' } }] }, { blocks: [{ type: 'text', text: 'It was refused.' }] });
    const run = await runCli(['run', 'push', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', ws, '--mode', 'bypassPermissions', '--no-memory', '--output-format', 'stream-json'], KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    const reason = String(ofType(run.events, 'permission').find((e) => e.decision === 'deny')?.reason);
    expect(reason).toMatch(/^Keel would ask first \(.*Bash\(git push:\*\).*\) and a headless run has no one to ask; no mode or allow rule would run it without asking, so only a person can approve it$/);
  });
});
