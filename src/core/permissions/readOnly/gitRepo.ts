import { readFileSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseGitConfig, unsafeSetting, type ConfigEntry } from './gitConfig';

/**
 * Whether git, run in a directory, could run a program or read outside the allowed roots
 * because of the repository it finds there: its config (see gitConfig.ts), hooks that fire on
 * an index refresh (`git status` and `git diff` rewrite the index: post-index-change), object
 * alternates, a `.git` file or common dir pointing elsewhere, and the same for every populated
 * submodule (git status recurses into them). Reads files, never runs git; results per file
 * are cached by (mtime, size, inode), so a decision costs a few stat calls.
 */

/** Hooks git runs during read-only commands (an index refresh, a ref update). */
const READ_HOOKS = ['post-index-change', 'reference-transaction'];
const MAX_DEPTH = 3;
const MAX_SUBMODULES = 32;

export interface RepoCheckContext {
  /** True when an absolute path may be read without asking. */
  inside(abs: string): boolean;
  home: string;
}

/** Why git in `cwd` could run code or read elsewhere; null when it cannot. Never throws. */
export function gitRepositoryRisk(cwd: string, ctx: RepoCheckContext): string | null {
  try {
    const found = discover(cwd);
    if (found === 'unknown') return 'the git repository could not be inspected';
    if (!found) return null;
    return inspect(found, ctx, 0, { submodules: 0 });
  } catch (err) {
    return `the git repository could not be inspected (${err instanceof Error ? err.message : String(err)})`;
  }
}

/**
 * The top of the working tree git finds from `cwd`: null when there is no repository (or a bare
 * one: no working tree), undefined when it cannot be told. Never throws.
 */
export function gitTopLevel(cwd: string): string | null | undefined {
  try {
    const found = discover(cwd);
    if (found === 'unknown') return undefined;
    return found ? (found.workTree ?? null) : null;
  } catch {
    return undefined;
  }
}

interface Repo {
  gitDir: string;
  /** The working tree's root; undefined for a bare repository. */
  workTree?: string;
}

function statOrNull(p: string): Stats | null {
  try {
    return statSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw err;
  }
}

/** A directory git accepts as a repository: HEAD, objects/ and refs/. */
function looksLikeGitDir(d: string): boolean {
  return !!statOrNull(join(d, 'HEAD'))?.isFile() && !!statOrNull(join(d, 'objects'))?.isDirectory() && !!statOrNull(join(d, 'refs'))?.isDirectory();
}

/** The repository git would find from `cwd` (as git's setup.c walks up), or null, or unknown. */
function discover(cwd: string): Repo | null | 'unknown' {
  let d = resolve(cwd);
  for (let n = 0; n < 4096; n++) {
    const dotGit = join(d, '.git');
    const st = statOrNull(dotGit);
    if (st?.isFile()) {
      const target = readGitFile(dotGit);
      return target === null ? 'unknown' : { gitDir: target, workTree: d };
    }
    if (st?.isDirectory() && looksLikeGitDir(dotGit)) return { gitDir: dotGit, workTree: d };
    if (looksLikeGitDir(d)) return { gitDir: d };
    const up = dirname(d);
    if (up === d) return null;
    d = up;
  }
  return 'unknown';
}

/** `gitdir: PATH` of a .git file, resolved; null when malformed. */
function readGitFile(file: string): string | null {
  const m = /^gitdir: (.+?)\r?\n?$/.exec(cachedRead(file) ?? '');
  return m?.[1] ? resolve(dirname(file), m[1]) : null;
}

function inspect(repo: Repo, ctx: RepoCheckContext, depth: number, budget: { submodules: number }): string | null {
  if (depth > MAX_DEPTH) return 'git submodules nested too deeply to inspect';
  if (!ctx.inside(repo.gitDir)) return `the git repository (${repo.gitDir}) is outside the workspace`;
  if (!statOrNull(repo.gitDir)?.isDirectory()) return `the git directory ${repo.gitDir} does not exist`;
  const commonFile = cachedRead(join(repo.gitDir, 'commondir'));
  const common = commonFile === undefined ? repo.gitDir : resolve(repo.gitDir, commonFile.trim());
  if (!ctx.inside(common)) return `the git common directory (${common}) is outside the workspace`;
  const entries: ConfigEntry[] = [];
  for (const f of new Set([join(common, 'config'), join(repo.gitDir, 'config.worktree'), join(common, 'config.worktree')])) {
    const parsed = cachedConfig(f);
    if (parsed === null) return `the git config ${f} could not be read`;
    entries.push(...parsed);
  }
  for (const e of entries) {
    const why = unsafeSetting(e);
    if (why) return why;
  }
  if (statOrNull(join(common, 'objects', 'info', 'alternates'))) return 'the git repository borrows objects from elsewhere (objects/info/alternates)';
  const hooksPath = [...entries].reverse().find((e) => e.section === 'core' && e.subsection === undefined && e.key === 'hookspath')?.value;
  const hooks = hooksDir(hooksPath, repo, common, ctx.home);
  if (hooks === null) return `core.hooksPath (${hooksPath ?? ''}) could not be resolved`;
  const names = cachedDir(hooks);
  const hook = READ_HOOKS.find((h) => names?.includes(h));
  if (hook) return `the repository has a ${hook} hook, which git runs during read-only commands`;
  if (!repo.workTree) return null;
  const links = cachedGitlinks(join(repo.gitDir, 'index'), entries);
  if (links === null) return 'the git index could not be read';
  for (const p of links) {
    const wt = join(repo.workTree, p);
    const dotGit = join(wt, '.git');
    const st = statOrNull(dotGit);
    if (!st) continue; // not populated: git does not go there
    if (++budget.submodules > MAX_SUBMODULES) return 'too many git submodules to inspect';
    let sub: Repo;
    if (st.isFile()) {
      const target = readGitFile(dotGit);
      if (target === null) return `the submodule ${p} has a malformed .git file`;
      sub = { gitDir: target, workTree: wt };
    } else sub = { gitDir: dotGit, workTree: wt };
    const why = inspect(sub, ctx, depth + 1, budget);
    if (why) return `submodule ${p}: ${why}`;
  }
  return null;
}

