import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, readSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { inflate as inflateCb } from 'node:zlib';
import { parseGitConfig } from '../permissions/readOnly/gitConfig';
import { findRepo, runGit } from './git';

/**
 * Before-images git already holds (docs/persistence.md, "Checkpoints"): a file the agent edits
 * in a repository is usually tracked and clean, so its exact content is a blob in the
 * repository's object store, and the checkpoint can name that blob instead of copying the bytes.
 *
 * Looking up is done without starting git (it happens before every Write): the blob id is
 * computed here, and looked for as a loose object (whose content is checked) or in the pack
 * indexes (`.idx`, version 2: a fanout table, then the sorted names, searched with a few small
 * reads). Only a plain repository whose `.git` folder is the workspace's own is used: a `.git`
 * file (a linked worktree, a submodule), a `commondir`, object alternates, links for `.git` or
 * `objects`, or an object format this build does not know — git is not used, the bytes are kept.
 *
 * The repository is untrusted content: what it gives back on a rewind is checked against the
 * content hash the checkpoint recorded (`CheckpointStore.read`), so a damaged or planted object
 * is reported, never restored. Reading a packed object starts git, the hardened way (git.ts).
 */

export type ObjectFormat = 'sha1' | 'sha256';

/** git's id of a blob holding `content`: the hash of `blob <length>\0` and the content. */
export function gitBlobId(content: Uint8Array, format: ObjectFormat = 'sha1'): string {
  return createHash(format).update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Why a before-image kept as a git object cannot be given back; the message is for the person. */
export class GitBlobError extends Error {
  constructor(
    readonly kind: 'missing' | 'corrupt' | 'unusable',
    message: string,
  ) {
    super(message);
    this.name = 'GitBlobError';
  }
}

/** Below this size a before-image is kept as bytes: a reference would save next to nothing. */
export const MIN_GIT_REFERENCE = 1024;

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

interface ObjectStore {
  objects: string;
  format: ObjectFormat;
}

interface PackIndex {
  path: string;
  sig: string;
  count: number;
  fanout: number[];
}

const inflate = promisify(inflateCb);
const IDX_MAGIC = 0xff744f63;
const IDX_HEADER = 8 + 256 * 4;

/**
 * The object store of the repository whose `.git` folder is `workspace/.git`, looked up without
 * git. One per task's checkpoints; what it reads of the repository is cached by file identity
 * and read again when it changes.
 */
export class GitObjects {
  private configSig = '';
  private configFormat: ObjectFormat | null = null;
  private packDirSig = '';
  private indexes: PackIndex[] = [];

  constructor(readonly workspace: string) {}

  /** The repository's object store, or null when this workspace's git is not one Keel reads. */
  private store(): ObjectStore | null {
    const gitDir = join(this.workspace, '.git');
    if (!lstatOrNull(gitDir)?.isDirectory()) return null;
    const objects = join(gitDir, 'objects');
    if (!lstatOrNull(objects)?.isDirectory() || !lstatOrNull(join(gitDir, 'HEAD'))?.isFile() || !lstatOrNull(join(gitDir, 'refs'))?.isDirectory()) return null;
    if (lstatOrNull(join(gitDir, 'commondir')) || lstatOrNull(join(objects, 'info', 'alternates'))) return null;
    const format = this.objectFormat(join(gitDir, 'config'));
    return format ? { objects, format } : null;
  }

  private objectFormat(configPath: string): ObjectFormat | null {
    const st = lstatOrNull(configPath);
    if (!st?.isFile() || st.size > 1_000_000) return null;
    const sig = `${st.size}:${st.mtimeMs}:${st.ino}`;
    if (sig !== this.configSig) {
      const entries = parseGitConfig(readFileSync(configPath, 'utf8'));
      const value = entries?.filter((e) => e.section === 'extensions' && e.subsection === undefined && e.key === 'objectformat').pop()?.value?.toLowerCase();
      this.configFormat = !entries ? null : value === undefined || value === 'sha1' ? 'sha1' : value === 'sha256' ? 'sha256' : null;
      this.configSig = sig;
    }
    return this.configFormat;
  }

  /**
   * git's id for `content` when the repository holds exactly that blob (a loose object whose
   * content was checked, or a name in a pack index: a packed object's content is checked only
 * when it is read back), else null. Never rejects, never starts git. The loose object is read and
 * decompressed off the event loop.
   */
  async reference(content: Buffer): Promise<string | null> {
    try {
      const repo = this.store();
      if (!repo) return null;
      const id = gitBlobId(content, repo.format);
      const loose = await readLoose(repo.objects, id, content.length);
      if (loose) return loose.equals(content) ? id : null;
      return this.inPack(repo, id) ? id : null;
    } catch {
      return null;
    }
  }

  /**
   * The content of blob `id`, as the repository gives it (not yet checked against what was
   * recorded: the caller does that). Throws GitBlobError when the repository no longer has it,
   * or git cannot be used to read it.
   */
  async read(id: string, size: number): Promise<Buffer> {
    if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id)) throw new GitBlobError('corrupt', `the checkpoint names git object "${id.slice(0, 80)}", which is not an object id`);
    const repo = this.store();
    if (!repo) {
      const why = 'no .git folder of its own, or one borrowing objects from elsewhere';
      throw new GitBlobError('missing', `its before-image is git's object ${id}, and the workspace is no longer a git repository Keel reads (${why})`);
    }
    let loose: Buffer | null;
    try {
      loose = await readLoose(repo.objects, id, size);
    } catch (err) {
      throw new GitBlobError('corrupt', `git's object ${id}, kept as its before-image, cannot be read (${(err as Error).message})`);
    }
    if (loose) return loose;
    if (!this.inPack(repo, id)) {
      throw new GitBlobError('missing', `its before-image is git's object ${id}, which the repository no longer has (its history was rewritten and pruned?)`);
    }
    const found = await findRepo(this.workspace, homedir());
    if (!found.repo) throw new GitBlobError('unusable', `its before-image is git's object ${id}, packed in the repository, and git is not used here${found.note ? ` (${found.note})` : ''}`);
    const r = await runGit(this.workspace, ['cat-file', 'blob', id], undefined, size + 1);
    if (r.code !== 0) throw new GitBlobError('corrupt', `git could not read its object ${id}, kept as this file's before-image${r.stderr.trim() ? ` (${r.stderr.trim().split('\n')[0]})` : ''}`);
    return r.stdout;
  }

  /** True when a pack index of the repository names `id`. */
  private inPack(repo: ObjectStore, id: string): boolean {
    const name = Buffer.from(id, 'hex');
    for (const idx of this.packIndexes(repo)) {
      if (name.length === (repo.format === 'sha1' ? 20 : 32) && hasName(idx, name)) return true;
    }
    return false;
  }

  /** The pack indexes, listed again when the pack folder changes (a fetch, a gc, a repack). */
  private packIndexes(repo: ObjectStore): PackIndex[] {
    const dir = join(repo.objects, 'pack');
    const st = lstatOrNull(dir);
    if (!st?.isDirectory()) return [];
    const dirSig = `${dir}:${st.mtimeMs}:${st.ino}`;
    const names = dirSig === this.packDirSig ? null : readdirSync(dir);
    const out: PackIndex[] = [];
    const paths = names ? names.filter((n) => n.endsWith('.idx') && names.includes(`${n.slice(0, -4)}.pack`)).map((n) => join(dir, n)) : this.indexes.map((i) => i.path);
    const hashLen = repo.format === 'sha1' ? 20 : 32;
    for (const p of paths) {
      const ist = lstatOrNull(p);
      if (!ist?.isFile()) continue;
      const sig = `${ist.size}:${ist.mtimeMs}:${ist.ino}:${hashLen}`;
      const known = this.indexes.find((i) => i.path === p);
      if (known && known.sig === sig) out.push(known);
      else {
        const idx = readIndexHeader(p, sig, ist.size, hashLen);
        if (idx) out.push(idx);
      }
    }
    this.indexes = out;
    this.packDirSig = dirSig;
    return out;
  }
}

