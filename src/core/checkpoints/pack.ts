import { constants } from 'node:fs';
import { open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  checksum,
  checksumOk,
  decodeGroup,
  decodeRecord,
  encodeGroup,
  encodeRecord,
  FRAME_HEADER,
  frame,
  GROUP_MAX_BLOB,
  GROUP_TYPE,
  MAX_BODY,
  nextDictionary,
  PACK_FORMATS,
  PACK_MAGIC,
  PACK_MAGIC_V1,
  PACK_MAGIC_V2,
  PACK_MAGIC_V3,
  type PackRecord,
  type PrevBlob,
} from './format';

/**
 * One pack file: append-only, written by one process at a time (the task's driver, or the worker
 * running its query), read by anyone. A crash mid-append leaves a torn last frame; readers stop
 * at the first frame that is cut short or fails its checksum, and nobody ever appends to a pack
 * another writer left (each writer makes its own), so a torn tail stays a tail.
 */

/** Where a blob's payload lies, for reading it later without scanning again. */
export interface BlobLocation {
  file: string;
  /** Byte offset of the record's frame (its header) in the file. */
  frameOffset: number;
  /** Byte offset of the record's body in the file. */
  bodyOffset: number;
  bodyLength: number;
  /** The body's crc32, as its frame says: a read checks it (the pack may have been recompacted since). */
  crc: number;
}

/**
 * What `readBody` throws when the bytes at a location are no longer the record the scan found
 * there: the pack was recompacted (recompact.ts) since, and is to be scanned again.
 */
export class PackMovedError extends Error {
  constructor(readonly file: string) {
    super(`${file} changed since it was read`);
  }
}

/**
 * Where a blob's payload is: a frame of its own (read it with `readBody`), or, for a small blob
 * that came in a group (format 2), the payload itself, decompressed with its group.
 */
export type BlobSource = { at: BlobLocation; inline?: undefined } | { inline: Buffer; at?: undefined };

/** A record found by a scan; a large blob's payload is left out (read it with `readBody`). */
export type ScannedRecord = Exclude<PackRecord, { type: 'blob' }> | (Omit<Extract<PackRecord, { type: 'blob' }>, 'payload'> & BlobSource);

export interface PackScan {
  records: ScannedRecord[];
  /** Bytes of whole frames (the magic included); anything after is a torn tail or damage. */
  validBytes: number;
  /** Why the scan stopped before the end, if it did. */
  damage?: string;
  /** The header itself was not one this build reads (nothing of the pack was). */
  unreadable?: boolean;
}

const CHUNK = 1 << 20;

/**
 * Reads the records of `file` up to `limit` bytes (a fork reads its parent's packs only as far
 * as they were when it forked). Never throws for damage: the scan stops there and says why.
 * Throws for a file that cannot be opened.
 */