function hooksDir(hooksPath: string | undefined, repo: Repo, common: string, home: string): string | null {
  if (hooksPath === undefined) return join(common, 'hooks');
  if (hooksPath === '~' || hooksPath.startsWith('~/')) return join(home, hooksPath.slice(1));
  if (hooksPath.startsWith('~')) return null;
  if (isAbsolute(hooksPath)) return hooksPath;
  return resolve(repo.workTree ?? repo.gitDir, hooksPath);
}

// --- Cached reads, keyed by the file's identity -----------------------------------------------

const cache = new Map<string, { sig: string; value: unknown }>();

function cached<T>(kind: string, p: string, compute: (st: Stats) => T, missing: T): T {
  const st = statOrNull(p);
  if (!st) return missing;
  const sig = `${st.mtimeMs}:${st.size}:${st.ino}`;
  const key = `${kind}:${p}`;
  const hit = cache.get(key);
  if (hit && hit.sig === sig) return hit.value as T;
  const value = compute(st);
  if (cache.size > 512) cache.clear();
  cache.set(key, { sig, value });
  return value;
}

/** A small text file's content; undefined when missing. */
function cachedRead(p: string): string | undefined {
  return cached<string | undefined>('text', p, (st) => (st.size > 65536 ? '' : readFileSync(p, 'utf8')), undefined);
}

/** Config entries; [] when missing; null when unreadable or not config. */
function cachedConfig(p: string): ConfigEntry[] | null {
  return cached<ConfigEntry[] | null>('config', p, (st) => (st.size > 1_000_000 || !st.isFile() ? null : parseGitConfig(readFileSync(p, 'utf8'))), []);
}

function cachedDir(p: string): string[] | null {
  return cached<string[] | null>('dir', p, (st) => (st.isDirectory() ? readdirSync(p) : null), null);
}

function cachedGitlinks(indexPath: string, config: ConfigEntry[]): string[] | null {
  const sha256 = config.some((e) => e.section === 'extensions' && e.key === 'objectformat' && e.value?.toLowerCase() === 'sha256');
  return cached<string[] | null>('index', indexPath, () => gitlinksOf(readFileSync(indexPath), sha256 ? 32 : 20), []);
}

/**
 * The paths of gitlinks (submodules, mode 160000) in a git index (versions 2-4); null when the
 * file is not an index Keel can read (or a split index, whose entries live elsewhere).
 */
export function gitlinksOf(buf: Buffer, hashLen: number): string[] | null {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const out: string[] = [];
  let off = 12;
  let prev = '';
  for (let n = 0; n < count; n++) {
    const start = off;
    const flagsAt = start + 40 + hashLen;
    if (flagsAt + 2 > buf.length) return null;
    const mode = buf.readUInt32BE(start + 24);
    const flags = buf.readUInt16BE(flagsAt);
    let p = flagsAt + 2;
    if (version >= 3 && flags & 0x4000) p += 2;
    let name: string;
    if (version === 4) {
      let c = buf[p++];
      if (c === undefined) return null;
      let strip = c & 127;
      while (c & 128) {
        c = buf[p++];
        if (c === undefined) return null;
        strip = ((strip + 1) << 7) + (c & 127);
      }
      const end = buf.indexOf(0, p);
      if (end < 0 || strip > prev.length) return null;
      name = prev.slice(0, prev.length - strip) + buf.toString('utf8', p, end);
      off = end + 1;
    } else {
      const end = buf.indexOf(0, p);
      if (end < 0) return null;
      name = buf.toString('utf8', p, end);
      off = start + ((p - start + (end - p) + 8) & ~7);
    }
    prev = name;
    if ((mode & 0o170000) === 0o160000) out.push(name);
  }
  // Extensions: a split index keeps its entries in another file.
  while (off + 8 <= buf.length - hashLen) {
    const sig = buf.toString('latin1', off, off + 4);
    if (sig === 'link') return null;
    off += 8 + buf.readUInt32BE(off + 4);
  }
  return out;
}
