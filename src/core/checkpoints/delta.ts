/**
 * Binary deltas between two versions of a file: what lets a checkpoint of a 100-byte edit to a
 * 1 MB file cost about 100 bytes. A delta is `varint(base size) varint(target size)` then ops:
 * `varint(2·len)   varint(offset)` copies `len` bytes of the base from `offset`;
 * `varint(2·len+1) bytes`          inserts `len` literal bytes.
 *
 * `makeDelta` keeps the common prefix and suffix and matches 32-byte blocks of the base in the
 * middle (rolling hash), so one edit, several edits, or moved blocks all give small deltas.
 * Reconstruction goes through `Pieces`, a piece table: applying a delta costs per op, not per byte
 * of the file, so a chain of a thousand deltas is rebuilt without a thousand full copies.
 */

const BLOCK = 32;
/** Literal middles shorter than this are not worth searching. */
const MIN_SEARCH = 64;

class DeltaOut {
  private parts: Buffer[] = [];
  private scratch: number[] = [];
  private flushScratch(): void {
    if (this.scratch.length) this.parts.push(Buffer.from(this.scratch));
    this.scratch = [];
  }
  varint(n: number): void {
    while (n >= 0x80) {
      this.scratch.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    this.scratch.push(n);
  }
  copy(offset: number, len: number): void {
    if (len <= 0) return;
    this.varint(len * 2);
    this.varint(offset);
  }
  insert(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.varint(bytes.length * 2 + 1);
    this.flushScratch();
    this.parts.push(bytes);
  }
  done(): Buffer {
    this.flushScratch();
    return Buffer.concat(this.parts);
  }
}

/** How many bytes `a` and `b` share at their start. */
export function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  const step = 4096;
  while (i + step <= n && a.compare(b, i, i + step, i, i + step) === 0) i += step;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** How many bytes `a` and `b` share at their end, at most `limit`. */
export function commonSuffix(a: Buffer, b: Buffer, limit: number): number {
  let k = 0;
  const step = 4096;
  while (k + step <= limit && a.compare(b, b.length - k - step, b.length - k, a.length - k - step, a.length - k) === 0) k += step;
  while (k < limit && a[a.length - 1 - k] === b[b.length - 1 - k]) k++;
  return k;
}

const P = 0x01000193;

function blockHash(buf: Buffer, at: number): number {
  let h = 0;
  for (let i = 0; i < BLOCK; i++) h = (Math.imul(h, P) + buf[at + i]!) >>> 0;
  return h;
}

/** P^(BLOCK-1) mod 2^32, to take the leaving byte out of a rolling hash. */
const P_OUT = (() => {
  let x = 1;
  for (let i = 0; i < BLOCK - 1; i++) x = Math.imul(x, P) >>> 0;
  return x;
})();

/** A delta that turns `base` into `target`. */
export function makeDelta(base: Buffer, target: Buffer): Buffer {
  const out = new DeltaOut();
  out.varint(base.length);
  out.varint(target.length);
  const pre = commonPrefix(base, target);
  const suf = commonSuffix(base, target, Math.min(base.length, target.length) - pre);
  out.copy(0, pre);
  const tEnd = target.length - suf;
  const bEnd = base.length - suf;
  matchMiddle(out, base, pre, bEnd, target, pre, tEnd);
  out.copy(base.length - suf, suf);
  return out.done();
}

/** Ops for target[tStart, tEnd) using blocks of base[bStart, bEnd). */
function matchMiddle(out: DeltaOut, base: Buffer, bStart: number, bEnd: number, target: Buffer, tStart: number, tEnd: number): void {
  if (tEnd - tStart < MIN_SEARCH || bEnd - bStart < BLOCK) {
    out.insert(target.subarray(tStart, tEnd));
    return;
  }
  // Index the base's aligned blocks (the first of equal ones wins); a huge base is sampled.
  const stride = Math.max(BLOCK, Math.ceil((bEnd - bStart) / 1_000_000) * BLOCK);
  const index = new Map<number, number>();
  for (let o = bStart; o + BLOCK <= bEnd; o += stride) {
    const h = blockHash(base, o);
    if (!index.has(h)) index.set(h, o);
  }
  let literalFrom = tStart;
  let j = tStart;
  let h = j + BLOCK <= tEnd ? blockHash(target, j) : 0;
  while (j + BLOCK <= tEnd) {
    const o = index.get(h);
    if (o !== undefined && base.compare(target, j, j + BLOCK, o, o + BLOCK) === 0) {
      // Extend forward, then back into the pending literal.
      let len = BLOCK;
      while (j + len < tEnd && o + len < bEnd && base[o + len] === target[j + len]) len++;
      let back = 0;
      while (j - back > literalFrom && o - back > bStart && base[o - back - 1] === target[j - back - 1]) back++;
      out.insert(target.subarray(literalFrom, j - back));
      out.copy(o - back, len + back);
      j += len;
      literalFrom = j;
      if (j + BLOCK <= tEnd) h = blockHash(target, j);
      continue;
    }
    if (j + BLOCK < tEnd) h = (Math.imul((h - Math.imul(target[j]!, P_OUT)) >>> 0, P) + target[j + BLOCK]!) >>> 0;
    j++;
  }
  out.insert(target.subarray(literalFrom, tEnd));
}

interface Piece {
  src: Buffer;
  off: number;
  len: number;
}

/**
 * Content as a list of slices of buffers (a piece table). `apply` builds the next version from a
 * delta without copying bytes; `bytes()` materialises it once.
 */
export class Pieces {
  private constructor(
    private readonly pieces: Piece[],
    private readonly starts: number[],
    readonly length: number,
  ) {}

