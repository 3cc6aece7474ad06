import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatBytes } from '../../shared/domain/checkpoints';
import type { FileImage } from './format';
import { changedBetween, contentsAt, gitStatus, type GitRepo } from './git';

/**
 * What a command (or an MCP tool) changed in the workspace, found without knowing what it did:
 * the files as they were before it (`captureView`) against the files after it, by git's status
 * where the workspace is a repository Keel may run git in, else by a bounded walk comparing
 * size, mtime and inode. Contents that may be needed as before-images are kept (`keep`) while
 * they are still there; clean files of a repository need nothing kept: HEAD has them.
 */

/** Folders a scan does not enter; what commands change inside them is named, not restored. */
export const SCAN_SKIPPED = [
  '.git',
  'node_modules',
  'dist',
  'build',
  'out',
  'target',
  '.next',
  '.nuxt',
  '.venv',
  'venv',
  '__pycache__',
  '.cache',
  'coverage',
  '.gradle',
  '.terraform',
  '.turbo',
  '.parcel-cache',
];

export interface ViewLimits {
  /** A file larger than this has no before-image (named as such). */
  maxFileBytes: number;
  /** At most this many files are looked at in one view (git's changed files, or a scan's walk). */
  maxFiles: number;
}

export interface Stamp {
  size: number;
  mtimeMs: number;
  ino: number;
}

export interface SeenFile {
  /** Null: no regular file there (deleted, or a folder or link). */
  stamp: Stamp | null;
  image: FileImage;
  /** The content is in the checkpoint store (not only hashed): it can be a before-image. */
  kept: boolean;
}

/** The workspace as one capture saw it. JSON-safe (it is kept as a command's manifest). */
export interface WorkspaceView {
  mode: 'git' | 'scan';
  /** git's HEAD (git mode; null in a repository without commits). */
  head: string | null;
  /** git: the files git reports as not clean; scan: every file walked. Workspace-relative. */
  files: Record<string, SeenFile>;
  /** Folders (ending in `/`) and files whose changes are not looked at (ignored or skipped). */
  ignored: string[];
  /** Limits reached while capturing, in words. */
  notes: string[];
  /** A scan stopped at `maxFiles`: files not in `files` may exist. */
  partial: boolean;
}

/** Keeps a file's content (durably, in the checkpoint store) and says how it is kept. */
export type Keep = (path: string, content: Buffer) => Promise<FileImage>;

/**
 * How a capture treats contents: `keep` stores them (a view taken before a command: its files may
 * be before-images), `identify` only hashes them (a view taken after).
 */
export interface Recording {
  keep: boolean;
  record: Keep;
}

/** Hashes a content without keeping it (an after-image). */
export type Identify = (content: Buffer) => FileImage;

function stampOf(st: Stats): Stamp {
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
}

