import { lstatSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { LinkRefused, linkProblem, makeDirsNoFollow, readNoFollow, writeAtomicNoFollowSync } from '../security/linkFreeFiles';
import { isMemoryFileName, memoryFileNameFor, parseMemory, serializeMemory, type Memory, type MemoryFrontMatter } from './memoryFile';
import { errorMessage } from '../../shared/domain/errors';

/** One memory file as listed: its memory and what identifies this version of the file. */
export interface StoredMemory extends Memory {
  path: string;
  mtimeMs: number;
  size: number;
  /** The file's inode and change time: a file replaced or rewritten has new ones even with the same modification time and size. */
  ino?: number;
  ctimeMs?: number;
}

/** A file of the memory folder that is not read as a memory, and why (too large, not text). */
export interface SkippedMemory {
  file: string;
  path: string;
  mtimeMs: number;
  ctimeMs?: number;
  size: number;
  ino?: number;
  skipped: string;
}

/** What identifies one version of a file without reading it. */
export interface FileVersion {
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  ino: number;
}

export type MemoryEntry = StoredMemory | SkippedMemory;

export function isSkipped(e: MemoryEntry): e is SkippedMemory {
  return 'skipped' in e;
}

export class MemoryError extends Error {
  constructor(
    readonly code: 'not_found' | 'invalid_name' | 'io',
    message: string,
  ) {
    super(message);
    this.name = 'MemoryError';
  }
}

/**
 * A memory file larger than this is not read (a memory is a short note: the gatekeeper keeps saved
 * ones under 600 characters, and at most ~6,000 characters of memories go into a prompt). One 50 MB
 * file in a repository's memory folder once cost every run ~47 s.
 */
export const MAX_MEMORY_BYTES = 64 * 1024;

/** Where a workspace's memories live. */
export function memoryDir(workspace: string): string {
  return join(workspace, '.keel', 'memory');
}

/**
 * Why the memory folder of `workspace` is not used, or null: `.keel` or `.keel/memory` is a
 * symbolic link (a repository that ships `.keel/memory -> ~/notes` must not have Keel read or
 * write there), or not a folder. Missing is fine (no memories yet). Never throws.
 */
export function memoryFolderProblem(workspace: string): string | null {
  const dir = memoryDir(workspace);
  const chain = linkProblem(workspace, join(dir, 'x.md'));
  let linked = chain;
  try {
    if (!chain && lstatSync(dir).isSymbolicLink()) linked = '.keel/memory is a symbolic link';
  } catch {
    // Missing: fine.
  }
  if (!linked) return null;
  const rule = 'memories are read and written only in a real .keel/memory folder of the workspace, not through a link';
  try {
    const real = realpathSync(dir);
    const rel = relative(realpathSync(workspace), real);
    // The target's name is the repository's: quoted, so it prints no control characters.
    if (rel.startsWith('..') || isAbsolute(rel)) return `.keel/memory/ resolves to ${JSON.stringify(real)}, outside the workspace (${linked}): not read; ${rule}`;
  } catch {
    // A dangling link: the problem says enough.
  }
  return `${linked}: not read; ${rule}`;
}

/**
 * The memory files of one workspace (`<workspace>/.keel/memory/*.md`). Reads never throw for one
 * bad file (it is skipped and reported through `log`); a file name that is not a plain `.md` name
 * in that folder is refused (`MemoryError('invalid_name')`), so nothing outside it is ever read,
 * written or deleted through here. Nothing is followed through a link: a memory folder that is a
 * link (or sits under one) is not used at all, a memory that is a link is skipped, and files are
 * opened with O_NOFOLLOW (security/linkFreeFiles.ts). A file over MAX_MEMORY_BYTES, or one that
 * is not UTF-8 text, is skipped with a note. Writes are atomic (temp file, fsync, rename).
 */
export class MemoryStore {
  readonly dir: string;
  private toldFolder = false;

  constructor(
    readonly workspace: string,
    private readonly log?: (level: 'info' | 'warn', message: string) => void,
  ) {
    this.dir = memoryDir(workspace);
  }

  /** Why the folder is not used (see `memoryFolderProblem`), or null. */
  folderProblem(): string | null {
    return memoryFolderProblem(this.workspace);
  }

  /** The folder's modification time (changes when a file is added, removed or renamed in), or -1. */
  dirStamp(): number {
    try {
      return statSync(this.dir).mtimeMs;
    } catch {
      return -1;
    }
  }

  /** The memory files' names, sorted; none when the folder is not used (said once through `log`). */
  fileNames(): string[] {
    const problem = this.folderProblem();
    if (problem) {
      if (!this.toldFolder) this.log?.('warn', `memory: ${problem}`);
      this.toldFolder = true;
      return [];
    }
    try {
      return readdirSync(this.dir)
        .filter((n) => isMemoryFileName(n))
        .sort();
    } catch {
      return [];
    }
  }

  /** Every memory, sorted by file name (files skipped as too large or not text are reported through `log`). */
  list(): StoredMemory[] {
    const out: StoredMemory[] = [];
    for (const name of this.fileNames()) {
      const m = this.tryRead(name);
      if (m) out.push(m);
    }
    return out;
  }

  /** One memory, or null when the file is gone, unreadable or skipped (said through `log`). Throws MemoryError('invalid_name') for a bad name. */
  tryRead(file: string): StoredMemory | null {
    const e = this.readEntry(file);
    if (e && isSkipped(e)) {
      this.log?.('warn', `memory ${file}: ${e.skipped}`);
      return null;
    }
    return e;
  }

  /** The version of a file now (times, size, inode) without reading it; null when it is not a plain file. */
  stamp(file: string): FileVersion | null {
    try {
      const st = lstatSync(this.pathOf(file));
      return st.isFile() ? { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino } : null;
    } catch {
      return null;
    }
  }

  /**
   * One file of the folder as the index keeps it: a memory, or a skipped file with the reason;
   * null when it is gone, a link, not a plain file, or the folder is not used (`folderProblem`).
   * Throws MemoryError('invalid_name') for a bad name. Never reads more than MAX_MEMORY_BYTES.
   */
  readEntry(file: string): MemoryEntry | null {
    const path = this.pathOf(file);
    try {
      // lstat first: a link in a repository's memory folder could point anywhere; only plain files count.
      const st = lstatSync(path);
      if (!st.isFile()) return null;
      const version = { file, path, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino };
      if (st.size > MAX_MEMORY_BYTES) return { ...version, skipped: `not read: ${st.size} bytes, over the ${MAX_MEMORY_BYTES}-byte limit for a memory` };
      const read = readNoFollow(this.workspace, path, MAX_MEMORY_BYTES + 1);
      if (!read) return null;
      if (read.cut) return { ...version, size: read.size, skipped: `not read: over the ${MAX_MEMORY_BYTES}-byte limit for a memory` };
      const text = decodeText(read.bytes);
      if (text === null) return { ...version, skipped: 'not read: it is not UTF-8 text' };
      return { ...parseMemory(file, text), path, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino };
    } catch (err) {
      if (err instanceof LinkRefused) return null;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log?.('warn', `memory ${file} could not be read: ${errorMessage(err)}`);
      return null;
    }
  }

  /** Saves a new memory under a file name made from its title; returns the name. Throws when the folder is not used (`folderProblem`). */
  async add(m: MemoryFrontMatter & { body: string }): Promise<string> {
    const problem = this.folderProblem();
    if (problem) throw new MemoryError('io', `not saved: ${problem}`);
    makeDirsNoFollow(this.workspace, this.dir);
    const file = memoryFileNameFor(m.title, new Set(this.fileNames()));
    writeAtomicNoFollowSync(this.workspace, join(this.dir, file), serializeMemory(m));
    return file;
  }

  /** Deletes one memory (a link is removed, never what it points at). Throws MemoryError('not_found') when it is not there. */
  delete(file: string): void {
    const path = this.pathOf(file);
    const problem = this.folderProblem();
    if (problem) throw new MemoryError('not_found', `no memory ${file}: ${problem}`);
    try {
      lstatSync(path);
    } catch {
      throw new MemoryError('not_found', `no memory ${file} in ${this.dir}`);
    }
    rmSync(path, { force: true });
  }

  /** The absolute path of a memory file (for opening it in an editor). Throws for a bad name. */
  pathOf(file: string): string {
    if (!isMemoryFileName(file)) throw new MemoryError('invalid_name', `"${file}" is not a memory file name`);
    return join(this.dir, file);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The text of a file's bytes, or null when it is not text: a NUL byte, or bytes that are not UTF-8. */
function decodeText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}