export async function scanPack(file: string, limit = Infinity): Promise<PackScan> {
  const fh = await open(file, 'r');
  try {
    const size = Math.min((await fh.stat()).size, limit);
    const records: ScannedRecord[] = [];
    const magic = Buffer.alloc(PACK_MAGIC.length);
    if (size < PACK_MAGIC.length) return { records, validBytes: 0, damage: 'shorter than its header', unreadable: true };
    await fh.read(magic, 0, magic.length, 0);
    const format = magic.equals(PACK_MAGIC) ? 4 : magic.equals(PACK_MAGIC_V3) ? 3 : magic.equals(PACK_MAGIC_V2) ? 2 : magic.equals(PACK_MAGIC_V1) ? 1 : 0;
    if (!format) {
      const newer = /^KEELCP(\d+)\n$/.exec(magic.toString('latin1'));
      const formats = `${PACK_FORMATS.slice(0, -1).join(', ')} and ${PACK_FORMATS[PACK_FORMATS.length - 1]}`;
      const damage = newer ? `written in checkpoint format ${newer[1]} by a newer Keel; this build reads formats ${formats}` : 'not a checkpoint pack';
      return { records, validBytes: 0, damage, unreadable: true };
    }
    // The uncompressed tail of the groups read so far: the next group's dictionary.
    let dictionary: Buffer = Buffer.alloc(0);
    let pos = PACK_MAGIC.length;
    let buf = Buffer.alloc(0);
    let bufAt = pos;
    const ensure = async (from: number, n: number): Promise<boolean> => {
      if (from + n > size) return false;
      if (from >= bufAt && from + n <= bufAt + buf.length) return true;
      const len = Math.min(Math.max(n, CHUNK), size - from);
      buf = Buffer.allocUnsafe(len);
      const { bytesRead } = await fh.read(buf, 0, len, from);
      buf = buf.subarray(0, bytesRead);
      bufAt = from;
      return bytesRead >= n;
    };
    while (pos < size) {
      // Format 4: a varint length (at most 4 bytes for MAX_BODY) then the checksum.
      let len: number;
      let headerLen: number;
      if (format >= 4) {
        if (!(await ensure(pos, Math.min(9, size - pos)))) return { records, validBytes: pos, damage: 'a record is cut short' };
        len = 0;
        headerLen = 0;
        for (let scale = 1; ; scale *= 0x80) {
          if (headerLen >= 4 || pos + headerLen >= size) return { records, validBytes: pos, damage: headerLen >= 4 ? 'a record has an impossible length' : 'a record is cut short' };
          const b = buf[pos - bufAt + headerLen]!;
          headerLen++;
          len += (b & 0x7f) * scale;
          if (b < 0x80) break;
        }
        headerLen += 4;
        if (!(await ensure(pos, headerLen))) return { records, validBytes: pos, damage: 'a record is cut short' };
      } else {
        if (!(await ensure(pos, FRAME_HEADER))) return { records, validBytes: pos, damage: 'a record is cut short' };
        len = buf.readUInt32LE(pos - bufAt);
        headerLen = FRAME_HEADER;
      }
      const crc = buf.readUInt32LE(pos - bufAt + headerLen - 4);
      if (len === 0 || len > MAX_BODY) return { records, validBytes: pos, damage: 'a record has an impossible length' };
      const bodyAt = pos + headerLen;
      if (!(await ensure(bodyAt, len))) return { records, validBytes: pos, damage: 'a record is cut short' };
      const body = buf.subarray(bodyAt - bufAt, bodyAt - bufAt + len);
      if (!checksumOk(body, crc)) return { records, validBytes: pos, damage: 'a record fails its checksum' };
      let found: ScannedRecord[];
      try {
        if (format >= 2 && body[0] === GROUP_TYPE) {
          const group = decodeGroup(body, dictionary, format);
          dictionary = nextDictionary(dictionary, group.raw);
          let prev: PrevBlob | undefined;
          found = group.bodies.map((b) => {
            const rec = decodeRecord(b, prev);
            prev = rec.type === 'blob' ? { hash: rec.hash, size: rec.size } : undefined;
            if (rec.type !== 'blob') return rec;
            // A copy: the group's buffer is not kept alive by one small payload.
            const { payload, ...head } = rec;
            return { ...head, inline: Buffer.from(payload) };
          });
        } else {
          const rec = decodeRecord(body);
          if (rec.type === 'blob') {
            const { payload: _payload, ...head } = rec;
            found = [{ ...head, at: { file, frameOffset: pos, bodyOffset: bodyAt, bodyLength: len, crc } }];
          } else found = [rec];
        }
      } catch (err) {
        return { records, validBytes: pos, damage: `a record cannot be read (${(err as Error).message})` };
      }
      records.push(...found);
      pos = bodyAt + len;
    }
    return { records, validBytes: pos };
  } finally {
    await fh.close();
  }
}

/**
 * Reads one record's body again (a blob's payload). Throws PackMovedError when the bytes there
 * are not that record any more (their checksum differs: the pack was recompacted since the scan).
 */
export async function readBody(at: BlobLocation): Promise<Buffer> {
  const fh = await open(at.file, 'r');
  try {
    const buf = Buffer.allocUnsafe(at.bodyLength);
    const { bytesRead } = await fh.read(buf, 0, at.bodyLength, at.bodyOffset);
    if (bytesRead !== at.bodyLength || checksum(buf) !== at.crc) throw new PackMovedError(at.file);
    return buf;
  } finally {
    await fh.close();
  }
}

