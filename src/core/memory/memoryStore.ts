import { lstatSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomicFile';
import { makeDirs } from '../store/makeDirs';
import { isMemoryFileName, memoryFileNameFor, parseMemory, serializeMemory, type Memory, type MemoryFrontMatter } from './memoryFile';

/** One memory file as listed: its memory and what identifies this version of the file. */
export interface StoredMemory extends Memory {
  path: string;
  mtimeMs: number;
  size: number;
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

/** Where a workspace's memories live. */
export function memoryDir(workspace: string): string {
  return join(workspace, '.keel', 'memory');
}

/**
 * The memory files of one workspace (`<workspace>/.keel/memory/*.md`). Reads never throw for one
 * bad file (it is skipped and reported through `log`); a file name that is not a plain `.md` name
 * in that folder is refused (`MemoryError('invalid_name')`), so nothing outside it is ever read,
 * written or deleted through here. Writes are atomic (temp file, fsync, rename).
 */
export class MemoryStore {
  readonly dir: string;

  constructor(
    readonly workspace: string,
    private readonly log?: (level: 'info' | 'warn', message: string) => void,
  ) {
    this.dir = memoryDir(workspace);
  }

  /** The folder's modification time (changes when a file is added, removed or renamed in), or -1. */
  dirStamp(): number {
    try {
      return statSync(this.dir).mtimeMs;
    } catch {
      return -1;
    }
  }

  /** The memory files' names, sorted. */
  fileNames(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((n) => isMemoryFileName(n))
        .sort();
    } catch {
      return [];
    }
  }

  /** Every memory, sorted by file name. */
  list(): StoredMemory[] {
    const out: StoredMemory[] = [];
    for (const name of this.fileNames()) {
      const m = this.tryRead(name);
      if (m) out.push(m);
    }
    return out;
  }

  /** One memory, or null when the file is gone or unreadable. Throws MemoryError('invalid_name') for a bad name. */
  tryRead(file: string): StoredMemory | null {
    const path = this.pathOf(file);
    try {
      // lstat: a link in a repository's memory folder could point anywhere; only plain files count.
      const st = lstatSync(path);
      if (!st.isFile()) return null;
      const text = readFileSync(path, 'utf8');
      return { ...parseMemory(file, text), path, mtimeMs: st.mtimeMs, size: st.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log?.('warn', `memory ${file} could not be read: ${(err as Error).message}`);
      return null;
    }
  }

  /** Saves a new memory under a file name made from its title; returns the name. */
  async add(m: MemoryFrontMatter & { body: string }): Promise<string> {
    makeDirs(this.dir);
    const file = memoryFileNameFor(m.title, new Set(this.fileNames()));
    await writeFileAtomic(join(this.dir, file), serializeMemory(m));
    return file;
  }

  /** Deletes one memory. Throws MemoryError('not_found') when it is not there. */
  delete(file: string): void {
    const path = this.pathOf(file);
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
