import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
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

/**
 * The synchronous twin of {@link writeFileAtomic}, for creation paths that must finish before
 * returning. `mode` is the new file's (before the umask); it holds from the first byte written.
 */
export function writeFileAtomicSync(path: string, text: string, mode = 0o666): void {
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDirSync(dirname(path));
}

/** Writes `value` as JSON atomically, for this user only: the file 0600, a folder it creates 0700. */
export function writePrivateJsonSync(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(path, `${JSON.stringify(value, null, 2)}\n`, 0o600);
}

/** Reads a JSON file checked by `schema`: `fallback()` when it is missing, unreadable or not valid. */
export function readJsonOr<T>(path: string, schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }, fallback: () => T): T {
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // Missing or unreadable: the fallback.
  }
  return fallback();
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
