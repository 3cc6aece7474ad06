import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { checksumOk, decodeRecord, encodeRecord, FRAME_HEADER, frame, MAX_BODY, PACK_MAGIC, type PackRecord } from './format';

/**
 * One pack file: append-only, written by one process at a time (the task's driver, or the worker
 * running its query), read by anyone. A crash mid-append leaves a torn last frame; readers stop
 * at the first frame that is cut short or fails its checksum, and nobody ever appends to a pack
 * another writer left (each writer makes its own), so a torn tail stays a tail.
 */

/** Where a blob's payload lies, for reading it later without scanning again. */
export interface BlobLocation {
  file: string;
  /** Byte offset of the record's body in the file. */
  bodyOffset: number;
  bodyLength: number;
}

/** A record found by a scan; a blob's payload is left out (read it with `readBody`). */
export type ScannedRecord = Exclude<PackRecord, { type: 'blob' }> | (Omit<Extract<PackRecord, { type: 'blob' }>, 'payload'> & { at: BlobLocation });

export interface PackScan {
  records: ScannedRecord[];
  /** Bytes of whole frames (the magic included); anything after is a torn tail or damage. */
  validBytes: number;
  /** Why the scan stopped before the end, if it did. */
  damage?: string;
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
    if (size < PACK_MAGIC.length) return { records, validBytes: 0, damage: 'shorter than its header' };
    await fh.read(magic, 0, magic.length, 0);
    if (!magic.equals(PACK_MAGIC)) return { records, validBytes: 0, damage: 'not a checkpoint pack' };
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
      if (!(await ensure(pos, FRAME_HEADER))) return { records, validBytes: pos, damage: 'a record is cut short' };
      const len = buf.readUInt32LE(pos - bufAt);
      const crc = buf.readUInt32LE(pos - bufAt + 4);
      if (len === 0 || len > MAX_BODY) return { records, validBytes: pos, damage: 'a record has an impossible length' };
      const bodyAt = pos + FRAME_HEADER;
      if (!(await ensure(bodyAt, len))) return { records, validBytes: pos, damage: 'a record is cut short' };
      const body = buf.subarray(bodyAt - bufAt, bodyAt - bufAt + len);
      if (!checksumOk(body, crc)) return { records, validBytes: pos, damage: 'a record fails its checksum' };
      let rec: PackRecord;
      try {
        rec = decodeRecord(body);
      } catch (err) {
        return { records, validBytes: pos, damage: `a record cannot be read (${(err as Error).message})` };
      }
      if (rec.type === 'blob') {
        const { payload: _payload, ...head } = rec;
        records.push({ ...head, at: { file, bodyOffset: bodyAt, bodyLength: len } });
      } else records.push(rec);
      pos = bodyAt + len;
    }
    return { records, validBytes: pos };
  } finally {
    await fh.close();
  }
}

/** Reads one record's body again (a blob's payload), checking nothing: the scan checked it. */
export async function readBody(at: BlobLocation): Promise<Buffer> {
  const fh = await open(at.file, 'r');
  try {
    const buf = Buffer.allocUnsafe(at.bodyLength);
    const { bytesRead } = await fh.read(buf, 0, at.bodyLength, at.bodyOffset);
    if (bytesRead !== at.bodyLength) throw new Error(`${at.file} is shorter than when it was read`);
    return buf;
  } finally {
    await fh.close();
  }
}

/**
 * Appends records to a pack this process created. `append` queues bytes; `sync` writes them and
 * fdatasyncs, resolving once they are on disk. Calls are serialised.
 */
export class PackWriter {
  private chain: Promise<void> = Promise.resolve();
  private pending: Buffer[] = [];
  private size: number;

  private constructor(
    readonly file: string,
    private readonly fh: FileHandle,
  ) {
    this.size = PACK_MAGIC.length;
  }

  /** Creates `file` (it must not exist) with the pack's header. */
  static async create(file: string): Promise<PackWriter> {
    const fh = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, 0o600);
    await fh.write(PACK_MAGIC);
    return new PackWriter(file, fh);
  }

  /** Bytes written and queued so far. */
  get bytes(): number {
    return this.size;
  }

  /** Queues a record; returns where its body will lie. */
  append(r: PackRecord, encoded?: Buffer): BlobLocation {
    const framed = frame(encoded ?? encodeRecord(r));
    const at: BlobLocation = { file: this.file, bodyOffset: this.size + FRAME_HEADER, bodyLength: framed.length - FRAME_HEADER };
    this.pending.push(framed);
    this.size += framed.length;
    return at;
  }

  /** Writes what is queued and makes it durable. */
  sync(): Promise<void> {
    const next = this.chain.then(async () => {
      const out = this.pending;
      this.pending = [];
      if (out.length) {
        const want = out.reduce((n, b) => n + b.length, 0);
        const { bytesWritten } = await this.fh.writev(out);
        if (bytesWritten !== want) throw new Error(`${this.file}: wrote ${bytesWritten} of ${want} bytes`);
      }
      await this.fh.datasync();
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.chain;
    await this.fh.close();
  }
}
