import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../../fixtures/fake-model-server';
import { cliBundle, runCli } from './cliHarness';
import { sourceCorpus } from '../../fixtures/sourceCorpus';

/**
 * The background recompaction of a large file's first before-image (docs/persistence.md,
 * "Checkpoints"), as a person meets it: `keel run` edits a 400 KB file of code in a plain folder,
 * is killed -9 the moment its rewrite of the pack begins, and every step still rewinds exactly;
 * what the kill left beside the pack is removed by the next Keel that writes the task's
 * checkpoints.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test', KEEL_MEMORY: 'off' };

const run = (prompt: string) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions'], KEY, storage);
const tasks = (...args: string[]) => runCli(['tasks', ...args], KEY, storage);
const tool = (id: string, name: string, input: Record<string, unknown>): FakeTurn => ({ blocks: [{ type: 'tool_use', id, name, input }] });
const say = (text: string): FakeTurn => ({ blocks: [{ type: 'text', text }] });

async function finished(r: Awaited<ReturnType<typeof runCli>>): Promise<{ code: number | null; out: string; err: string }> {
  const { code } = await r.exit;
  return { code, out: r.stdout(), err: r.stderr() };
}

/** 400 KB of this repository's code: what a large source file compresses like. */
function code(): string {
  return sourceCorpus().slice(0, 400_000);
}

function leftovers(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.recompact')) found.push(p);
    }
  };
  walk(join(storage, 'tasks'));
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  storage = mkdtempSync(join(tmpdir(), 'keel-rc-store-'));
  workspace = mkdtempSync(join(tmpdir(), 'keel-rc-ws-'));
});
afterEach(async () => {
  await server.close();
});

describe('recompaction of a large before-image', () => {
  it('a kill -9 as the pack is being rewritten leaves every step restorable exactly', async () => {
    const original = code();
    // Two lines that occur once, one near the start and one far into the file.
    const unique = (from: number) => original.split('\n').slice(from).find((l) => l.length > 40 && original.indexOf(l) === original.lastIndexOf(l))!;
    const first = unique(10);
    const second = unique(5000);
    writeFileSync(join(workspace, 'big.ts'), original);
    const afterFirst = original.replace(first, 'const first = 1;');
    server.enqueue(
      tool('toolu_e1', 'Edit', { file_path: 'big.ts', old_string: first, new_string: 'const first = 1;' }),
      tool('toolu_e2', 'Edit', { file_path: 'big.ts', old_string: second, new_string: 'const second = 2;' }),
      // Keeps the run alive while its checkpoints are recompacted in the background.
      tool('toolu_wait', 'Bash', { command: 'echo $$ > shell.pid; sleep 120' }),
      say('never reached'),
    );
    // The process rewriting the pack (its pid is in the rewrite's name: keel itself, or the
    // worker running the turn) is killed the moment the rewrite appears beside the pack (inotify:
    // an event, not a clock), and keel with it.
    let r: Awaited<ReturnType<typeof runCli>> | null = null;
    let writer = 0;
    const watcher = watch(storage, { recursive: true }, (_event, name) => {
      const m = typeof name === 'string' ? /\.(\d+)\.recompact$/.exec(name) : null;
      if (writer || !m) return;
      writer = Number(m[1]);
      process.kill(writer, 'SIGKILL');
      r?.child.kill('SIGKILL');
    });
    try {
      r = await run('edit the big file twice');
      await expect.poll(() => writer, { timeout: 60_000 }).not.toBe(0);
      expect((await r.exit).signal).toBe('SIGKILL');
      await expect.poll(() => alive(writer), { timeout: 30_000 }).toBe(false);
    } finally {
      watcher.close();
    }
    // A sleeping command the kill orphaned (if it had started) is ended, with its group.
    const pidFile = join(workspace, 'shell.pid');
    if (existsSync(pidFile)) {
      const shell = Number(readFileSync(pidFile, 'utf8').trim());
      for (const target of [-shell, shell]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
    const id = String((r.events.find((e) => typeof e.taskId === 'string') as { taskId: string }).taskId);
    const list = await finished(await tasks('checkpoints', id, '--output-format', 'json'));
    expect(list.code, list.err).toBe(0);
    const steps = (JSON.parse(list.out) as { steps: { step: number; files: { path: string }[] }[] }).steps;
    expect(steps.filter((s) => s.files.some((f) => f.path === 'big.ts')).map((s) => s.step)).toEqual([2, 3]);

    // Back to before the second edit, then before the first: each exactly.
    const mid = await finished(await tasks('rewind', id, '--to', '3', '--files-only'));
    expect(mid.code, mid.err).toBe(0);
    expect(readFileSync(join(workspace, 'big.ts'), 'utf8')).toBe(afterFirst);
    const back = await finished(await tasks('rewind', id, '--to', '2', '--files-only'));
    expect(back.code, back.err).toBe(0);
    expect(readFileSync(join(workspace, 'big.ts'), 'utf8')).toBe(original);
    // The rewinds checkpointed what they overwrote: a Keel writing the task's checkpoints again
    // removed what the killed rewrite left.
    expect(leftovers()).toEqual([]);
    expect(existsSync(join(storage, 'tasks', id, 'checkpoints', 'packs', '000001.pack'))).toBe(true);
  });
});
