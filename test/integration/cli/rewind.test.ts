import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * `keel tasks checkpoints|rewind|fork` as a person uses them, on tasks recorded by real `keel
 * run`s against the fake model server: steps listed with their files, a dry run that writes
 * nothing, a rewind of files and conversation (the model's next request carries the rewound
 * conversation), a rewind undone, conflicts the person decides, limits that are named, forks that
 * share checkpoints with their parent and outlive its deletion, a kill -9 between a command's
 * checkpoint and the end of its recording, and before-images git already holds (kept as a
 * reference, restored checked, named when the repository lost or damaged them).
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test', KEEL_MEMORY: 'off' };
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

const run = (prompt: string, ...extra: string[]) =>
  runCli(['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions', ...extra], KEY, storage);
const tasks = (...args: string[]) => runCli(['tasks', ...args], KEY, storage);
const tool = (id: string, name: string, input: Record<string, unknown>, text?: string): FakeTurn => ({ blocks: [...(text ? [{ type: 'text' as const, text }] : []), { type: 'tool_use', id, name, input }] });
const say = (text: string): FakeTurn => ({ blocks: [{ type: 'text', text }] });
const read = (p: string) => readFileSync(join(workspace, p), 'utf8');
/** `bytes` of numbered lines, different for each seed (compresses as text does, not to nothing). */
const lines = (seed: number, bytes: number) => Array.from({ length: bytes / 18 }, (_, i) => `line ${String((i * 2654435761 + seed * 97) % 999999999989).padStart(12, '0')}\n`).join('');

async function finished(r: Awaited<ReturnType<typeof runCli>>): Promise<{ code: number | null; out: string; err: string }> {
  const { code } = await r.exit;
  return { code, out: r.stdout(), err: r.stderr() };
}

/** Records a task that edits a.txt and b.txt and runs a command that changes c.txt. */
async function threeFileTask(): Promise<string> {
  server.enqueue(
    tool('toolu_a', 'Edit', { file_path: 'a.txt', old_string: 'one', new_string: 'ONE' }, 'Changing a.'),
    tool('toolu_b', 'Write', { file_path: 'b.txt', content: 'bee v2\n' }),
    tool('toolu_c', 'Bash', { command: "printf 'sea v2\\n' > c.txt" }),
    say('Three files changed.'),
  );
  const r = await run('change three files');
  const { code, err } = await finished(r);
  expect(code, err).toBe(0);
  return String(ofType(r.events, 'done')[0]!.taskId);
}

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  storage = mkdtempSync(join(tmpdir(), 'keel-rw-store-'));
  workspace = mkdtempSync(join(tmpdir(), 'keel-rw-ws-'));
  writeFileSync(join(workspace, 'a.txt'), 'one\ntwo\n');
  writeFileSync(join(workspace, 'b.txt'), 'bee\n');
  writeFileSync(join(workspace, 'c.txt'), 'sea\n');
  execFileSync('git', ['init', '-q'], { cwd: workspace });
  execFileSync('git', ['add', '.'], { cwd: workspace });
  execFileSync('git', ['commit', '-qm', 'start'], { cwd: workspace, env: GIT_ENV });
});
afterEach(async () => {
  await server.close();
});

