import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointsDir, forkTask, listCheckpoints, previewRewind, rewindTask, RewindError } from '../../../src/core/checkpoints/rewinder';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { TaskStore } from '../../../src/core/store/taskStore';
import { ListProvider, textTurn, toolTurn, type Step } from '../helpers/scriptedEvents';

const anthropic = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5' };

function workspace(git: boolean): string {
  const ws = mkdtempSync(join(tmpdir(), 'keel-rw-ws-'));
  writeFileSync(join(ws, 'a.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(ws, 'c.txt'), 'see\n');
  if (git) {
    const g = (...args: string[]) => execFileSync('git', args, { cwd: ws, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    g('init', '-q');
    g('add', '.');
    g('commit', '-qm', 'init');
  }
  return ws;
}

async function runTask(ws: string, storage: string, steps: Step[]) {
  const provider = new ListProvider(steps);
  const runtime = new TaskRuntime({ workspace: ws, storageDir: storage, providerFactory: () => provider, limits: { retryBaseMs: 1 }, ownerLabel: 'test' });
  const task = runtime.startTask({ prompt: 'change three files', provider: anthropic, mode: 'bypassPermissions' });
  expect((await task.settled()).status).toBe('completed');
  runtime.dispose();
  return { id: task.id, provider };
}

const script = (): Step[] => [
  toolTurn('toolu_e1', 'Edit', { file_path: 'a.txt', old_string: 'beta', new_string: 'BETA' }, 'Editing a.'),
  toolTurn('toolu_w1', 'Write', { file_path: 'b.txt', content: 'new file\n' }),
  toolTurn('toolu_b1', 'Bash', { command: 'echo changed > c.txt' }),
  textTurn('All three changed.'),
];

describe.each([true, false])('checkpoints and rewind (git workspace: %s)', (git) => {
  it('lists the steps, previews and rewinds files and conversation, and undoes the rewind', async () => {
    const ws = workspace(git);
    const storage = mkdtempSync(join(tmpdir(), 'keel-rw-st-'));
    const { id } = await runTask(ws, storage, script());
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n');
    expect(readFileSync(join(ws, 'c.txt'), 'utf8')).toBe('changed\n');
    const access = { store: new TaskStore(storage), owner: 'test' };

    const listing = await listCheckpoints(access, id);
    expect(listing.steps.map((s) => [s.step, s.kind, s.label, s.files.map((f) => f.path)])).toEqual([
      [1, 'message', 'change three files', []],
      [2, 'tool', 'Edit a.txt', ['a.txt']],
      [3, 'tool', 'Write b.txt', ['b.txt']],
      [4, 'tool', 'Bash echo changed > c.txt', ['c.txt']],
    ]);
    expect(listing.ownBytes).toBeGreaterThan(0);

    const { plan } = await previewRewind(access, id, 2, 'both');
    expect(plan.files.map((f) => [f.path, f.action, f.conflict])).toEqual([
      ['a.txt', 'restore', false],
      ['b.txt', 'remove', false],
      ['c.txt', 'restore', false],
    ]);
    // The answer that made the call is cut just before it: its text stays, the call goes.
    expect(plan.conversation).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'change three files' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Editing a.' }] },
    ]);

    // The person changes a.txt: a conflict they decide; without an answer nothing is written.
    writeFileSync(join(ws, 'a.txt'), 'mine\n');
    await expect(rewindTask(access, id, 2, 'both')).rejects.toBeInstanceOf(RewindError);
    expect(existsSync(join(ws, 'b.txt'))).toBe(true);
    const r = await rewindTask(access, id, 2, 'both', (f) => (f.path === 'a.txt' ? 'keep' : undefined));
    expect(r.files).toEqual([
      { path: 'a.txt', outcome: 'keptYours' },
      { path: 'b.txt', outcome: 'removed' },
      { path: 'c.txt', outcome: 'restored' },
    ]);
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(ws, 'b.txt'))).toBe(false);
    expect(readFileSync(join(ws, 'c.txt'), 'utf8')).toBe('see\n');

    // The rewind is step 5; rewinding to it undoes it.
    const after = await listCheckpoints(access, id);
    expect(after.steps.at(-1)).toMatchObject({ step: 5, kind: 'rewind' });
    const undo = await rewindTask(access, id, 5, 'both');
    expect(undo.files.map((f) => [f.path, f.outcome])).toEqual([
      ['b.txt', 'restored'],
      ['c.txt', 'restored'],
    ]);
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('new file\n');
    expect(readFileSync(join(ws, 'c.txt'), 'utf8')).toBe('changed\n');

    // The model's next request carries the conversation as it was before the rewind that was undone.
    const provider = new ListProvider([textTurn('ok')]);
    const runtime = new TaskRuntime({ workspace: ws, storageDir: storage, providerFactory: () => provider, ownerLabel: 'test' });
    const resumed = await runtime.resume(id, { provider: anthropic, followUp: 'and now?' });
    await resumed.settled();
    runtime.dispose();
    const sent = provider.requests[0]!.messages;
    expect(JSON.stringify(sent)).toContain('All three changed.');
    expect(JSON.stringify(sent.at(-1))).toContain('and now?');
  });

  it('forks at a step into a task of its own with the conversation up to there', async () => {
    const ws = workspace(git);
    const storage = mkdtempSync(join(tmpdir(), 'keel-rw-st-'));
    const { id } = await runTask(ws, storage, script());
    const access = { store: new TaskStore(storage), owner: 'test' };
    const fork = await forkTask(access, id, 3, { files: true });
    expect(fork.files.map((f) => [f.path, f.outcome])).toEqual([
      ['b.txt', 'removed'],
      ['c.txt', 'restored'],
    ]);
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n');
    const forked = await listCheckpoints(access, fork.taskId);
    expect(forked.steps.map((s) => s.kind)).toEqual(['message', 'tool', 'rewind']);
    const provider = new ListProvider([textTurn('forked answer')]);
    const runtime = new TaskRuntime({ workspace: ws, storageDir: storage, providerFactory: () => provider, ownerLabel: 'test' });
    const resumed = await runtime.resume(fork.taskId, { provider: anthropic, followUp: 'try another way' });
    expect((await resumed.settled()).status).toBe('completed');
    runtime.dispose();
    const sent = JSON.stringify(provider.requests[0]!.messages);
    expect(sent).toContain('toolu_e1');
    expect(sent).not.toContain('toolu_w1');
    // The fork can go back to before step 2 as well (the parent's checkpoints are shared).
    const back = await rewindTask(access, fork.taskId, 2, 'files');
    expect(back.files.map((f) => [f.path, f.outcome])).toEqual([['a.txt', 'restored']]);
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
  });

  it('never keeps a key or token the person put in a file it rewinds over: that file cannot be brought back by undoing', async () => {
    const ws = workspace(git);
    const storage = mkdtempSync(join(tmpdir(), 'keel-rw-st-'));
    const { id } = await runTask(ws, storage, script());
    const access = { store: new TaskStore(storage), owner: 'test' };
    const token = `ghp_${'Qw7e'.repeat(9)}`;
    writeFileSync(join(ws, 'c.txt'), `GITHUB_TOKEN=${token}\n`);
    const r = await rewindTask(access, id, 2, 'files', () => 'overwrite');
    expect(r.files.find((f) => f.path === 'c.txt')).toMatchObject({ outcome: 'restored' });
    expect(readFileSync(join(ws, 'c.txt'), 'utf8')).toBe('see\n');
    // The rewind's own checkpoint of c.txt (what it held before the rewind) was not kept.
    const listing = await listCheckpoints(access, id);
    const rewind = listing.steps.at(-1)!;
    expect(rewind.kind).toBe('rewind');
    expect(rewind.files.find((f) => f.path === 'c.txt')).toMatchObject({ restorable: false, reason: expect.stringMatching(/key or token/) });
    const dir = checkpointsDir(access.store, id);
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }).filter((x) => x.isFile())) {
      expect(readFileSync(join(e.parentPath, e.name), 'latin1')).not.toContain('Qw7eQw7e');
    }
  });
});
