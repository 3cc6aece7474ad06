import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCheckpoint, listCheckpoints, restoreCheckpoint } from '../../../src/core/loop/checkpoint';

/**
 * Loop checkpoints in a real git repository: they never move the person's branch or touch their
 * index, and restoring brings the files back (and removes later ones) but leaves the loop folder.
 */
let repo: string;
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'keel-ckpt-repo-'));
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'one\n');
  writeFileSync(join(repo, '.gitignore'), 'ignored/\n');
  git('add', '.');
  git('commit', '-qm', 'first');
});

describe('loop checkpoints', () => {
  it('snapshot the work tree on a separate ref without moving the branch or touching the index', async () => {
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    writeFileSync(join(repo, 'staged.txt'), 'staged\n');
    git('add', 'staged.txt');
    writeFileSync(join(repo, 'new.txt'), 'untracked\n');
    mkdirSync(join(repo, 'ignored'));
    writeFileSync(join(repo, 'ignored', 'big.bin'), 'x');
    const head = git('rev-parse', 'HEAD');
    const index = git('ls-files', '--stage');
    const status = git('status', '--porcelain');

    const c = await createCheckpoint(repo, 'fix-tests', 1, 'Keel loop fix-tests: iteration 1');
    expect(c.ref).toBe('refs/keel/loop/fix-tests/1');
    expect(git('rev-parse', 'HEAD')).toBe(head);
    expect(git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(git('ls-files', '--stage')).toBe(index);
    expect(git('status', '--porcelain')).toBe(status);
    expect(git('show', `${c.commit}:a.txt`)).toBe('two\n');
    expect(git('show', `${c.commit}:new.txt`)).toBe('untracked\n');
    expect(git('ls-tree', '-r', '--name-only', c.commit)).not.toContain('ignored/');
    expect(git('rev-parse', `${c.commit}^`)).toBe(head);
    expect((await listCheckpoints(repo, 'fix-tests')).map((x) => x.label)).toEqual(['1']);
  });

  it('restore brings the files of a checkpoint back, removes later files, keeps the loop folder, and can be undone', async () => {
    mkdirSync(join(repo, '.keel', 'loop', 'l'), { recursive: true });
    writeFileSync(join(repo, '.keel', 'loop', 'l', 'progress.md'), 'iteration 1\n');
    writeFileSync(join(repo, 'a.txt'), 'at checkpoint\n');
    const c = await createCheckpoint(repo, 'l', 1, 'iteration 1');
    writeFileSync(join(repo, 'a.txt'), 'later\n');
    writeFileSync(join(repo, 'later.txt'), 'created later\n');
    writeFileSync(join(repo, '.keel', 'loop', 'l', 'progress.md'), 'iteration 2\n');
    const head = git('rev-parse', 'HEAD');
    const index = git('ls-files', '--stage');

    const before = await restoreCheckpoint(repo, 'l', c.commit);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('at checkpoint\n');
    expect(existsSync(join(repo, 'later.txt'))).toBe(false);
    expect(readFileSync(join(repo, '.keel', 'loop', 'l', 'progress.md'), 'utf8')).toBe('iteration 2\n');
    expect(git('rev-parse', 'HEAD')).toBe(head);
    expect(git('ls-files', '--stage')).toBe(index);
    // The files as they were before the restore are kept.
    expect(before.ref).toMatch(/^refs\/keel\/loop\/l\/before-restore-\d+$/);
    expect(git('show', `${before.commit}:later.txt`)).toBe('created later\n');
  });

  it('refuses outside a git work tree', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'keel-ckpt-plain-'));
    await expect(createCheckpoint(plain, 'l', 1, 'x')).rejects.toThrow(/not inside a git work tree/);
  });
});
