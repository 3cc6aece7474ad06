import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

function tempName(path: string): string {
  return `${path}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.tmp`;
}

/**
 * Replaces `path` with `text` so that a reader (or a crash at any instant) sees either the old
 * file or the new one, never a mix: write a temp file beside it, fsync it, rename it over the
 * target, fsync the folder so the rename itself is durable. Every step runs off the event loop
 * (libuv's thread pool). `mode` is the new file's (before the umask). When a step fails (a full
 * disk, the folder removed) the temp file is removed before this rejects: nothing is left behind.
 */
export async function writeFileAtomic(path: string, text: string | Buffer, mode = 0o666): Promise<void> {
  const tmp = tempName(path);
  try {
    const fh = await open(tmp, 'w', mode);
    try {
      await fh.writeFile(text);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await syncDir(dirname(path));
}

/**
 * The synchronous twin of {@link writeFileAtomic}, for paths that must finish before returning
 * (never a task's per-event or per-tool-round path). A failure removes the temp file too.
 */
export function writeFileAtomicSync(path: string, text: string, mode = 0o666): void {
  const tmp = tempName(path);
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      const buf = Buffer.from(text, 'utf8');
      for (let done = 0; done < buf.length; ) done += writeSync(fd, buf, done);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  syncDirSync(dirname(path));
}

/**
 * Overwrites `path` where it stands (no temp file): the last resort when there is no room for a
 * new file, since rewriting a small file within the blocks it has needs none. Not atomic: a crash
 * in the middle leaves a damaged file, which for meta.json means it is rebuilt from the log.
 */
export async function overwriteInPlace(path: string, text: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    const buf = Buffer.from(text, 'utf8');
    await fh.write(buf, 0, buf.length, 0);
    await fh.truncate(buf.length);
    await fh.datasync();
  } finally {
    await fh.close();
  }
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