/**
 * Appends records to a pack this process created. `append` queues a record; `sync` writes what is
 * queued and fdatasyncs, resolving once it is on disk. Calls are serialised. Small records wait
 * for the next `sync` (or the next large blob) and are written as one group frame, compressed
 * against the groups before it; a large blob gets a frame of its own, so its place is known when
 * it is queued. Once a write fails the writer is spent (`failed`): what it wrote after the
 * failure could depend on bytes that never reached the file, so the store opens a new pack.
 * `replace` swaps one large frame for another (recompact.ts) by writing the pack anew beside it.
 */
export class PackWriter {
  private chain: Promise<void> = Promise.resolve();
  private pending: Buffer[] = [];
  private small: Buffer[] = [];
  private smallBytes = 0;
  /** The last small record queued, when it is a blob: a mark after it may name it in one byte. */
  private lastSmall: PrevBlob | undefined;
  private dictionary: Buffer = Buffer.alloc(0);
  private size: number;
  /** Bytes on disk (whole frames, every write before made durable or in flight done). */
  private written: number;
  private failure: Error | null = null;
  private closed = false;

  private constructor(
    readonly file: string,
    private fh: FileHandle,
  ) {
    this.size = PACK_MAGIC.length;
    this.written = PACK_MAGIC.length;
  }

