import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitBlobId, GitObjects } from '../../../src/core/checkpoints/gitObjects';
import { CheckpointStore } from '../../../src/core/checkpoints/store';

/**
 * Before-images kept as git's objects, against repositories git itself made: loose and packed
 * (after `git gc`) objects found without git, a packed one read back with `git cat-file`, sha256
 * repositories, a linked worktree left alone, and history rewritten and pruned reported plainly.
 * Starts git: listed in test/integration-files.txt.
 */
const ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'keel-gitrepo-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const content = (seed: number, size = 20_000) => Buffer.from(Array.from({ length: size / 20 }, (_, i) => `line ${String(i * seed).padStart(12, '0')}\n`).join(''));

function repo(...init: string[]): { ws: string; files: Buffer[] } {
  const ws = tmp();
  git(ws, 'init', '-q', ...init);
  const files = [content(1), content(2), content(3)];
  files.forEach((c, i) => writeFileSync(join(ws, `f${i}.txt`), c));
  git(ws, 'add', '.');
  git(ws, 'commit', '-qm', 'start');
  return { ws, files };
}

describe('before-images held by a real git repository', () => {
  it('finds committed contents loose and, after git gc, in the pack index, and reads a packed one back checked', async () => {
    const { ws, files } = repo();
    const objects = new GitObjects(ws);
    for (const [i, c] of files.entries()) expect(await objects.reference(c)).toBe(git(ws, 'hash-object', `f${i}.txt`).trim());
    expect(await objects.reference(content(4))).toBeNull();
    git(ws, 'gc', '-q', '--prune=now');
    expect(readdirSync(join(ws, '.git', 'objects', 'pack')).some((n) => n.endsWith('.idx'))).toBe(true);
    for (const c of files) expect(await objects.reference(c)).toBe(gitBlobId(c));
    expect(await objects.reference(content(4))).toBeNull();
    const dir = tmp();
    const store = new CheckpointStore(dir, objects);
    const { hash, added } = await store.put(files[1]!, 'f1.txt');
    expect(added).toBeLessThan(200);
    await store.sync();
    await store.close();
    // No loose object left: the pack is read through git.
    expect(readdirSync(join(ws, '.git', 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n))).toEqual([]);
    const again = new CheckpointStore(dir, new GitObjects(ws));
    expect((await again.read(hash)).equals(files[1]!)).toBe(true);
  });

  it('uses the ids of a sha256 repository', async () => {
    const { ws, files } = repo('--object-format=sha256');
    expect(git(ws, 'rev-parse', 'HEAD').trim()).toHaveLength(64);
    expect(await new GitObjects(ws).reference(files[0]!)).toBe(git(ws, 'hash-object', 'f0.txt').trim());
    git(ws, 'gc', '-q', '--prune=now');
    expect(await new GitObjects(ws).reference(files[2]!)).toBe(gitBlobId(files[2]!, 'sha256'));
  });

  it('does not use git in a linked worktree (its .git is a file pointing elsewhere)', async () => {
    const { ws, files } = repo();
    const wt = join(tmp(), 'wt');
    git(ws, 'worktree', 'add', '-q', wt);
    expect(await new GitObjects(wt).reference(files[0]!)).toBeNull();
    expect(await new GitObjects(ws).reference(files[0]!)).toBe(gitBlobId(files[0]!));
  });

  it('says the before-image is no longer restorable once history is rewritten and pruned', async () => {
    const { ws, files } = repo();
    git(ws, 'gc', '-q', '--prune=now');
    const dir = tmp();
    const store = new CheckpointStore(dir, new GitObjects(ws));
    const { hash } = await store.put(files[0]!, 'f0.txt');
    await store.sync();
    await store.close();
    writeFileSync(join(ws, 'f0.txt'), 'rewritten\n');
    git(ws, 'commit', '-qa', '--amend', '-m', 'rewritten');
    git(ws, 'reflog', 'expire', '--expire=now', '--all');
    git(ws, 'gc', '-q', '--prune=now');
    await expect(new CheckpointStore(dir, new GitObjects(ws)).read(hash)).rejects.toThrow(/no longer has/);
  });
});
