import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Content digests for the trust model (docs/permissions.md, "Trust"): an approval is for exact
 * content, so every fingerprint is a SHA-256 of what will be used or run. Pure except for the
 * file reads, which never throw.
 */

/** SHA-256 (hex) of a canonical JSON rendering of `value`. */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

/** SHA-256 (hex) of text. */
export function digestText(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Files larger than this are digested as "too large" (and change with their size and mtime). */
export const MAX_DIGEST_BYTES = 16 * 1024 * 1024;

/**
 * The digest of a file's content as the kernel would open it now (links followed: what runs is
 * the target's content), `absent` when there is none, `not-a-file` for a folder or a device,
 * `unreadable` when it cannot be read. Never throws.
 */
export function fileDigest(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'absent' : 'unreadable';
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return 'not-a-file';
    if (st.size > MAX_DIGEST_BYTES) return `too-large:${st.size}:${st.mtimeMs}:${st.ino}`;
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      hash.update(buf.subarray(0, n));
    }
    return hash.digest('hex');
  } catch {
    return 'unreadable';
  } finally {
    closeSync(fd);
  }
}
