import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { gitRepositoryRisk } from '../permissions/readOnly/gitRepo';
import { toolEnvironment } from '../security/toolEnvironment';

/**
 * Git, run by Keel itself to see what a command changed — never with what the repository's
 * config could make it run: only in a repository that `gitRepositoryRisk` finds harmless (no
 * fsmonitor, filters, hooks on an index refresh, alternates, …), with the same switches as the
 * loop's checkpoints, without optional locks (the person's own git is never blocked by Keel's
 * `status`), and with the tools' environment (no GIT_CONFIG_* or other variables that change git).
 */
const FLAGS = ['--no-optional-locks', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'core.untrackedCache=false', '-c', 'core.quotePath=false'];

export interface GitRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs git in `cwd`; `input` goes to its stdin. Never rejects (a missing git is code null). */
export function runGit(cwd: string, args: string[], input?: string, maxBytes = 256 * 1024 * 1024): Promise<GitRun> {
  return new Promise((resolve) => {
    const child = spawn('git', [...FLAGS, ...args], { cwd, env: { ...toolEnvironment(), GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBytes) out.push(c);
      else child.kill('SIGKILL');
    });
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
    child.on('error', (e) => resolve({ code: null, stdout: Buffer.alloc(0), stderr: e.message }));
    child.on('close', (code) => resolve({ code: size > maxBytes ? null : code, stdout: Buffer.concat(out), stderr: err }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

/** Where the workspace sits in its repository, when Keel may run git there. */
export interface GitRepo {
  /** The workspace's path from the repository's top, `/`-separated ('' at the top). */
  prefix: string;
}

/**
 * The repository the workspace is in, or why git is not used there: no repository, git missing,
 * or a repository whose config or hooks could make git run something (then the workspace is
 * scanned instead, and the note says so).
 */
export async function findRepo(workspace: string, home: string): Promise<{ repo: GitRepo } | { repo: null; note?: string }> {
  let real: string;
  try {
    real = realpathSync(workspace);
  } catch {
    return { repo: null };
  }
  const risk = gitRepositoryRisk(real, { inside: (abs) => abs === real || abs.startsWith(real + sep), home });
  const top = await runGit(real, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) return { repo: null };
  if (risk) return { repo: null, note: `git was not used to see what commands changed: ${risk}; the workspace's files were compared instead` };
  const topPath = top.stdout.toString('utf8').trim();
  let prefix: string;
  try {
    prefix = relative(realpathSync(topPath), real).split(sep).join('/');
  } catch {
    return { repo: null };
  }
  if (prefix.startsWith('..')) return { repo: null };
  return { repo: { prefix } };
}

export interface GitStatus {
  head: string | null;
  /** Workspace-relative paths git reports as changed, added, deleted or untracked. */
  changed: string[];
  /** Workspace-relative ignored paths (folders end with `/`), as git names them. */
  ignored: string[];
}

/** `git status` of the workspace (its own folder only). Null when git failed. */
export async function gitStatus(workspace: string, repo: GitRepo): Promise<GitStatus | null> {
  const [status, head] = await Promise.all([
    runGit(workspace, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames', '--', '.']),
    runGit(workspace, ['rev-parse', '-q', '--verify', 'HEAD']),
  ]);
  if (status.code !== 0) return null;
  const changed: string[] = [];
  const ignored: string[] = [];
  const strip = (p: string) => (repo.prefix && p.startsWith(`${repo.prefix}/`) ? p.slice(repo.prefix.length + 1) : repo.prefix ? null : p);
  for (const entry of status.stdout.toString('utf8').split('\0')) {
    if (entry.length < 4) continue;
    const code = entry.slice(0, 2);
    const path = strip(entry.slice(3));
    if (path === null || path === '') continue;
    (code === '!!' ? ignored : changed).push(path);
  }
  return { head: head.code === 0 ? head.stdout.toString('utf8').trim() || null : null, changed, ignored };
}

/** Paths (workspace-relative) whose content differs between two commits. Null when git failed. */
export async function changedBetween(workspace: string, repo: GitRepo, from: string, to: string): Promise<string[] | null> {
  const r = await runGit(workspace, ['diff', '--no-renames', '--no-ext-diff', '--no-textconv', '--name-only', '-z', from, to, '--', '.']);
  if (r.code !== 0) return null;
  const out: string[] = [];
  for (const p of r.stdout.toString('utf8').split('\0')) {
    if (!p) continue;
    if (!repo.prefix) out.push(p);
    else if (p.startsWith(`${repo.prefix}/`)) out.push(p.slice(repo.prefix.length + 1));
  }
  return out;
}

/**
 * The content of each workspace-relative path at commit `rev` (`git cat-file --batch`): a Buffer,
 * or null where the commit has no such file. Null as a whole when git failed.
 */
export async function contentsAt(workspace: string, repo: GitRepo, rev: string, paths: string[]): Promise<(Buffer | null)[] | null> {
  if (paths.length === 0) return [];
  const specs = paths.map((p) => `${rev}:${repo.prefix ? `${repo.prefix}/` : ''}${p}`);
  if (specs.some((s) => s.includes('\n'))) return null;
  const r = await runGit(workspace, ['cat-file', '--batch'], `${specs.join('\n')}\n`);
  if (r.code !== 0) return null;
  const out: (Buffer | null)[] = [];
  const buf = r.stdout;
  let pos = 0;
  for (let k = 0; k < specs.length; k++) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0) return null;
    const head = buf.subarray(pos, nl).toString('utf8');
    pos = nl + 1;
    const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(head);
    if (!m) {
      out.push(null); // "<spec> missing" (or not a blob): no such file at that commit
      continue;
    }
    const size = Number(m[2]);
    if (m[1] !== 'blob') {
      pos += size + 1;
      out.push(null);
      continue;
    }
    out.push(Buffer.from(buf.subarray(pos, pos + size)));
    pos += size + 1;
  }
  return out;
}