describe('keel tasks checkpoints / rewind / fork', () => {
  it('lists steps with their files, previews without writing, rewinds files and conversation, and a rewind is undone', async () => {
    const id = await threeFileTask();
    const list = await finished(await tasks('checkpoints', id, '--output-format', 'json'));
    expect(list.code, list.err).toBe(0);
    const listing = JSON.parse(list.out) as { steps: { step: number; kind: string; label: string; files: { path: string }[] }[]; ownBytes: number };
    expect(listing.steps.map((s) => [s.step, s.kind, s.files.map((f) => f.path)])).toEqual([
      [1, 'message', []],
      [2, 'tool', ['a.txt']],
      [3, 'tool', ['b.txt']],
      [4, 'tool', ['c.txt']],
    ]);
    expect(listing.ownBytes).toBeGreaterThan(0);
    const text = await finished(await tasks('checkpoints', id));
    expect(text.out).toContain('Edit a.txt');
    expect(text.out).toMatch(/storage: +\d/);

    // The dry run shows each file's diff and writes nothing.
    const dry = await finished(await tasks('rewind', id, '--to', '2', '--dry-run'));
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain('a.txt: restore');
    expect(dry.out).toContain('-ONE');
    expect(dry.out).toContain('+one');
    expect(dry.out).toContain('-sea v2');
    expect(read('a.txt')).toBe('ONE\ntwo\n');

    const done = await finished(await tasks('rewind', id, '--to', '2', '--output-format', 'json'));
    expect(done.code, done.err).toBe(0);
    const result = JSON.parse(done.out) as { files: { path: string; outcome: string }[]; undoStep: number };
    expect(result.files.map((f) => [f.path, f.outcome])).toEqual([
      ['a.txt', 'restored'],
      ['b.txt', 'restored'],
      ['c.txt', 'restored'],
    ]);
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual(['one\ntwo\n', 'bee\n', 'sea\n']);
    expect(result.undoStep).toBe(5);

    // The model's next request carries the rewound conversation: the prompt and the answer's text, no calls.
    server.enqueue(say('Starting over.'));
    const next = await finished(await run('try it differently', '--resume', id));
    expect(next.code, next.err).toBe(0);
    const sent = JSON.stringify((server.requests.at(-1)!.body as { messages: unknown[] }).messages);
    expect(sent).toContain('change three files');
    expect(sent).toContain('Changing a.');
    expect(sent).toContain('try it differently');
    expect(sent).not.toContain('toolu_a');
    expect(sent).not.toContain('Three files changed.');

    // Undo the rewind: the files come back as the task had left them.
    const undo = await finished(await tasks('rewind', id, '--to', '5', '--files-only'));
    expect(undo.code, undo.err).toBe(0);
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual(['ONE\ntwo\n', 'bee v2\n', 'sea v2\n']);
  });

  it('never overwrites a file the person changed unless told, and keeps theirs when asked', async () => {
    const id = await threeFileTask();
    writeFileSync(join(workspace, 'a.txt'), 'my own edit\n');
    const refused = await finished(await tasks('rewind', id, '--to', '2'));
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('a.txt');
    expect(refused.err).toContain('nothing was changed');
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual(['my own edit\n', 'bee v2\n', 'sea v2\n']);
    const dry = await finished(await tasks('rewind', id, '--to', '2', '--dry-run', '--output-format', 'json'));
    const plan = JSON.parse(dry.out) as { files: { path: string; conflict: boolean }[] };
    expect(plan.files.find((f) => f.path === 'a.txt')?.conflict).toBe(true);
    expect(plan.files.find((f) => f.path === 'b.txt')?.conflict).toBe(false);

    const kept = await finished(await tasks('rewind', id, '--to', '2', '--on-conflict', 'keep'));
    expect(kept.code, kept.err).toBe(0);
    expect(kept.out).toMatch(/kept yours +a\.txt/);
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual(['my own edit\n', 'bee\n', 'sea\n']);

    // Overwriting it is the person's choice, per file, and the rewind that does it can be undone.
    const again = await finished(await tasks('rewind', id, '--to', '2', '--overwrite-file', 'a.txt'));
    expect(again.code, again.err).toBe(0);
    expect(read('a.txt')).toBe('one\ntwo\n');
    const steps = JSON.parse((await finished(await tasks('checkpoints', id, '--output-format', 'json'))).out) as { steps: { step: number }[] };
    const undo = await finished(await tasks('rewind', id, '--to', String(steps.steps.at(-1)!.step), '--files-only'));
    expect(undo.code, undo.err).toBe(0);
    expect(read('a.txt')).toBe('my own edit\n');
  });

  it('names what a limit left out instead of pretending, in the run and in the preview', async () => {
    writeFileSync(join(workspace, 'big.txt'), `${'x'.repeat(4000)}\n`);
    server.enqueue(tool('toolu_big', 'Write', { file_path: 'big.txt', content: 'small now\n' }), tool('toolu_small', 'Edit', { file_path: 'a.txt', old_string: 'one', new_string: '1' }), say('done'));
    const r = await runCli(
      ['run', 'shrink', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions'],
      { ...KEY, KEEL_CHECKPOINT_MAX_FILE_BYTES: '1000' },
      storage,
    );
    expect((await r.exit).code, r.stderr()).toBe(0);
    const notes = ofType(r.events, 'checkpoint') as { toolCallId: string; files: { path: string; kept: boolean; reason?: string }[] }[];
    expect(notes.find((n) => n.toolCallId === 'toolu_big')?.files).toEqual([{ path: 'big.txt', kept: false, reason: 'larger than the 1000 B checkpoint limit per file' }]);
    expect(notes.find((n) => n.toolCallId === 'toolu_small')?.files).toEqual([{ path: 'a.txt', kept: true }]);
    const id = String(ofType(r.events, 'done')[0]!.taskId);
    const list = await finished(await tasks('checkpoints', id));
    expect(list.out).toContain('big.txt — not restorable: larger than the 1000 B checkpoint limit per file');
    const dry = await finished(await tasks('rewind', id, '--to', '2', '--dry-run'));
    expect(dry.out).toContain('big.txt: not restorable: larger than the 1000 B checkpoint limit per file');
    const done = await finished(await tasks('rewind', id, '--to', '2'));
    expect(done.out).toMatch(/not restored +big\.txt/);
    expect(read('a.txt')).toBe('one\ntwo\n');
    expect(read('big.txt')).toBe('small now\n');
  });

  it('keeps a committed file\'s before-image as git\'s object, not a copy, and restores it from there', async () => {
    const big = lines(1, 64 * 1024);
    writeFileSync(join(workspace, 'big.ts'), big);
    execFileSync('git', ['add', 'big.ts'], { cwd: workspace });
    execFileSync('git', ['commit', '-qm', 'big'], { cwd: workspace, env: GIT_ENV });
    server.enqueue(tool('toolu_e', 'Edit', { file_path: 'big.ts', old_string: big.split('\n')[5]!, new_string: 'line five' }), say('done'));
    const r = await run('edit big');
    expect((await r.exit).code, r.stderr()).toBe(0);
    const id = String(ofType(r.events, 'done')[0]!.taskId);
    const listing = JSON.parse((await finished(await tasks('checkpoints', id, '--output-format', 'json'))).out) as { ownBytes: number; steps: { files: { path: string; restorable: boolean }[] }[] };
    expect(listing.steps[1]!.files).toEqual([{ path: 'big.ts', restorable: true }]);
    // The 64 KB before-image (~20 KB compressed) is not in the task's checkpoints: git holds it.
    expect(listing.ownBytes).toBeLessThan(2000);
    expect(read('big.ts')).not.toBe(big);
    const done = await finished(await tasks('rewind', id, '--to', '2', '--files-only', '--output-format', 'json'));
    expect(done.code, done.err).toBe(0);
    expect((JSON.parse(done.out) as { files: unknown[] }).files).toEqual([{ path: 'big.ts', outcome: 'restored' }]);
    expect(read('big.ts')).toBe(big);
  });

  it('names a before-image git no longer has, or holds damaged, as not restorable and never writes it', async () => {
    const [gone, bad] = [lines(2, 16 * 1024), lines(3, 16 * 1024)];
    writeFileSync(join(workspace, 'gone.ts'), gone);
    writeFileSync(join(workspace, 'bad.ts'), bad);
    execFileSync('git', ['add', '.'], { cwd: workspace });
    execFileSync('git', ['commit', '-qm', 'two'], { cwd: workspace, env: GIT_ENV });
    server.enqueue(
      tool('toolu_g', 'Write', { file_path: 'gone.ts', content: 'gone v2\n' }),
      tool('toolu_d', 'Write', { file_path: 'bad.ts', content: 'bad v2\n' }),
      tool('toolu_a', 'Edit', { file_path: 'a.txt', old_string: 'one', new_string: 'ONE' }),
      say('done'),
    );
    const r = await run('rewrite');
    expect((await r.exit).code, r.stderr()).toBe(0);
    const id = String(ofType(r.events, 'done')[0]!.taskId);
    const object = (content: string) => {
      const oid = execFileSync('git', ['hash-object', '--stdin'], { cwd: workspace, input: content }).toString().trim();
      return join(workspace, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
    };
    // History rewritten and pruned: the object is gone. The other is replaced by a well-formed
    // blob of the same size holding something else (a damaged or planted object).
    expect(existsSync(object(gone)) && existsSync(object(bad))).toBe(true);
    rmSync(object(gone));
    const other = Buffer.from(bad);
    other[100] = 0x21;
    rmSync(object(bad));
    writeFileSync(object(bad), deflateSync(Buffer.concat([Buffer.from(`blob ${other.length}\0`), other])));
    const dry = await finished(await tasks('rewind', id, '--to', '2', '--dry-run', '--output-format', 'json'));
    expect(dry.code, dry.err).toBe(0);
    const plan = JSON.parse(dry.out) as { files: { path: string; action: string; reason?: string }[] };
    expect(plan.files.find((f) => f.path === 'gone.ts')).toMatchObject({ action: 'notRestorable', reason: expect.stringMatching(/git's object [0-9a-f]{40}, which the repository no longer has/) });
    expect(plan.files.find((f) => f.path === 'bad.ts')).toMatchObject({ action: 'notRestorable', reason: expect.stringMatching(/does not hold what was recorded/) });
    expect(plan.files.find((f) => f.path === 'a.txt')).toMatchObject({ action: 'restore' });
    const done = await finished(await tasks('rewind', id, '--to', '2', '--files-only'));
    expect(done.code, done.err).toBe(0);
    expect(done.out).toMatch(/not restored +gone\.ts \(its before-image is git's object/);
    expect(done.out).toMatch(/not restored +bad\.ts \(git's object/);
    expect([read('gone.ts'), read('bad.ts'), read('a.txt')]).toEqual(['gone v2\n', 'bad v2\n', 'one\ntwo\n']);
  });

  it('forks at a step (prints the new id), shares checkpoints, and each task frees only what the other does not use', async () => {
    const id = await threeFileTask();
    const forked = await finished(await tasks('fork', id, '--at', '3'));
    expect(forked.code, forked.err).toBe(0);
    const forkId = forked.out.trim();
    expect(forkId).toMatch(/^[0-9a-f-]{36}$/);
    // The fork continues from before step 3 with its own conversation.
    server.enqueue(say('Another way.'));
    const cont = await finished(await run('do b differently', '--resume', forkId));
    expect(cont.code, cont.err).toBe(0);
    const sent = JSON.stringify((server.requests.at(-1)!.body as { messages: unknown[] }).messages);
    expect(sent).toContain('toolu_a');
    expect(sent).not.toContain('toolu_b');

    // Both hold the same pack (one inode, two names).
    const packsOf = (t: string) => {
      const dir = join(storage, 'tasks', t, 'checkpoints');
      const own = existsSync(join(dir, 'packs')) ? readdirSync(join(dir, 'packs')).map((n) => join(dir, 'packs', n)) : [];
      const linked = existsSync(join(dir, 'linked')) ? readdirSync(join(dir, 'linked')).map((n) => join(dir, 'linked', n)) : [];
      return [...own, ...linked];
    };
    const parentPack = packsOf(id)[0]!;
    expect(statSync(parentPack).nlink).toBe(2);
    const shared = packsOf(forkId).find((p) => statSync(p).ino === statSync(parentPack).ino)!;
    expect(shared).toBeDefined();

    // Deleting the parent leaves the fork able to rewind through the shared checkpoints.
    expect((await finished(await tasks('delete', id))).code).toBe(0);
    expect(statSync(shared).nlink).toBe(1);
    const back = await finished(await tasks('rewind', forkId, '--to', '2', '--files-only'));
    expect(back.code, back.err).toBe(0);
    expect(read('a.txt')).toBe('one\ntwo\n');
    // Deleting the fork frees the rest.
    expect((await finished(await tasks('delete', forkId))).code).toBe(0);
    expect(existsSync(shared)).toBe(false);
    expect(existsSync(join(storage, 'tasks', forkId))).toBe(false);
  });

  it('a kill -9 after a command changed a file but before its changes were recorded still leaves it restorable', async () => {
    server.enqueue(tool('toolu_slow', 'Bash', { command: "echo $$ > shell.pid; printf 'half done\\n' > c.txt; sleep 60" }), say('never reached'));
    const r = await run('change c slowly');
    await expect.poll(() => read('c.txt'), { timeout: 30_000 }).toBe('half done\n');
    r.child.kill('SIGKILL');
    expect((await r.exit).signal).toBe('SIGKILL');
    // In process, the command's shell outlives Keel: end it (its group) so the test leaves nothing
    // running. On a worker, the worker saw its host go and ended it already.
    const shell = Number(read('shell.pid').trim());
    for (const target of [-shell, shell]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    const id = String((r.events.find((e) => typeof e.taskId === 'string') as { taskId: string }).taskId);
    const list = await finished(await tasks('checkpoints', id));
    expect(list.out).toContain('ended before what it changed was recorded');
    const dry = await finished(await tasks('rewind', id, '--to', '2', '--dry-run', '--output-format', 'json'));
    expect(dry.code, dry.err).toBe(0);
    expect((JSON.parse(dry.out) as { files: { path: string; action: string }[] }).files).toEqual([
      expect.objectContaining({ path: 'c.txt', action: 'restore' }),
      expect.objectContaining({ path: 'shell.pid', action: 'remove' }),
    ]);
    const done = await finished(await tasks('rewind', id, '--to', '2', '--files-only'));
    expect(done.code, done.err).toBe(0);
    expect(read('c.txt')).toBe('sea\n');
    expect(existsSync(join(workspace, 'shell.pid'))).toBe(false);
  });
});