/** A version 2 pack index's fanout table; null when the file is not one. */
function readIndexHeader(path: string, sig: string, fileSize: number, hashLen: number): PackIndex | null {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(IDX_HEADER);
    if (readSync(fd, head, 0, IDX_HEADER, 0) !== IDX_HEADER) return null;
    if (head.readUInt32BE(0) !== IDX_MAGIC || head.readUInt32BE(4) !== 2) return null;
    const fanout: number[] = [];
    for (let k = 0; k < 256; k++) {
      const v = head.readUInt32BE(8 + k * 4);
      if (k > 0 && v < fanout[k - 1]!) return null;
      fanout.push(v);
    }
    const count = fanout[255]!;
    // Names, CRCs, offsets and the two trailing checksums at least.
    if (fileSize < IDX_HEADER + count * (hashLen + 8) + 2 * hashLen) return null;
    return { path, sig, count, fanout };
  } finally {
    closeSync(fd);
  }
}

/** Binary search of the sorted names of `idx` (reads one name per probe). */
export function hasName(idx: { path: string; fanout: number[] }, name: Buffer): boolean {
  const first = name[0]!;
  let lo = first === 0 ? 0 : idx.fanout[first - 1]!;
  let hi = idx.fanout[first]!;
  if (lo >= hi) return false;
  const fd = openSync(idx.path, 'r');
  try {
    const probe = Buffer.alloc(name.length);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (readSync(fd, probe, 0, name.length, IDX_HEADER + mid * name.length) !== name.length) return false;
      const c = probe.compare(name);
      if (c === 0) return true;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * The content of loose object `id` when it is a blob of `size` bytes; null when there is no such
 * loose object. Throws when there is one but it is not that (damaged, another type or size).
 */
async function readLoose(objects: string, id: string, size: number): Promise<Buffer | null> {
  const p = join(objects, id.slice(0, 2), id.slice(2));
  const st = lstatOrNull(p);
  if (!st) return null;
  if (!st.isFile()) throw new Error('it is not a file');
  // zlib never makes data much larger: a bigger file is not this object (and is not read).
  if (st.size > size + Math.ceil(size / 1000) + 1024) throw new Error(`it is ${st.size} bytes, too large for a blob of ${size}`);
  const header = Buffer.from(`blob ${size}\0`, 'latin1');
  let raw: Buffer;
  try {
    raw = await inflate(await readFile(p), { maxOutputLength: header.length + size + 1 });
  } catch (err) {
    throw new Error(`it does not decompress: ${(err as Error).message}`);
  }
  if (raw.length !== header.length + size || !raw.subarray(0, header.length).equals(header)) throw new Error(`it is not a blob of ${size} bytes`);
  return raw.subarray(header.length);
}
