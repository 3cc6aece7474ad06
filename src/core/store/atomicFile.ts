import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Replaces `path` with `text` so that a reader (or a crash at any instant) sees either the old
 * file or the new one, never a mix: write a temp file beside it, fsync it, rename it over the
 * target, fsync the folder so the rename itself is durable.
 */
export async function writeFileAtomic(path: string, text: string | Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await syncDir(dirname(path));
}

/** The synchronous twin of {@link writeFileAtomic}, for creation paths that must finish before returning. */
export function writeFileAtomicSync(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDirSync(dirname(path));
}

/** Makes a folder's entries (a rename into it) durable. Never throws: some file systems refuse fsync on a folder. */
export function syncDirSync(dir: string): void {
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // The rename is still atomic.
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic.
  }
}
