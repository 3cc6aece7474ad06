import { copyFileSync, linkSync, mkdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { containsSecret } from '../security/secrets';
import { writeFileAtomicSync } from '../store/atomicFile';
import { encodeBlob, unpackPayload, type EncodedBlob } from './blobCodec';
import { Pieces } from './delta';
import { hasBase, hashContent, type ContentHash, type PackRecord } from './format';
import { GitBlobError, MIN_GIT_REFERENCE, type GitObjects } from './gitObjects';
import { PackMovedError, PackWriter, readBody, scanPack, type BlobLocation } from './pack';
import { listPacks, nextPackNumber, readIndex, sweepRecompactions, type BlobRecord, type CheckpointIndex, type LinkedPack } from './packFiles';
import { Recompactor, type RecompactStats } from './recompact';

/** Why a file's content is not kept (`putFile`); the file is named as not restorable with it. */
export const SECRET_REFUSAL = 'it holds a key or token, which Keel never stores';

/**
 * A task's checkpoints: content-addressed blobs and the records that say which step changed which
 * file, in `tasks/<id>/checkpoints/` beside the task's log (docs/persistence.md, "Checkpoints").
 *
 * ```
 * checkpoints/
 *   packs/000001.pack     this task's own packs, one per writing process, in the order written
 *   linked/000001.pack    a fork's parent's packs (hard links: the same bytes, shared)
 *   linked.json           [{file, bytes}]: the linked packs, oldest first, each read only up
 *                         to the size it had when the fork was made
 * ```
 *
 * Packs are shared by hard links, so a blob lives as long as the last task that links its pack:
 * deleting a task's folder frees exactly what no other task uses, and nothing is counted or
 * collected. A writer never appends to a pack it did not create, so a pack another task links is
 * never changed under it; recompaction (recompact.ts) writes a pack anew and renames it over the
 * old one, only while no other task links it.
 */

/** A chain longer than this is cut by storing the next version whole. */
const MAX_CHAIN = 4000;
/** Bytes of recent contents kept in memory as delta bases. */
const BASE_CACHE_BYTES = 64 * 1024 * 1024;

export type { BlobRecord, CheckpointIndex } from './packFiles';

export class CheckpointStore {
  private index: CheckpointIndex | null = null;
  private loading: Promise<CheckpointIndex> | null = null;
  private writer: PackWriter | null = null;
  private creating: Promise<PackWriter> | null = null;
  /** Newest stored content per path, as a delta base (LRU by insertion order). */
  private readonly bases = new Map<string, { hash: ContentHash; content: Buffer }>();
  private baseBytes = 0;
  private readonly depth = new Map<ContentHash, number>();
  private readonly recompactor: Recompactor;

  /**
   * @param git the workspace's git object store: a whole before-image git already holds is kept
   *   as a reference to its blob, not copied (null: always copied).
   * @param options.warn where a background recompaction's failure is said (it loses nothing);
   *   `recompact: false` keeps whole copies as first stored (a short-lived store: a rewind's).
   */
  constructor(
    readonly dir: string,
    private readonly git: GitObjects | null = null,
    options: { warn?: (message: string) => void; recompact?: boolean } = {},
  ) {
    this.recompactor = new Recompactor(
      {
        wholeCopy: (hash) => {
          const b = this.index?.blobs.get(hash);
          if (!b?.at || b.encoding !== 'br') return null;
          return { at: b.at, size: b.size, payloadBytes: b.at.bodyLength - blobHeaderLength(b) };
        },
        content: (hash) => this.read(hash),
        writer: () => (this.writer && !this.writer.failed ? this.writer : null),
        moved: (file, from, shift, hash, at) => this.moved(file, from, shift, hash, at),
      },
      options.warn,
    );
    if (options.recompact === false) this.recompactor.stop();
  }

  /**
   * Resolves once the background recompaction of large whole copies is done (or had nothing to
   * do): what is queued is made durable first, so its recompaction may start.
   */
  async recompacted(): Promise<void> {
    await this.sync();
    await this.recompactor.idle();
  }

  /** What the background recompaction did so far. */
  get recompaction(): RecompactStats {
    return this.recompactor.stats;
  }

  /** Reads every pack once (later calls share the result, and writes keep it current). */
  load(): Promise<CheckpointIndex> {
    if (this.index) return Promise.resolve(this.index);
    this.loading ??= readIndex(this.dir).then((idx) => {
      this.index = idx;
      return idx;
    });
    return this.loading;
  }

  /** Forgets what was read, so the next `load` reads the packs again (another process wrote). */
  reload(): void {
    if (this.writer || this.creating) return;
    this.index = null;
    this.loading = null;
  }

  /** Bytes this task's checkpoints hold on disk (its own packs and the ones it shares). */
  async storedBytes(): Promise<number> {
    const idx = await this.load();
    return idx.ownBytes + idx.linkedBytes + (this.writer?.bytes ?? 0);
  }

  /**
   * True when the content `hash` stands for is rebuilt from a git object (kept as a reference, or
   * a delta on one): reading it may fail because the repository no longer holds that object.
   */
  async fromGit(hash: ContentHash): Promise<boolean> {
    const idx = await this.load();
    let h: ContentHash | undefined = hash;
    for (let n = 0; h && n <= MAX_CHAIN + 1; n++) {
      const b = idx.blobs.get(h);
      if (!b) return false;
      if (b.encoding === 'git') return true;
      h = hasBase(b.encoding) ? b.base : undefined;
    }
    return false;
  }

  /**
   * The content `hash` stands for. Throws when it is missing or damaged; GitBlobError (whose
   * message says so plainly) when it rests on a git object the repository no longer holds, or
   * one that does not hold what was recorded.
   */
  async read(hash: ContentHash): Promise<Buffer> {
    try {
      return await this.readOnce(hash);
    } catch (err) {
      // Another process recompacted a pack since it was scanned: scan it again, once.
      if (!(err instanceof PackMovedError)) throw err;
      await this.rescan(err.file);
      return this.readOnce(hash);
    }
  }

  private async readOnce(hash: ContentHash): Promise<Buffer> {
    const idx = await this.load();
    const chain: BlobRecord[] = [];
    let h: ContentHash | undefined = hash;
    while (h) {
      const b = idx.blobs.get(h);
      if (!b) throw new Error(chain.length ? `the base ${h} of a stored version is missing` : `no stored content ${h}`);
      chain.push(b);
      if (chain.length > MAX_CHAIN + 1) throw new Error(`the chain of ${hash} is longer than ${MAX_CHAIN}`);
      h = hasBase(b.encoding) ? b.base : undefined;
    }
    const root = chain.pop()!;
    let pieces = Pieces.of(root.encoding === 'git' ? await this.fromGitObject(root) : await payloadOf(root));
    for (let k = chain.length - 1; k >= 0; k--) {
      const b = chain[k]!;
      pieces = b.encoding === 'splice' ? pieces.splice(await payloadOf(b), b.size) : pieces.apply(await payloadOf(b));
    }
    const out = pieces.bytes();
    if (hashContent(out) !== hash) throw new Error(`stored content ${hash} does not match its address`);
    return out;
  }

  /**
   * Stores `content` unless it is already here (content addressing: the same bytes are kept
   * once, whichever step or fork needs them), as a delta against the last content stored for
   * `path` when that is smaller. Queued: `sync()` makes it durable. For what Keel itself writes
   * (a command's manifest); a file's content goes through `putFile`.
   */
  async put(content: Buffer, path?: string): Promise<{ hash: ContentHash; added: number }> {
    const r = await this.add(content, path, hashContent(content), null);
    if ('refused' in r) throw new Error(r.refused);
    return r;
  }

  /**
   * Stores a file's content as `put` does, unless it holds a key or token (the shared detector,
   * security/secrets.ts): then nothing is stored and the reason is returned — the task's storage
   * never holds a secret, as its log does not. The scan runs on this thread while the content is
   * compressed on libuv's pool (the two are a before-image's cost on the path of every Write); a
   * content already stored was scanned when it was stored, and is not scanned again. `hash`: the
   * content's, when the caller has it already.
   */
  putFile(content: Buffer, path: string, hash: ContentHash = hashContent(content)): Promise<{ hash: ContentHash; added: number } | { refused: string }> {
    return this.add(content, path, hash, () => (containsSecret(content.toString('utf8')) ? SECRET_REFUSAL : null));
  }

  private async add(content: Buffer, path: string | undefined, hash: ContentHash, refuse: (() => string | null) | null): Promise<{ hash: ContentHash; added: number } | { refused: string }> {
    const idx = await this.load();
    if (idx.blobs.has(hash)) {
      if (path) this.remember(path, hash, content);
      return { hash, added: 0 };
    }
    const prev = path ? this.bases.get(path) : undefined;
    const base = prev && prev.hash !== hash && this.depthOf(idx, prev.hash) < MAX_CHAIN ? prev : undefined;
    // A whole copy git already holds is named, not copied (asked first: a lookup costs a hash
    // and a few small reads, compressing a large file tens of milliseconds).
    const gitWorthy = !!path && !path.startsWith('\0') && content.length >= MIN_GIT_REFERENCE && this.git !== null;
    // The scan (on this thread) starts once the compression is on the pool — not before: the
    // git lookup ahead of it resumes on this thread, and would wait for the whole scan.
    let compressing!: () => void;
    const handedOff = new Promise<void>((resolve) => (compressing = resolve));
    const encoding = (async () => {
      let enc = !base && gitWorthy ? await this.gitReference(content) : null;
      if (!enc) {
        const encoded = encodeBlob(content, base);
        compressing();
        enc = await encoded;
      }
      if (!hasBase(enc.encoding) && enc.encoding !== 'git' && base && gitWorthy) enc = (await this.gitReference(content)) ?? enc;
      return enc;
    })();
    void encoding.catch(() => undefined); // a refused content's compression is dropped, and its failure with it
    if (refuse) await Promise.race([handedOff, encoding.then(() => undefined, () => undefined)]);
    const refused = refuse ? refuse() : null;
    if (refused !== null) return { refused };
    const enc = await encoding;
    // Stored meanwhile by another call of this writer.
    if (idx.blobs.has(hash)) return { hash, added: 0 };
    const rec: PackRecord = { type: 'blob', hash, size: content.length, encoding: enc.encoding, payload: enc.payload, ...(enc.base ? { base: enc.base } : {}) };
    const writer = await this.openWriter();
    const before = writer.bytes;
    const at = writer.append(rec);
    const { payload, ...head } = rec;
    idx.blobs.set(hash, at ? { ...head, at } : { ...head, inline: payload });
    if (at && enc.encoding === 'br') this.recompactor.offer(hash, content.length);
    this.depth.set(hash, enc.base ? (this.depth.get(enc.base) ?? 0) + 1 : 0);
    if (path) this.remember(path, hash, content);
    return { hash, added: writer.bytes - before };
  }

  /** Queues a record other than a blob (a mark, an anchor, a command bracket). */
  async append(rec: Exclude<PackRecord, { type: 'blob' }>): Promise<void> {
    const idx = await this.load();
    const writer = await this.openWriter();
    writer.append(rec);
    idx.records.push(rec);
  }

  /**
   * Makes everything queued durable (fdatasync). When that fails, what this process knows is
   * forgotten (the next `load` reads the packs as they are on disk, so a content that did not
   * reach the disk is stored again, never taken as kept) and the next record starts a new pack.
   */
  async sync(): Promise<void> {
    if (this.creating) await this.creating;
    const writer = this.writer;
    if (!writer) return;
    try {
      await writer.sync();
      // What was offered for recompaction is durable now: it may start (in the background).
      this.recompactor.kick();
    } catch (err) {
      if (this.writer === writer) {
        this.writer = null;
        this.index = null;
        this.loading = null;
        this.depth.clear();
        this.bases.clear();
        this.baseBytes = 0;
        void writer.close().catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * Closes the pack. Recompaction stops: the copies queued keep their first encoding; the one
   * being rewritten is finished in the background (`recompacted()` waits for it).
   */
  async close(): Promise<void> {
    this.recompactor.stop();
    if (this.creating) await this.creating.catch(() => undefined);
    await this.writer?.close().catch(() => undefined);
    this.writer = null;
  }

  /**
   * Makes `forkDir` share this task's checkpoints as they are now: each pack is hard-linked
   * (copied where the file system cannot link), and `linked.json` records how much of each the
   * fork may read. What this task writes later is never seen by the fork.
   */
  async shareWith(forkDir: string): Promise<void> {
    await this.sync();
    const mine = await listPacks(this.dir);
    mkdirSync(join(forkDir, 'linked'), { recursive: true });
    const out: LinkedPack[] = [];
    let n = 0;
    for (const p of mine) {
      const name = `${String(++n).padStart(6, '0')}.pack`;
      const to = join(forkDir, 'linked', name);
      try {
        linkSync(p.path, to);
      } catch {
        copyFileSync(p.path, to);
      }
      // Measured on the file linked, not the one listed: a writer recompacting its pack may have
      // renamed a new one over that name meanwhile (the link holds whichever it got, whole).
      const bytes = Math.min((await scanPack(to, p.limit)).validBytes, p.limit);
      if (statSync(to).nlink === 1) truncateSync(to, bytes);
      out.push({ file: `linked/${name}`, bytes });
    }
    writeFileAtomicSync(join(forkDir, 'linked.json'), `${JSON.stringify({ packs: out }, null, 2)}\n`);
  }

  /** `content` as a reference to the git blob holding it, when the repository has one. */
  private async gitReference(content: Buffer): Promise<EncodedBlob | null> {
    const id = await this.git?.reference(content);
    return id ? { encoding: 'git', payload: Buffer.from(id, 'hex') } : null;
  }

  /** The content of a blob kept as a git object, checked against what was recorded. */
  private async fromGitObject(b: BlobRecord): Promise<Buffer> {
    const payload = await payloadOf(b);
    const id = payload.toString('hex');
    if (!this.git) throw new GitBlobError('unusable', `its before-image is git's object ${id}, and this rewind does not know the task's workspace to read it from`);
    const content = await this.git.read(id, b.size);
    if (content.length !== b.size || hashContent(content) !== b.hash) {
      throw new GitBlobError('corrupt', `git's object ${id}, kept as its before-image, does not hold what was recorded (the repository's copy is damaged or was replaced): it is not restored`);
    }
    return content;
  }

  /** How many deltas lie between `hash` and a whole copy (memoised; a missing base counts as whole). */
  private depthOf(idx: CheckpointIndex, hash: ContentHash): number {
    const walk: ContentHash[] = [];
    let h: ContentHash = hash;
    // The depth of the version below the last one walked (-1: the last one walked is whole).
    let below = -1;
    for (;;) {
      const cached = this.depth.get(h);
      if (cached !== undefined) {
        below = cached;
        break;
      }
      walk.push(h);
      const b = idx.blobs.get(h);
      if (!b || !hasBase(b.encoding) || !b.base || walk.length > MAX_CHAIN * 2) break;
      h = b.base;
    }
    for (let k = walk.length - 1; k >= 0; k--) this.depth.set(walk[k]!, ++below);
    return this.depth.get(hash) ?? 0;
  }

  private remember(path: string, hash: ContentHash, content: Buffer): void {
    const old = this.bases.get(path);
    if (old) {
      this.baseBytes -= old.content.length;
      this.bases.delete(path);
    }
    if (content.length > BASE_CACHE_BYTES / 4) return;
    this.bases.set(path, { hash, content });
    this.baseBytes += content.length;
    for (const [k, v] of this.bases) {
      if (this.baseBytes <= BASE_CACHE_BYTES) break;
      this.bases.delete(k);
      this.baseBytes -= v.content.length;
    }
  }

  /** After a pack was recompacted: the locations in it after `from` moved `shift` bytes earlier. */
  private moved(file: string, from: number, shift: number, hash: ContentHash, at: BlobLocation): void {
    const idx = this.index;
    if (!idx) return;
    for (const [h, b] of idx.blobs) {
      if (!b.at || b.at.file !== file) continue;
      if (h === hash) idx.blobs.set(h, { ...b, at });
      else if (b.at.frameOffset > from) idx.blobs.set(h, { ...b, at: { ...b.at, frameOffset: b.at.frameOffset - shift, bodyOffset: b.at.bodyOffset - shift } });
    }
  }

  /** Reads `file` again and takes where its blobs are now (another process recompacted it). */
  private async rescan(file: string): Promise<void> {
    const idx = await this.load();
    const scan = await scanPack(file);
    for (const r of scan.records) {
      if (r.type !== 'blob' || !r.at) continue;
      const b = idx.blobs.get(r.hash);
      if (b?.at?.file === file) idx.blobs.set(r.hash, r);
    }
  }

  private async openWriter(): Promise<PackWriter> {
    if (this.writer) return this.writer;
    this.creating ??= (async () => {
      const packs = join(this.dir, 'packs');
      mkdirSync(packs, { recursive: true, mode: 0o700 });
      sweepRecompactions(packs);
      for (let attempt = 0; ; attempt++) {
        const next = nextPackNumber(packs) + attempt;
        try {
          const w = await PackWriter.create(join(packs, `${String(next).padStart(6, '0')}.pack`));
          this.writer = w;
          return w;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 100) throw err;
        }
      }
    })();
    try {
      return await this.creating;
    } finally {
      this.creating = null;
    }
  }
}

async function payloadOf(b: BlobRecord): Promise<Buffer> {
  if (b.inline) return unpackPayload(b.encoding, b.inline);
  const body = await readBody(b.at);
  // The payload is the body's tail: what precedes it is the header the scan parsed.
  return unpackPayload(b.encoding, body.subarray(blobHeaderLength(b)));
}

/** The bytes of a blob record's body before its payload. */
function blobHeaderLength(b: BlobRecord): number {
  return 1 + 16 + varintLength(b.size) + 1 + (hasBase(b.encoding) ? 16 : 0);
}

function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    len++;
  }
  return len;
}