  /** Creates `file` (it must not exist) with the pack's header. */
  static async create(file: string): Promise<PackWriter> {
    const fh = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, 0o600);
    await fh.write(PACK_MAGIC);
    return new PackWriter(file, fh);
  }

  /** Bytes written and queued so far (small records counted uncompressed until grouped). */
  get bytes(): number {
    return this.size + this.smallBytes;
  }

  /** Why this writer stopped writing, once a write or an fdatasync failed. */
  get failed(): Error | null {
    return this.failure;
  }

  /**
   * Queues a record. Returns where a large blob's body will lie; null for a record that goes in
   * the next group (a small blob's payload is then known only from the record itself).
   */
  append(r: PackRecord): BlobLocation | null {
    if (this.failure) throw this.failure;
    const body = encodeRecord(r, this.lastSmall);
    if (r.type !== 'blob' || body.length <= GROUP_MAX_BLOB) {
      this.small.push(body);
      this.smallBytes += body.length;
      this.lastSmall = r.type === 'blob' ? { hash: r.hash, size: r.size } : undefined;
      return null;
    }
    // What was queued before it is written before it: records stay in the order they were made.
    this.closeGroup();
    const framed = frame(body);
    const headerLen = framed.length - body.length;
    const at: BlobLocation = { file: this.file, frameOffset: this.size, bodyOffset: this.size + headerLen, bodyLength: body.length, crc: framed.readUInt32LE(headerLen - 4) };
    this.pending.push(framed);
    this.size += framed.length;
    return at;
  }

  private closeGroup(): void {
    this.lastSmall = undefined;
    if (!this.small.length) return;
    const { body, raw } = encodeGroup(this.small, this.dictionary);
    this.dictionary = nextDictionary(this.dictionary, raw);
    this.small = [];
    this.smallBytes = 0;
    const framed = frame(body);
    this.pending.push(framed);
    this.size += framed.length;
  }

  /** Writes what is queued and makes it durable. */
  sync(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.closeGroup();
    return this.serial(async () => {
      const out = this.pending;
      this.pending = [];
      try {
        if (out.length) {
          const want = out.reduce((n, b) => n + b.length, 0);
          const { bytesWritten } = await this.fh.writev(out);
          if (bytesWritten !== want) throw new Error(`${this.file}: wrote ${bytesWritten} of ${want} bytes`);
          this.written += want;
        }
        await this.fh.datasync();
      } catch (err) {
        this.failure = err instanceof Error ? err : new Error(String(err));
        throw this.failure;
      }
    });
  }

  /**
   * Replaces the large frame at `at` (on disk already) by a frame of `body`, crash-safely: the
   * pack is written anew beside itself (`<pack>.<pid>.recompact`; everything up to now copied,
   * that frame swapped), made durable, and renamed over the pack; the rename is atomic, so a
   * kill at any moment leaves either the old pack or the new one, each whole. The bulk is copied
   * while the turn goes on; only the tail written meanwhile and the rename wait for the writes
   * before them (the turn's next sync waits for at most that). Works on a closed writer too (a
   * rewrite under way when the store closed is finished). Not done (false) when the pack has
   * another link (a fork shares it: its bytes must stay as they are) or the writer failed.
   * `moved(shift, at)` runs synchronously at the swap: every frame after `at` is now `shift`
   * bytes earlier, and the new frame is at `at`.
   */
  async replace(at: BlobLocation, body: Buffer, moved: (shift: number, at: BlobLocation) => void): Promise<boolean> {
    if (this.failure || at.file !== this.file) return false;
    const oldEnd = at.bodyOffset + at.bodyLength;
    const mark = this.written;
    if (oldEnd > mark || (await stat(this.file)).nlink > 1) return false;
    const tmp = `${this.file}.${process.pid}.recompact`;
    const framed = frame(body);
    // Not O_EXCL: only this writer rewrites this pack in this process, so a file of that name is
    // what a dead process of the same pid left.
    const out = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
    let swapped = false;
    try {
      await copyRange(this.file, out, 0, at.frameOffset);
      if ((await out.write(framed)).bytesWritten !== framed.length) throw new Error('a short write');
      await copyRange(this.file, out, oldEnd, mark);
      await out.datasync();
      swapped = await this.serial(async () => {
        // Checked here, in turn with the writes: no sync runs between this and the rename.
        if (this.failure || (await stat(this.file)).nlink > 1) return false;
        const end = this.written;
        await copyRange(this.file, out, mark, end);
        await out.datasync();
        await out.close();
        await rename(tmp, this.file);
        // Renamed: whatever follows, the pack at this path is the new one, and this writer says so.
        // (A crash before the folder is synced leaves either pack under the name: each is whole.)
        await syncDir(dirname(this.file)).catch(() => undefined);
        const shift = oldEnd - at.frameOffset - framed.length;
        // A closed writer's handle is closed already (close waited for the writes before this).
        if (!this.closed) {
          let next: FileHandle;
          try {
            next = await open(this.file, constants.O_WRONLY | constants.O_APPEND);
          } catch (err) {
            this.failure = err instanceof Error ? err : new Error(String(err));
            throw this.failure;
          } finally {
            await this.fh.close().catch(() => undefined);
          }
          this.fh = next;
        }
        this.size -= shift;
        this.written = end - shift;
        const headerLen = framed.length - body.length;
        moved(shift, { file: this.file, frameOffset: at.frameOffset, bodyOffset: at.frameOffset + headerLen, bodyLength: body.length, crc: framed.readUInt32LE(headerLen - 4) });
        return true;
      });
      return swapped;
    } finally {
      if (!swapped) {
        await out.close().catch(() => undefined);
        await unlink(tmp).catch(() => undefined);
      }
    }
  }

  /** Runs `job` after every write queued before it (a failed one does not stop the chain). */
  private serial<T>(job: () => Promise<T>): Promise<T> {
    const next = this.chain.then(job);
    this.chain = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Closes the file once the writes queued (and a rewrite already swapping the pack) are done; no more appends. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
    await this.fh.close();
  }
}

/** Appends bytes [from, to) of `file` to `out`, in chunks. */
async function copyRange(file: string, out: FileHandle, from: number, to: number): Promise<void> {
  if (to <= from) return;
  const src = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, to - from));
    for (let pos = from; pos < to; ) {
      const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, to - pos), pos);
      if (bytesRead === 0) throw new Error(`${file} is shorter than ${to} bytes`);
      const { bytesWritten } = await out.write(buf.subarray(0, bytesRead));
      if (bytesWritten !== bytesRead) throw new Error(`wrote ${bytesWritten} of ${bytesRead} bytes`);
      pos += bytesRead;
    }
  } finally {
    await src.close();
  }
}

/** Makes a rename in `dir` durable. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
