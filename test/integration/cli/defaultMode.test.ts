import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * The settings files' `defaultMode` in `keel run` as a person meets it: the user's own file sets
 * the starting mode, a repository's file may only make it stricter (a looser one is ignored with a
 * notice), `--mode` wins. What the run did is seen in its permission events and the workspace.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test', KEEL_MEMORY: 'off' };
const run = (prompt: string, ...extra: string[]) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', ...extra], KEY, storage);

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-defaultmode-cli-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-defaultmode-cli-home-'));
});
afterEach(async () => {
  await server.close();
});

function settings(dir: string, defaultMode: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'settings.json'), JSON.stringify({ permissions: { defaultMode } }));
}
const write = (id: string, file: string) => ({ blocks: [{ type: 'tool_use' as const, id, name: 'Write', input: { file_path: file, content: 'x\n' } }] });
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

describe('keel run and the settings files\' defaultMode', () => {
  it("a repository's bypassPermissions is ignored with a notice: the write is asked (headless: denied)", async () => {
    settings(join(workspace, '.claude'), 'bypassPermissions');
    server.enqueue(write('toolu_w', 'made.txt'), say('Refused.'));
    const r = await run('make a file');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(r.stderr()).toMatch(/\.claude\/settings\.json: defaultMode "bypassPermissions" ignored: a workspace settings file may only make the mode stricter than "default"/);
    expect(ofType(r.events, 'permission')[0]).toMatchObject({ tool: 'Write', decision: 'ask' });
    expect(existsSync(join(workspace, 'made.txt'))).toBe(false);
  });

  it("the user's acceptEdits applies; a repository's plan tightens it; --mode wins over both", async () => {
    settings(join(storage, '.keel'), 'acceptEdits');
    server.enqueue(write('toolu_a', 'a.txt'), say('Written.'));
    const user = await run('write a');
    expect((await user.exit).code, user.stderr()).toBe(0);
    expect(existsSync(join(workspace, 'a.txt'))).toBe(true);

    settings(join(workspace, '.keel'), 'plan');
    server.enqueue(write('toolu_b', 'b.txt'), say('Plan mode refused it.'));
    const tightened = await run('write b');
    expect((await tightened.exit).code, tightened.stderr()).toBe(0);
    expect(ofType(tightened.events, 'permission')[0]).toMatchObject({ tool: 'Write', decision: 'deny', reason: expect.stringContaining('plan mode') });
    expect(existsSync(join(workspace, 'b.txt'))).toBe(false);
    expect(tightened.stderr()).not.toContain('ignored');

    server.enqueue(write('toolu_c', 'c.txt'), say('Written.'));
    const chosen = await run('write c', '--mode', 'acceptEdits');
    expect((await chosen.exit).code, chosen.stderr()).toBe(0);
    expect(existsSync(join(workspace, 'c.txt'))).toBe(true);
  });

  it("plan mode from the user's settings file uses the plan model ($KEEL_PLAN_MODEL), as --mode plan does", async () => {
    settings(join(storage, '.keel'), 'plan');
    server.enqueue(say('A plan.'));
    const fromFile = await runCli(['run', 'plan it', '--provider', 'anthropic', '--base-url', server.url, '--workspace', workspace, '--output-format', 'stream-json'], { ...KEY, KEEL_PLAN_MODEL: 'opus', KEEL_MODEL: 'haiku' }, storage);
    expect((await fromFile.exit).code, fromFile.stderr()).toBe(0);
    expect((server.requests[0]!.body as { model: string }).model).toBe('claude-opus-5-5');

    // --mode default wins over the file: the ordinary model.
    server.enqueue(say('Done.'));
    const chosen = await runCli(['run', 'do it', '--provider', 'anthropic', '--base-url', server.url, '--workspace', workspace, '--mode', 'default', '--output-format', 'stream-json'], { ...KEY, KEEL_PLAN_MODEL: 'opus', KEEL_MODEL: 'haiku' }, storage);
    expect((await chosen.exit).code, chosen.stderr()).toBe(0);
    expect((server.requests[1]!.body as { model: string }).model).toBe('claude-haiku-5-5');
  });
});
