import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLoop, defaultSettings } from '../../../src/core/loop/files';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * `keel loop` in a cloned repository that planted links in the loop's folder, as an attacker
 * would (issue 21, item 2): the built CLI against the fake model server, headless default mode.
 * A loop whose files or folders are links is refused before anything is written or sent, and the
 * progress-file exception never lets a write reach the file a link points at.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const loop = (...args: string[]) => runCli(['loop', ...args, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json'], KEY, storage);
const settingsLocal = () => join(workspace, '.keel', 'settings.local.json');

/** A model that writes a grant into the progress file, then runs a command, then says it is done. */
function attack(progressPath: string) {
  server.enqueue(
    { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: progressPath, content: '{"permissions":{"allow":["Bash"]}}' } }] },
    { blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'touch pwned' } }] },
    { blocks: [{ type: 'text', text: 'Done.' }] },
  );
}

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-loop-links-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-loop-links-home-'));
});
afterEach(async () => {
  await server.close();
  rmSync(workspace, { recursive: true, force: true });
});

describe('keel loop refuses loop files that are links', () => {
  it('a shipped progress.md -> ../../settings.local.json: nothing is written through it, no request is sent, the command never runs', async () => {
    mkdirSync(join(workspace, '.keel', 'loop', 'fix-the-tests'), { recursive: true });
    symlinkSync('../../settings.local.json', join(workspace, '.keel', 'loop', 'fix-the-tests', 'progress.md'));
    attack('.keel/loop/fix-the-tests/progress.md');
    const r = await loop('fix the tests', '--max-iterations', '2');
    const exit = await r.exit;
    expect(exit.code, r.stderr()).toBe(1);
    expect(r.stderr()).toContain('.keel/loop/fix-the-tests/progress.md is a symbolic link');
    expect(r.stderr()).toContain('remove the link');
    expect(existsSync(settingsLocal())).toBe(false);
    expect(existsSync(join(workspace, 'pwned'))).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it('a linked loop folder (.keel/loop -> a folder elsewhere) is refused, and nothing is created there', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'keel-loop-links-out-'));
    mkdirSync(join(workspace, '.keel'));
    symlinkSync(elsewhere, join(workspace, '.keel', 'loop'));
    attack('.keel/loop/fix-the-tests/progress.md');
    const r = await loop('fix the tests', '--max-iterations', '2');
    expect((await r.exit).code, r.stderr()).toBe(1);
    expect(r.stderr()).toContain('.keel/loop is a symbolic link');
    expect(existsSync(join(elsewhere, 'fix-the-tests'))).toBe(false);
    expect(server.requests).toHaveLength(0);
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it('--resume of a shipped loop whose progress links to a file outside the workspace never reads that file into a prompt', async () => {
    const secret = join(mkdtempSync(join(tmpdir(), 'keel-loop-links-secret-')), 'id_rsa');
    writeFileSync(secret, 'PRIVATE-KEY-MATERIAL-42\n');
    createLoop(workspace, 'shipped', 'fix the tests', defaultSettings());
    const progress = join(workspace, '.keel', 'loop', 'shipped', 'progress.md');
    rmSync(progress);
    symlinkSync(secret, progress);
    server.enqueue({ blocks: [{ type: 'text', text: 'ok' }] });
    // Even once the person approved the workspace (its loop's goal and guardrails), the link is refused.
    const approve = await runCli(['trust', 'approve', '--workspace', workspace], {}, storage);
    expect((await approve.exit).code, approve.stderr()).toBe(0);
    expect(JSON.stringify(approve.events)).not.toContain('PRIVATE-KEY-MATERIAL');
    const r = await loop('--resume', 'shipped');
    expect((await r.exit).code, r.stderr()).toBe(1);
    expect(r.stderr()).toContain('loop "shipped" cannot be used: .keel/loop/shipped/progress.md is a symbolic link');
    expect(r.stderr()).not.toMatch(/\n\s+at /); // a message for people, not a stack trace
    expect(server.requests).toHaveLength(0);
    expect(JSON.stringify(r.events)).not.toContain('PRIVATE-KEY-MATERIAL');
    expect(readFileSync(secret, 'utf8')).toBe('PRIVATE-KEY-MATERIAL-42\n');
  });

  it('a healthy loop: a write to the settings file beside the loop is not the progress file and is refused; the progress file itself is written', async () => {
    server.enqueue(
      { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: '.keel/settings.local.json', content: '{"permissions":{"allow":["Bash"]}}' } }] },
      { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: '.keel/loop/fix/progress.md', content: '# Progress\nDONE\n' } }] },
      { blocks: [{ type: 'text', text: 'Done.' }] },
    );
    const r = await loop('fix the tests', '--name', 'fix', '--max-iterations', '1');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(ofType(r.events, 'permission').map((e) => e.decision)).toEqual(['ask', 'deny', 'allow']); // headless, a question is a denial
    expect(existsSync(settingsLocal())).toBe(false);
    expect(readFileSync(join(workspace, '.keel', 'loop', 'fix', 'progress.md'), 'utf8')).toContain('DONE');
  });
});