  static of(content: Buffer): Pieces {
    return new Pieces(content.length ? [{ src: content, off: 0, len: content.length }] : [], [0], content.length);
  }

  /** The version `delta` makes of this one. Throws RangeError when the delta does not fit it. */
  apply(delta: Buffer): Pieces {
    const read = varintReader(delta, 'delta');
    const baseSize = read.next();
    const targetSize = read.next();
    if (baseSize !== this.length) throw new RangeError(`delta is for a base of ${baseSize} bytes, not ${this.length}`);
    const b = new PieceBuilder();
    while (read.pos < delta.length) {
      const op = read.next();
      const len = Math.floor(op / 2);
      if (op % 2 === 1) {
        if (read.pos + len > delta.length) throw new RangeError('delta ends early');
        b.push({ src: delta, off: read.pos, len });
        read.pos += len;
      } else {
        const offset = read.next();
        if (offset + len > this.length) throw new RangeError('delta copies past the end of its base');
        this.slice(offset, len, b.push);
      }
    }
    if (b.written !== targetSize) throw new RangeError(`delta made ${b.written} bytes, not ${targetSize}`);
    return b.done();
  }

  /**
   * The version a `splice` payload (`varint(prefix) varint(suffix) middle`, format 4) makes of
   * this one: its first `prefix` bytes, the middle, its last `suffix` bytes; `size` is the
   * version's recorded size. Throws RangeError when the payload does not fit this version.
   */
  splice(payload: Buffer, size: number): Pieces {
    const read = varintReader(payload, 'splice');
    const prefix = read.next();
    const suffix = read.next();
    const middle = payload.length - read.pos;
    if (prefix + suffix > this.length || prefix + middle + suffix !== size) throw new RangeError(`a splice of ${prefix}+${middle}+${suffix} bytes does not make ${size} from ${this.length}`);
    const b = new PieceBuilder();
    this.slice(0, prefix, b.push);
    b.push({ src: payload, off: read.pos, len: middle });
    this.slice(this.length - suffix, suffix, b.push);
    return b.done();
  }

  /** @internal the builder's result (PieceBuilder). */
  static made(pieces: Piece[], starts: number[], length: number): Pieces {
    return new Pieces(pieces, starts, length);
  }

  private slice(offset: number, len: number, push: (p: Piece) => void): void {
    // The piece holding `offset`: the last start <= offset.
    let lo = 0;
    let hi = this.pieces.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    let remaining = len;
    let at = offset;
    for (let k = lo; remaining > 0 && k < this.pieces.length; k++) {
      const p = this.pieces[k]!;
      const into = at - this.starts[k]!;
      const take = Math.min(p.len - into, remaining);
      push({ src: p.src, off: p.off + into, len: take });
      remaining -= take;
      at += take;
    }
  }

  bytes(): Buffer {
    if (this.pieces.length === 1) {
      const p = this.pieces[0]!;
      return p.src.subarray(p.off, p.off + p.len);
    }
    const out = Buffer.allocUnsafe(this.length);
    let w = 0;
    for (const p of this.pieces) {
      p.src.copy(out, w, p.off, p.off + p.len);
      w += p.len;
    }
    return out;
  }
}

/** `base` with `delta` applied. Throws RangeError when the delta does not fit `base`. */
export function applyDelta(base: Buffer, delta: Buffer): Buffer {
  return Pieces.of(base).apply(delta).bytes();
}

/** Unsigned LEB128 varints read from `buf` in turn (`pos` is where the next byte is); `what` names it in errors. */
function varintReader(buf: Buffer, what: string): { pos: number; next(): number } {
  const r = {
    pos: 0,
    next(): number {
      let n = 0;
      for (let i = 0, scale = 1; i < 8; i++, scale *= 0x80) {
        if (r.pos >= buf.length) throw new RangeError(`${what} ends early`);
        const b = buf[r.pos++]!;
        n += (b & 0x7f) * scale;
        if (b < 0x80) return n;
      }
      throw new RangeError(`bad varint in ${what}`);
    },
  };
  return r;
}

/** A new version's pieces, in order: adjacent slices of the same buffer merged into one. */
class PieceBuilder {
  private readonly out: Piece[] = [];
  private readonly starts: number[] = [];
  written = 0;

  readonly push = (p: Piece): void => {
    if (p.len === 0) return;
    const last = this.out[this.out.length - 1];
    if (last && last.src === p.src && last.off + last.len === p.off) last.len += p.len;
    else {
      this.out.push({ ...p });
      this.starts.push(this.written);
    }
    this.written += p.len;
  };

  done(): Pieces {
    if (this.starts.length === 0) this.starts.push(0);
    return Pieces.made(this.out, this.starts, this.written);
  }
}
