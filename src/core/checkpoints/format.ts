import { createHash } from 'node:crypto';
import { constants, crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * The records of a checkpoint pack (docs/persistence.md, "Checkpoints"), and their binary form.
 * A pack is a magic line then frames `[u32 body length][u32 crc32 of body][body]`; the body's first
 * byte says what it is. Binary, not JSON: a checkpoint of a 100-byte edit is a ~100-byte delta,
 * and the bookkeeping around it must not be larger than the edit itself.
 *
 * Format 2 (`KEELCP2\n`, written since issue 23's cost work) adds the **group** frame: the small
 * records one `sync` makes durable (marks, anchors, command brackets, blobs of a few KB — a
 * 100-byte edit's delta) are written together as one raw-deflate body whose preset dictionary is
 * the last 32 KB of the pack's earlier groups, uncompressed. What a step records repeats what the
 * steps before it recorded (the hash of the version before, the path, the tool call id's prefix,
 * the code around an edit), so a step costs about what it changed, not its bookkeeping. Each group
 * is a complete deflate stream (no state carried in the writer but the dictionary), so a torn
 * tail loses only itself. Format 1 packs (`KEELCP1\n`, no groups) are still read; a pack of a
 * newer format is reported as such and left alone.
 *
 * Format 3 (`KEELCP3\n`) adds the blob encoding `git`: the content is not in the pack but is the
 * blob the workspace's git repository holds under the id in the payload (gitObjects.ts). A Keel
 * that reads only formats 1 and 2 names such a pack as written by a newer Keel, rather than
 * reading it up to the first such blob.
 *
 * Format 4 (`KEELCP4\n`) trims what every step repeats (issue 23's bytes goal): a frame's length
 * is a varint (`[varint body length][u32 crc32 of body][body]`: a step's group is ~60 bytes, its
 * header was 8); a group is its type byte then the deflate stream (inflate finds its end; the
 * uncompressed length it declared before said nothing the stream does not); a mark whose
 * before-image is the blob record just before it in the same group says so in one byte (image
 * kind `prev`) instead of repeating its hash and size; and the blob encoding `splice` stores an
 * edit as `varint(prefix kept) varint(suffix kept)` and the bytes between, against its base (the
 * base's size and the blob's own size say the rest), where a delta spent ~15 bytes on sizes and
 * offsets that say the same.
 */

/** A content address: the first 128 bits of the content's SHA-256, as 32 hex digits. */
export type ContentHash = string;

export const PACK_MAGIC = Buffer.from('KEELCP4\n', 'latin1');
/** The format 3 header: fixed frame headers, groups declaring their length, no `prev` or `splice`. */
export const PACK_MAGIC_V3 = Buffer.from('KEELCP3\n', 'latin1');
/** The format 2 header: as format 3, without blobs kept as git objects. */
export const PACK_MAGIC_V2 = Buffer.from('KEELCP2\n', 'latin1');
/** The format 1 header: such packs have no group frames. */
export const PACK_MAGIC_V1 = Buffer.from('KEELCP1\n', 'latin1');
/** The formats this build reads. */
export const PACK_FORMATS = [1, 2, 3, 4] as const;
/** A frame header's size in formats 1 to 3 (format 4: a varint and the checksum). */
export const FRAME_HEADER = 8;
/** The longest body a frame may declare (a 64 MB file's full copy and then some). */
export const MAX_BODY = 128 * 1024 * 1024;

export function hashContent(buf: Uint8Array): ContentHash {
  return createHash('sha256').update(buf).digest('hex').slice(0, 32);
}

/** What a file held at one moment, as far as a checkpoint knows it. */
export type FileImage =
  /** The content, by address, and its size in bytes. */
  | { kind: 'blob'; hash: ContentHash; size: number }
  /** There was no file. */
  | { kind: 'absent' }
  /** Not kept, and why (a limit, a file outside the workspace, a read that failed). */
  | { kind: 'unknown'; reason: string };

/**
 * How a blob's payload holds its content: whole, a delta against another blob (either maybe
 * Brotli-compressed), `git`: the payload is the raw id (20 or 32 bytes) of the git blob that
 * holds exactly the content (format 3), or `splice`: the base with one stretch replaced (format 4).
 */
export type BlobEncoding = 'raw' | 'br' | 'delta' | 'delta-br' | 'git' | 'splice';

/** True for the encodings whose payload is read against the blob `base`. */
export function hasBase(e: BlobEncoding): boolean {
  return e === 'delta' || e === 'delta-br' || e === 'splice';
}

export type PackRecord =
  /** Content, whole or as a delta against the blob `base`. */
  | { type: 'blob'; hash: ContentHash; size: number; encoding: BlobEncoding; base?: ContentHash; payload: Buffer }
  /**
   * One file at one step: `before` is what it held just before the step changed it (the
   * checkpoint), `after` what the step left (or was about to write), when known. `step` is the
   * tool call's id (or a rewind's id); `path` is relative to the workspace (`/`-separated), or
   * absolute for a file outside it.
   */
  | { type: 'mark'; step: string; path: string; before: FileImage; after?: FileImage }
  /** Everything after this record happened after the task's log held `records` records. */
  | { type: 'anchor'; records: number }
  /**
   * A command's bracket: `start` before it runs (with the workspace as found: `manifest` is a
   * blob listing the files and their blobs, `head` git's HEAD), `end` after its marks. A start
   * with no end is a command whose process died before its changes were recorded.
   */
  | { type: 'command'; step: string; phase: 'start' | 'end'; mode: 'git' | 'scan' | 'none'; manifest?: ContentHash; head?: string; notes: string[] };

const TYPE = { blob: 1, mark: 2, anchor: 3, command: 4 } as const;
/** A group frame's first byte (format 2). */
export const GROUP_TYPE = 5;
/** How much of the earlier groups a group is compressed against (deflate's whole window). */
export const GROUP_DICTIONARY = 32 * 1024;
/** Blob records up to this size (the whole body) go in groups; larger ones get a frame each. */
export const GROUP_MAX_BLOB = 4096;
const ENCODING: readonly BlobEncoding[] = ['raw', 'br', 'delta', 'delta-br', 'git', 'splice'];
/** Image kinds; 4 (`prev`, format 4) is a blob image written as "the blob record just before". */
const IMAGE = { blob: 1, absent: 2, unknown: 3 } as const;
const IMAGE_PREV = 4;
const MODE = ['git', 'scan', 'none'] as const;

/** Appends bytes; grows as needed. */
class Out {
  private buf = Buffer.allocUnsafe(256);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }
  varint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a size: ${n}`);
    while (n >= 0x80) {
      this.byte((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    this.byte(n);
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  hash(h: ContentHash): void {
    if (!/^[0-9a-f]{32}$/.test(h)) throw new Error(`not a content hash: ${h}`);
    this.bytes(Buffer.from(h, 'hex'));
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.varint(b.length);
    this.bytes(b);
  }
  done(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** Reads what `Out` wrote; throws RangeError past the end. */
export class In {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  byte(): number {
    if (this.pos >= this.buf.length) throw new RangeError('record ends early');
    return this.buf[this.pos++]!;
  }
  varint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
    throw new RangeError('varint too long');
  }
  bytes(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw new RangeError('record ends early');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  hash(): ContentHash {
    return this.bytes(16).toString('hex');
  }
  str(): string {
    return this.bytes(this.varint()).toString('utf8');
  }
  rest(): Buffer {
    return this.bytes(this.buf.length - this.pos);
  }
  get ended(): boolean {
    return this.pos >= this.buf.length;
  }
}

/** The blob record just before a record in its group: what image kind `prev` stands for. */
export interface PrevBlob {
  hash: ContentHash;
  size: number;
}

function writeImage(o: Out, img: FileImage, prev?: PrevBlob): void {
  if (img.kind === 'blob' && prev && prev.hash === img.hash && prev.size === img.size) {
    o.byte(IMAGE_PREV);
    return;
  }
  o.byte(IMAGE[img.kind]);
  if (img.kind === 'blob') {
    o.hash(img.hash);
    o.varint(img.size);
  } else if (img.kind === 'unknown') o.str(img.reason);
}

function readImage(i: In, prev?: PrevBlob): FileImage {
  const k = i.byte();
  if (k === IMAGE_PREV) {
    if (!prev) throw new RangeError('a mark names the blob before it, and there is none');
    return { kind: 'blob', hash: prev.hash, size: prev.size };
  }
  if (k === IMAGE.blob) return { kind: 'blob', hash: i.hash(), size: i.varint() };
  if (k === IMAGE.absent) return { kind: 'absent' };
  if (k === IMAGE.unknown) return { kind: 'unknown', reason: i.str() };
  throw new RangeError(`unknown image kind ${k}`);
}

/**
 * The body of `r` (without its frame). `prev`: the blob record just before it in the same group
 * (format 4), which a mark's before-image then names in one byte.
 */
export function encodeRecord(r: PackRecord, prev?: PrevBlob): Buffer {
  const o = new Out();
  o.byte(TYPE[r.type]);
  switch (r.type) {
    case 'blob':
      o.hash(r.hash);
      o.varint(r.size);
      o.byte(ENCODING.indexOf(r.encoding));
      if (hasBase(r.encoding)) o.hash(r.base ?? '');
      o.bytes(r.payload);
      break;
    case 'mark':
      o.str(r.step);
      o.str(r.path);
      writeImage(o, r.before, prev);
      o.byte(r.after ? 1 : 0);
      if (r.after) writeImage(o, r.after);
      break;
    case 'anchor':
      o.varint(r.records);
      break;
    case 'command':
      o.str(r.step);
      o.byte(r.phase === 'start' ? 0 : 1);
      o.byte(MODE.indexOf(r.mode));
      o.byte(r.manifest ? 1 : 0);
      if (r.manifest) o.hash(r.manifest);
      o.str(r.head ?? '');
      o.varint(r.notes.length);
      for (const n of r.notes) o.str(n);
      break;
  }
  return o.done();
}

/** Parses a body; throws RangeError when it is not a record this build knows. */
export function decodeRecord(body: Buffer, prev?: PrevBlob): PackRecord {
  const i = new In(body);
  const t = i.byte();
  switch (t) {
    case TYPE.blob: {
      const hash = i.hash();
      const size = i.varint();
      const encoding = ENCODING[i.byte()];
      if (!encoding) throw new RangeError('unknown blob encoding');
      const base = hasBase(encoding) ? i.hash() : undefined;
      return { type: 'blob', hash, size, encoding, ...(base ? { base } : {}), payload: i.rest() };
    }
    case TYPE.mark: {
      const step = i.str();
      const path = i.str();
      const before = readImage(i, prev);
      const after = i.byte() === 1 ? readImage(i) : undefined;
      return { type: 'mark', step, path, before, ...(after ? { after } : {}) };
    }
    case TYPE.anchor:
      return { type: 'anchor', records: i.varint() };
    case TYPE.command: {
      const step = i.str();
      const phase = i.byte() === 0 ? 'start' : 'end';
      const mode = MODE[i.byte()];
      if (!mode) throw new RangeError('unknown command mode');
      const manifest = i.byte() === 1 ? i.hash() : undefined;
      const head = i.str();
      const notes: string[] = [];
      for (let n = i.varint(); n > 0; n--) notes.push(i.str());
      return { type: 'command', step, phase, mode, ...(manifest ? { manifest } : {}), ...(head ? { head } : {}), notes };
    }
    default:
      throw new RangeError(`unknown record type ${t}`);
  }
}

function varintBytes(n: number): Buffer {
  const o = new Out();
  o.varint(n);
  return Buffer.from(o.done());
}

/**
 * The group frame body of `bodies` (record bodies, in order), compressed against `dictionary`
 * (the tail of the pack's earlier groups), and the uncompressed bytes that extend it. Format 4:
 * no declared length (formats 2 and 3 wrote the uncompressed length after the type byte).
 */
export function encodeGroup(bodies: Buffer[], dictionary: Buffer): { body: Buffer; raw: Buffer } {
  const parts: Buffer[] = [];
  for (const b of bodies) parts.push(varintBytes(b.length), b);
  const raw = Buffer.concat(parts);
  const packed = deflateRawSync(raw, { level: 9, memLevel: 9, ...(dictionary.length ? { dictionary } : {}) });
  return { body: Buffer.concat([Buffer.from([GROUP_TYPE]), packed]), raw };
}

/** The record bodies of a group frame body of pack format `format`. Throws RangeError when it does not decode. */
export function decodeGroup(body: Buffer, dictionary: Buffer, format: number = 4): { bodies: Buffer[]; raw: Buffer } {
  const i = new In(body);
  if (i.byte() !== GROUP_TYPE) throw new RangeError('not a group');
  const rawLength = format >= 4 ? -1 : i.varint();
  if (rawLength > MAX_BODY) throw new RangeError('a group declares an impossible size');
  let raw: Buffer;
  try {
    raw = inflateRawSync(i.rest(), { ...(dictionary.length ? { dictionary } : {}), finishFlush: constants.Z_FINISH, maxOutputLength: rawLength >= 0 ? rawLength + 1 : MAX_BODY });
  } catch (err) {
    throw new RangeError(`a group does not decompress (${(err as Error).message})`);
  }
  if (rawLength >= 0 && raw.length !== rawLength) throw new RangeError(`a group holds ${raw.length} bytes, not ${rawLength}`);
  const r = new In(raw);
  const bodies: Buffer[] = [];
  while (!r.ended) bodies.push(r.bytes(r.varint()));
  return { bodies, raw };
}

/** `dictionary` extended by `raw`, cut to the group dictionary's size. */
export function nextDictionary(dictionary: Buffer, raw: Buffer): Buffer {
  if (raw.length >= GROUP_DICTIONARY) return Buffer.from(raw.subarray(raw.length - GROUP_DICTIONARY));
  const keep = Math.min(dictionary.length, GROUP_DICTIONARY - raw.length);
  return Buffer.concat([dictionary.subarray(dictionary.length - keep), raw]);
}

/** One framed record in format 4 (`[varint length][u32 crc32][body]`), ready to append. */
export function frame(body: Buffer): Buffer {
  if (body.length > MAX_BODY) throw new Error(`a checkpoint record of ${body.length} bytes is larger than ${MAX_BODY}`);
  const len = varintBytes(body.length);
  const out = Buffer.allocUnsafe(len.length + 4 + body.length);
  len.copy(out, 0);
  out.writeUInt32LE(crc32(body), len.length);
  body.copy(out, len.length + 4);
  return out;
}

/** One framed record as formats 1 to 3 wrote it (`[u32 length][u32 crc32][body]`). */
export function frameFixed(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + body.length);
  out.writeUInt32LE(body.length, 0);
  out.writeUInt32LE(crc32(body), 4);
  body.copy(out, FRAME_HEADER);
  return out;
}

/** The checksum a frame holds for `body`. */
export function checksum(body: Buffer): number {
  return crc32(body);
}

export function checksumOk(body: Buffer, crc: number): boolean {
  return crc32(body) === crc;
}

/** True when two images stand for the same content (or both for no file). */
export function sameImage(a: FileImage | undefined, b: FileImage | undefined): boolean {
  if (!a || !b) return false;
  if (a.kind === 'blob' && b.kind === 'blob') return a.hash === b.hash;
  return a.kind === 'absent' && b.kind === 'absent';
}
