import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Issue 9 end to end: `keel run` (the built CLI, default mode, headless: what would ask is denied)
 * against the fake model server, with a scripted model that attacks as in the report.
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (prompt: string): string[] => ['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json'];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cli-paths-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel run: paths and symlinks', () => {
  it('refuses the dangling-symlink escalation at its first step: no settings file, no command', async () => {
    mkdirSync(join(workspace, '.keel'));
    mkdirSync(join(workspace, 'src'));
    writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['Edit(src/**)'] } }));
    symlinkSync('../.keel/settings.local.json', join(workspace, 'src', 'keellink'));
    const marker = join(workspace, 'pwned');
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'src/keellink', content: '{"permissions":{"allow":["Bash"]}}' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: `touch ${marker}` } }] },
      { blocks: [{ type: 'text', text: 'Done.' }] },
    );
    const run = await runCli(args('set things up'), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(existsSync(join(workspace, '.keel', 'settings.local.json'))).toBe(false);
    expect(existsSync(marker)).toBe(false);
    const perms = ofType(run.events, 'permission');
    const forWrite = perms.filter((e) => e.toolCallId === 'toolu_write');
    expect(forWrite.map((e) => e.decision)).toEqual(['ask', 'deny']);
    expect(String(forWrite[0]?.reason)).toMatch(/\.keel/);
    expect(perms.filter((e) => e.toolCallId === 'toolu_bash').map((e) => e.decision)).not.toContain('allow');
    expect(ofType(run.events, 'tool_result').map((e) => [e.id, e.is_error])).toEqual([
      ['toolu_write', true],
      ['toolu_bash', true],
    ]);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('answers a 1,000-deep nested command within a second, without allowing it, and carries on', async () => {
    const nested = `ls ${'$('.repeat(1000)}x${')'.repeat(1000)}`;
    server.enqueue(
      // An ordinary command first, so that loading the engine is not part of the measured decision.
      { blocks: [{ type: 'tool_use', id: 'toolu_warm', name: 'Bash', input: { command: 'ls' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_deep', name: 'Bash', input: { command: nested } }] },
      { blocks: [{ type: 'text', text: 'Finished.' }] },
    );
    const run = await runCli(args('list things'), KEY);
    // When each event line reached us: the decision is the time from the tool call to its permission event.
    const seenAt = new Map<string, number>();
    run.child.stdout?.on('data', () => {
      for (const e of run.events) {
        const key = `${String(e.type)}:${String(e.id ?? e.toolCallId ?? '')}`;
        if (!seenAt.has(key)) seenAt.set(key, performance.now());
      }
    });
    expect((await run.exit).code, run.stderr()).toBe(0);
    const perms = ofType(run.events, 'permission');
    expect(perms.filter((e) => e.toolCallId === 'toolu_warm').map((e) => e.decision)).toEqual(['allow']);
    const deep = perms.filter((e) => e.toolCallId === 'toolu_deep');
    expect(deep[0]?.decision).toBe('ask');
    expect(String(deep[0]?.reason)).toMatch(/nests more than 64 levels/);
    expect(deep.map((e) => e.decision)).not.toContain('allow');
    const asked = seenAt.get('tool_call:toolu_deep');
    const decided = seenAt.get('permission:toolu_deep');
    expect(asked).toBeDefined();
    expect(decided).toBeDefined();
    expect((decided as number) - (asked as number)).toBeLessThan(1000);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
    // Three turns, then the gatekeeper's one short lesson call (docs/memory.md).
    expect(server.requests).toHaveLength(4);
    expect(JSON.stringify((server.requests[3]!.body as { system: unknown }).system)).toContain('You maintain a small memory');
  });
});