function sameStamp(a: Stamp | null | undefined, b: Stamp | null | undefined): boolean {
  if (!a || !b) return a === b || (!a && !b);
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/** What is at `path` now: its stamp and, through `record`, its image (reusing `prev` when unchanged). */
async function see(workspace: string, path: string, prev: SeenFile | undefined, limits: ViewLimits, rec: Recording): Promise<SeenFile> {
  const st = lstatOrNull(join(workspace, path));
  if (!st) return { stamp: null, image: { kind: 'absent' }, kept: true };
  if (!st.isFile()) return { stamp: null, image: st.isSymbolicLink() ? { kind: 'unknown', reason: 'a symbolic link' } : { kind: 'absent' }, kept: true };
  const stamp = stampOf(st);
  if (prev && sameStamp(prev.stamp, stamp) && (prev.kept || !rec.keep)) return prev;
  if (st.size > limits.maxFileBytes) return { stamp, image: { kind: 'unknown', reason: `larger than the ${formatBytes(limits.maxFileBytes)} checkpoint limit per file` }, kept: true };
  try {
    return { stamp, image: await rec.record(path, await readFile(join(workspace, path))), kept: rec.keep };
  } catch (err) {
    return { stamp, image: { kind: 'unknown', reason: `could not be read (${(err as Error).message})` }, kept: true };
  }
}

/**
 * The workspace now. `prev` (the last view of this task) saves re-reading files whose stamp did
 * not change. With `repo`, git's status names the files to look at; without, a walk does.
 */
export async function captureView(workspace: string, repo: GitRepo | null, prev: WorkspaceView | null, limits: ViewLimits, rec: Recording): Promise<WorkspaceView> {
  const files: Record<string, SeenFile> = {};
  const notes: string[] = [];
  if (repo) {
    const st = await gitStatus(workspace, repo);
    if (st) {
      let paths = st.changed;
      if (paths.length > limits.maxFiles) {
        notes.push(`git reports ${paths.length} changed files; only the first ${limits.maxFiles} were checkpointed`);
        paths = paths.slice(0, limits.maxFiles);
      }
      for (const p of paths) files[p] = await see(workspace, p, prev?.files[p], limits, rec);
      return { mode: 'git', head: st.head, files, ignored: st.ignored.slice(0, 200), notes, partial: false };
    }
    notes.push('git status failed; the workspace was scanned instead');
  }
  const walked = walk(workspace, limits.maxFiles);
  if (walked.partial) notes.push(`the workspace has more than ${limits.maxFiles} files outside ${SCAN_SKIPPED.slice(0, 4).join(', ')}, …; changes commands make to the others are not checkpointed`);
  for (const p of walked.files) files[p] = await see(workspace, p, prev?.files[p], limits, rec);
  return { mode: 'scan', head: null, files, ignored: walked.skipped, notes, partial: walked.partial };
}

/** One file a command changed: what it held before (the checkpoint) and after. */
export interface ViewChange {
  path: string;
  before: FileImage;
  after: FileImage;
}

/**
 * What changed between two views of the workspace. Before-images of files that were clean in
 * git come from the `before` view's HEAD and are kept through `keep`; after-images are hashed.
 */
export async function diffViews(
  workspace: string,
  repo: GitRepo | null,
  before: WorkspaceView,
  after: WorkspaceView,
  keep: Keep,
  identify: Identify,
  limits: ViewLimits,
): Promise<{ changes: ViewChange[]; notes: string[] }> {
  const notes: string[] = [];
  const candidates = new Set([...Object.keys(before.files), ...Object.keys(after.files)]);
  const git = repo && before.mode === 'git' && after.mode === 'git';
  if (git && before.head && after.head && before.head !== after.head) {
    const moved = await changedBetween(workspace, repo, before.head, after.head);
    if (moved) for (const p of moved) candidates.add(p);
    else notes.push('git could not say which files the new commits changed');
  }
  const ignoredNow = [...before.ignored, ...after.ignored];
  const isIgnored = (p: string) => ignoredNow.some((i) => (i.endsWith('/') ? p.startsWith(i) : p === i));
  const changes: ViewChange[] = [];
  const fromHead: string[] = [];
  for (const p of [...candidates].sort()) {
    if (isIgnored(p)) continue;
    const b = before.files[p];
    const a = after.files[p];
    if (b && a && sameStamp(b.stamp, a.stamp) && b.stamp !== null) continue;
    if (!b && git) {
      fromHead.push(p);
      continue;
    }
    const beforeImage: FileImage = b ? b.image : before.partial ? { kind: 'unknown', reason: 'it was outside the part of the workspace Keel had looked at' } : { kind: 'absent' };
    const afterImage = a ? a.image : await currentImage(workspace, p, identify, limits);
    if (sameContent(beforeImage, afterImage)) continue;
    changes.push({ path: p, before: beforeImage, after: afterImage });
  }
  if (fromHead.length && git) {
    // Clean before the command: the content was HEAD's (or, without HEAD, there was no file).
    const contents = before.head ? await contentsAt(workspace, repo, before.head, fromHead) : fromHead.map(() => null);
    if (!contents) notes.push('git could not give the earlier content of the files the command changed');
    for (let k = 0; k < fromHead.length; k++) {
      const p = fromHead[k]!;
      const c = contents ? contents[k] : undefined;
      const beforeImage: FileImage =
        c === undefined
          ? { kind: 'unknown', reason: 'git could not give its earlier content' }
          : c === null
            ? { kind: 'absent' }
            : c.length > limits.maxFileBytes
              ? { kind: 'unknown', reason: `larger than the ${formatBytes(limits.maxFileBytes)} checkpoint limit per file` }
              : await keep(p, c);
      const afterImage = after.files[p] ? after.files[p]!.image : await currentImage(workspace, p, identify, limits);
      if (sameContent(beforeImage, afterImage)) continue;
      changes.push({ path: p, before: beforeImage, after: afterImage });
    }
    changes.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  }
  return { changes, notes };
}

async function currentImage(workspace: string, path: string, identify: Identify, limits: ViewLimits): Promise<FileImage> {
  const st = lstatOrNull(join(workspace, path));
  if (!st || (!st.isFile() && !st.isSymbolicLink())) return { kind: 'absent' };
  if (!st.isFile()) return { kind: 'unknown', reason: 'a symbolic link' };
  if (st.size > limits.maxFileBytes) return { kind: 'unknown', reason: `larger than the ${formatBytes(limits.maxFileBytes)} checkpoint limit per file` };
  try {
    return identify(await readFile(join(workspace, path)));
  } catch (err) {
    return { kind: 'unknown', reason: `could not be read (${(err as Error).message})` };
  }
}

function sameContent(a: FileImage, b: FileImage): boolean {
  if (a.kind === 'blob' && b.kind === 'blob') return a.hash === b.hash;
  return a.kind === 'absent' && b.kind === 'absent';
}

/** Workspace-relative regular files, breadth first, skipping SCAN_SKIPPED folders and links. */
function walk(workspace: string, max: number): { files: string[]; skipped: string[]; partial: boolean } {
  const files: string[] = [];
  const skipped: string[] = [];
  const queue: string[] = [''];
  while (queue.length) {
    const rel = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(join(workspace, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (SCAN_SKIPPED.includes(e.name)) skipped.push(`${p}/`);
        else queue.push(p);
      } else if (e.isFile()) {
        if (files.length >= max) return { files, skipped, partial: true };
        files.push(p);
      }
    }
  }
  return { files, skipped, partial: false };
}
