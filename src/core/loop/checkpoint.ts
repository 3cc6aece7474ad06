import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { toolEnvironment } from '../security/toolEnvironment';

/**
 * Git checkpoints of a loop: after an iteration, a snapshot of the work tree (tracked and
 * untracked files, .gitignore respected) as a commit on `refs/keel/loop/<name>/<n>` — never on
 * the person's branch and never through their index: it is built in a temporary index file
 * (`GIT_INDEX_FILE`) with `git add -A`, `git write-tree` and `git commit-tree`, and published with
 * `git update-ref`. Restoring writes the checkpoint's files back into the work tree and removes
 * files that did not exist then, through a temporary index again; the loop's own folder
 * (`.keel/loop/`) is left as it is, and a checkpoint of the current files is taken first
 * (`refs/keel/loop/<name>/before-restore-<time>`), so a restore can be undone.
 */
export interface Checkpoint {
  ref: string;
  commit: string;
  /** The iteration, or the label for checkpoints that are not iterations. */
  label: string;
  at: number;
}

const GIT_FLAGS = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false'];

function git(cwd: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...toolEnvironment(),
    GIT_AUTHOR_NAME: 'Keel',
    GIT_AUTHOR_EMAIL: 'keel@localhost',
    GIT_COMMITTER_NAME: 'Keel',
    GIT_COMMITTER_EMAIL: 'keel@localhost',
    GIT_TERMINAL_PROMPT: '0',
    ...extraEnv,
  };
  return new Promise((res, rej) => {
    execFile('git', [...GIT_FLAGS, ...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) rej(new Error(`git ${args[0]} failed: ${(stderr || err.message).trim()}`));
      else res(stdout);
    });
  });
}

/** The work tree's top folder when `workspace` is inside a git work tree, else null. Never rejects. */
export async function gitTop(workspace: string): Promise<string | null> {
  try {
    return (await git(workspace, ['rev-parse', '--show-toplevel'])).trim() || null;
  } catch {
    return null;
  }
}

export function checkpointRef(name: string, label: string | number): string {
  return `refs/keel/loop/${name}/${label}`;
}

/** A temporary index seeded from the real one (its stat cache makes `add -A` fast); the real one is never written. */
async function withTempIndex<T>(top: string, fn: (env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-ckpt-'));
  const index = join(dir, 'index');
  try {
    const real = resolve(top, (await git(top, ['rev-parse', '--git-path', 'index'])).trim());
    if (existsSync(real)) copyFileSync(real, index);
    return await fn({ GIT_INDEX_FILE: index });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function snapshotTree(top: string): Promise<string> {
  return withTempIndex(top, async (env) => {
    await git(top, ['add', '-A', '--', '.'], env);
    return (await git(top, ['write-tree'], env)).trim();
  });
}

async function headCommit(top: string): Promise<string | null> {
  try {
    return (await git(top, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'])).trim() || null;
  } catch {
    return null;
  }
}

/**
 * Takes a checkpoint of the work tree as `refs/keel/loop/<name>/<label>`; its parent is `parent`
 * (the previous checkpoint) or HEAD. Rejects when `workspace` is not in a git work tree or git fails.
 */
export async function createCheckpoint(workspace: string, name: string, label: string | number, message: string, parent?: string): Promise<Checkpoint> {
  const top = await gitTop(workspace);
  if (!top) throw new Error(`${workspace} is not inside a git work tree`);
  const tree = await snapshotTree(top);
  const p = parent ?? (await headCommit(top));
  const commit = (await git(top, ['commit-tree', tree, ...(p ? ['-p', p] : []), '-m', message])).trim();
  const ref = checkpointRef(name, label);
  await git(top, ['update-ref', ref, commit]);
  return { ref, commit, label: String(label), at: Date.now() };
}

/** The checkpoints of loop `name`, oldest first. Never rejects (no git: none). */
export async function listCheckpoints(workspace: string, name: string): Promise<Checkpoint[]> {
  const top = await gitTop(workspace);
  if (!top) return [];
  const out = await git(top, ['for-each-ref', '--sort=committerdate', '--format=%(refname) %(objectname) %(committerdate:unix)', `refs/keel/loop/${name}/`]).catch(() => '');
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref = '', commit = '', at = '0'] = line.split(' ');
      return { ref, commit, label: ref.slice(`refs/keel/loop/${name}/`.length), at: Number(at) * 1000 };
    });
}

/**
 * Makes the work tree's files what they were at `commit` (a checkpoint of loop `name`), except the
 * loop folders under `.keel/loop/`. Takes a checkpoint of the current files first and returns it.
 * The person's branch, HEAD and index are not touched. Rejects on git failures.
 */
export async function restoreCheckpoint(workspace: string, name: string, commit: string): Promise<Checkpoint> {
  const top = await gitTop(workspace);
  if (!top) throw new Error(`${workspace} is not inside a git work tree`);
  const resolved = (await git(top, ['rev-parse', '--verify', `${commit}^{commit}`])).trim();
  const before = await createCheckpoint(workspace, name, `before-restore-${Date.now()}`, `Keel loop ${name}: files before restoring ${resolved.slice(0, 12)}`);
  const loopFolder = relative(top, join(workspace, '.keel', 'loop'));
  const keep = (p: string) => !(p === loopFolder || p.startsWith(`${loopFolder}/`));
  const nowTree = (await git(top, ['rev-parse', `${before.commit}^{tree}`])).trim();
  const thenTree = (await git(top, ['rev-parse', `${resolved}^{tree}`])).trim();
  // Files that exist now but did not at the checkpoint go away.
  const added = (await git(top, ['diff-tree', '-r', '-z', '--name-only', '--no-renames', '--diff-filter=A', thenTree, nowTree])).split('\0').filter(Boolean).filter(keep);
  for (const p of added) {
    const abs = resolve(top, p);
    const rel = relative(top, abs);
    if (rel.startsWith('..') || isAbsolute(rel)) continue;
    try {
      unlinkSync(abs);
    } catch {
      // Already gone.
    }
  }
  const files = (await git(top, ['ls-tree', '-r', '-z', '--name-only', thenTree])).split('\0').filter(Boolean).filter(keep);
  await withTempIndex(top, async (env) => {
    await git(top, ['read-tree', thenTree], env);
    // Paths go through stdin: a big tree does not fit on one command line.
    await gitStdin(top, ['checkout-index', '-f', '-z', '--stdin'], files.join('\0'), env);
  });
  return before;
}

function gitStdin(cwd: string, args: string[], input: string, extraEnv: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((res, rej) => {
    const child = execFile('git', [...GIT_FLAGS, ...args], { cwd, env: { ...toolEnvironment(), ...extraEnv }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) rej(new Error(`git ${args[0]} failed: ${(stderr || err.message).trim()}`));
      else res(stdout);
    });
    child.stdin?.end(input);
  });
}
