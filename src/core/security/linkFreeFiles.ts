import { closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { syncDirSync } from '../store/atomicFile';

/**
 * Files Keel itself reads and writes inside a workspace on the person's behalf (a loop's
 * `.keel/loop/<name>/…`, the memories in `.keel/memory/`), opened so that a link a cloned
 * repository (or a command) planted cannot redirect them: no component between the workspace
 * root and the file may be a symbolic link (each is checked with lstat), and the file itself is
 * opened with O_NOFOLLOW (and O_NONBLOCK, so a planted FIFO cannot hang a read) and must be a
 * regular file. A refusal throws `LinkRefused` with a message for people.
 *
 * The workspace root itself may be a link (`/tmp` on macOS): only what is below it is checked.
 * What is left, stated plainly: a folder swapped for a link by another process between the check
 * and the open (Node has no openat()); the commands that could do that ask first.
 */
export class LinkRefused extends Error {
  override readonly name = 'LinkRefused';
  constructor(
    message: string,
    /** The path (relative to the workspace) that is a link or not what it should be. */
    readonly at: string,
  ) {
    super(message);
  }
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

function errno(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** The components of `path` below `root`, as absolute paths, outermost first. Throws when `path` is not below `root`. */
function componentsBelow(root: string, path: string): string[] {
  const r = resolve(root);
  const p = resolve(path);
  const rel = relative(r, p);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw new LinkRefused(`${p} is not inside ${r}`, p);
  const out: string[] = [];
  let at = r;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    out.push(at);
  }
  return out;
}

/**
 * Checks the folders between `root` and `path` (not `path` itself): each that exists must be a
 * real folder, not a link. Missing ones are fine (nothing can be redirected through them). Throws
 * LinkRefused.
 */
export function checkFolderChain(root: string, path: string): void {
  const parts = componentsBelow(root, path).slice(0, -1);
  for (const p of parts) {
    let st;
    try {
      st = lstatSync(p);
    } catch (err) {
      if (errno(err) === 'ENOENT') return;
      throw err;
    }
    const shown = relative(resolve(root), p);
    if (st.isSymbolicLink()) throw new LinkRefused(`${shown} is a symbolic link`, shown);
    if (!st.isDirectory()) throw new LinkRefused(`${shown} is not a folder`, shown);
  }
}

/**
 * Why `path` (below `root`) is not a link-free place for a file: a link or a non-folder in its
 * folder chain, or the file itself a link or not a regular file. Null when it is fine (the file
 * may be missing). Never throws.
 */
export function linkProblem(root: string, path: string): string | null {
  try {
    checkFolderChain(root, path);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return `${relative(resolve(root), resolve(path))} is a symbolic link`;
    if (!st.isFile()) return `${relative(resolve(root), resolve(path))} is not a regular file`;
    return null;
  } catch (err) {
    if (errno(err) === 'ENOENT') return null;
    return err instanceof Error ? err.message : String(err);
  }
}

/** Creates the folder `dir` below `root` and its missing parents, one at a time, refusing links on the way. */
export function makeDirsNoFollow(root: string, dir: string): void {
  for (const p of componentsBelow(root, dir)) {
    try {
      mkdirSync(p);
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
    }
    const st = lstatSync(p);
    const shown = relative(resolve(root), p);
    if (st.isSymbolicLink()) throw new LinkRefused(`${shown} is a symbolic link`, shown);
    if (!st.isDirectory()) throw new LinkRefused(`${shown} is not a folder`, shown);
  }
}

function openChecked(root: string, path: string, flags: number, mode?: number): number {
  checkFolderChain(root, path);
  let fd: number;
  try {
    fd = openSync(path, flags | NOFOLLOW | NONBLOCK, mode);
  } catch (err) {
    const shown = relative(resolve(root), resolve(path));
    // ELOOP: the last component is a link (O_NOFOLLOW); EMLINK on FreeBSD.
    if (errno(err) === 'ELOOP' || errno(err) === 'EMLINK') throw new LinkRefused(`${shown} is a symbolic link`, shown);
    throw err;
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    const shown = relative(resolve(root), resolve(path));
    throw new LinkRefused(`${shown} is not a regular file`, shown);
  }
  return fd;
}

export interface ReadResult {
  /** The bytes read, decoded as UTF-8 (invalid sequences become U+FFFD; `bytes` has them as they are). */
  text: string;
  bytes: Buffer;
  /** The file's size in bytes (may exceed what was read when `maxBytes` cut it). */
  size: number;
  mtimeMs: number;
  /** True when only the first `maxBytes` were read. */
  cut: boolean;
}

/**
 * Reads a text file below `root` without following links: undefined when it does not exist.
 * Throws LinkRefused for a link (anywhere below `root`) or a non-file, and I/O errors as they are.
 * With `maxBytes`, reads at most that many bytes (`cut` says so).
 */
export function readNoFollow(root: string, path: string, maxBytes?: number): ReadResult | undefined {
  let fd: number;
  try {
    fd = openChecked(root, path, constants.O_RDONLY);
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const want = maxBytes === undefined ? st.size : Math.min(st.size, maxBytes);
    const chunks: Buffer[] = [];
    let got = 0;
    // Read until EOF (or the cap): the size may change while reading.
    for (;;) {
      const room = maxBytes === undefined ? Math.max(65_536, want - got) : maxBytes - got;
      if (room <= 0) break;
      const buf = Buffer.allocUnsafe(Math.min(room, 1 << 20));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      got += n;
    }
    const data = Buffer.concat(chunks, got);
    return { text: data.toString('utf8'), bytes: data, size: Math.max(st.size, got), mtimeMs: st.mtimeMs, cut: maxBytes !== undefined && st.size > got };
  } finally {
    closeSync(fd);
  }
}

/** The text of a file below `root`, '' when it does not exist. Throws LinkRefused and I/O errors. */
export function readTextNoFollow(root: string, path: string): string {
  return readNoFollow(root, path)?.text ?? '';
}

/**
 * Writes (or with `append`, appends to) a file below `root` without following links; creates it
 * when missing. Throws LinkRefused and I/O errors.
 */
export function writeNoFollowSync(root: string, path: string, text: string, opts: { append?: boolean } = {}): void {
  const fd = openChecked(root, path, constants.O_WRONLY | constants.O_CREAT | (opts.append ? constants.O_APPEND : constants.O_TRUNC), 0o666);
  try {
    // O_NONBLOCK does not apply to regular files; the write completes.
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces a file below `root` atomically (temp file created exclusively beside it, fsync,
 * rename, fsync of the folder) after checking that no folder on the way is a link. A link at the
 * file's own place is replaced by the new file, never followed (rename does not follow it).
 */
export function writeAtomicNoFollowSync(root: string, path: string, text: string, mode = 0o666): void {
  checkFolderChain(root, path);
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  syncDirSync(dirname(path));
}
