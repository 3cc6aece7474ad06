import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { gitRepositoryRisk } from '../permissions/readOnly/gitRepo';
import { toolEnvironment } from '../security/toolEnvironment';

/**
 * `@git`: the working tree's changes as `git status --short` and `git diff HEAD` show them. Git
 * runs only in a repository that cannot make it run a program (gitRepositoryRisk: no fsmonitor,
 * no diff drivers or filters of the repository's config, no index hooks), and with what could
 * still run one turned off: external diff and text conversion drivers, the fsmonitor, pagers.
 * Files the person's rules do not let Keel read are left out of the diff by name.
 */

export interface GitChanges {
  /** `git status --short` (untracked files included). */
  status: string;
  /** `git diff HEAD` (or, before the first commit, the staged and unstaged changes). */
  diff: string;
  /** Changed paths, workspace-relative. */
  paths: string[];
}

export type GitResult = { ok: true; changes: GitChanges } | { ok: false; why: string };

const SAFE = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'diff.external=', '-c', 'core.pager=cat', '--no-pager'];

function git(cwd: string, args: string[], signal: AbortSignal): Promise<string> {
  return new Promise((res, rej) => {
    execFile('git', [...SAFE, ...args], { cwd, env: { ...toolEnvironment(), GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' }, maxBuffer: 32 * 1024 * 1024, signal }, (err, stdout, stderr) => {
      if (err) rej(new Error((stderr || err.message).trim().split('\n')[0] ?? 'git failed'));
      else res(stdout);
    });
  });
}

/**
 * The changes of the working tree that holds `workspace`, without the paths `excluded` (relative
 * to the workspace). Never rejects: a folder that is not in a repository, a repository git may
 * not run in, or git failing gives `ok: false` with why.
 */
export async function gitChanges(workspace: string, signal: AbortSignal, excluded: readonly string[] = []): Promise<GitResult> {
  const root = resolve(workspace);
  // What matters here is whether git could run a program: the person asked for their repository's
  // changes, wherever its .git is (the workspace may be a folder of a larger repository).
  const risk = gitRepositoryRisk(root, { inside: () => true, home: homedir() });
  if (risk) return { ok: false, why: `Keel does not run git here: ${risk}` };
  try {
    const top = (await git(root, ['rev-parse', '--show-toplevel'], signal)).trim();
    if (!top) return { ok: false, why: 'the workspace is not in a git repository' };
  } catch {
    return { ok: false, why: 'the workspace is not in a git repository' };
  }
  try {
    const status = await git(root, ['status', '--short', '--untracked-files=all', '--', '.'], signal);
    const paths = status
      .split('\n')
      .filter(Boolean)
      .map((l) => l.slice(3).replace(/^.* -> /, '').replace(/^"|"$/g, ''));
    const spec = ['--', '.', ...excluded.map((p) => `:(exclude,literal)${p}`)];
    const flags = ['--no-ext-diff', '--no-textconv', '--no-color'];
    let diff: string;
    try {
      diff = await git(root, ['diff', ...flags, 'HEAD', ...spec], signal);
    } catch {
      // No commit yet: what is staged, then what is not.
      diff = (await git(root, ['diff', ...flags, '--cached', ...spec], signal)) + (await git(root, ['diff', ...flags, ...spec], signal));
    }
    return { ok: true, changes: { status, diff, paths } };
  } catch (err) {
    return { ok: false, why: `git failed: ${(err as Error).message}` };
  }
}
