import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import { commonPrefix, commonSuffix, makeDelta } from './delta';
import { GROUP_MAX_BLOB, type BlobEncoding, type ContentHash } from './format';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/** Below this, compression is not tried (its framing would cost more than it saves). */
const MIN_COMPRESS = 96;
/** Deltas up to this size are left uncompressed here: their pack group compresses them. */
const GROUPED_DELTA = GROUP_MAX_BLOB - 64;
/** A delta is kept only when it is at most this share of the content. */
const DELTA_WORTH = 0.5;

/**
 * Brotli at quality 4 with a 16 MB window, async on libuv's pool, so a large file never blocks the
 * host's event loop. Measured on this repository's sources (docs/benchmarks.md, "checkpoints"):
 * 100 KB to 31.5 % in ~2 ms, 1 MB to 27.6 % in ~14–50 ms; quality 5 saves another 2 points for
 * about 1.5 ms more per 100 KB, on the path of every Write (a checkpoint is durable before the
 * write), so it is not taken; quality 11 (23 %) costs 1.5 s per MB.
 */
function brotli(input: Buffer): Promise<Buffer> {
  return compress(input, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: input.length > 8 * 1024 * 1024 ? 3 : 4,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: input.length,
    },
  });
}

/** How a content is stored: its payload and encoding, and the base it was made against. */
export interface EncodedBlob {
  encoding: BlobEncoding;
  payload: Buffer;
  base?: ContentHash;
}

/**
 * The smallest of: the content whole (compressed when that helps), or a delta against `base`
 * (compressed when that helps). A delta is tried only with a base and kept only when it is well
 * under the content's size.
 */
export async function encodeBlob(content: Buffer, base?: { hash: ContentHash; content: Buffer }): Promise<EncodedBlob> {
  if (base && content.length > 64) {
    const delta = makeDelta(base.content, content);
    const splice = spliceOf(base.content, content);
    // One stretch replaced (an Edit): the splice says it without the delta's sizes and offsets.
    if (splice.length <= delta.length && splice.length <= GROUPED_DELTA && splice.length <= content.length * DELTA_WORTH) return { encoding: 'splice', payload: splice, base: base.hash };
    if (delta.length <= content.length * DELTA_WORTH) {
      // A small delta goes in its step's group, compressed there against the steps before it
      // (format.ts): compressed alone first, it would hide what it shares with them.
      if (delta.length > GROUPED_DELTA) {
        const packed = await brotli(delta);
        if (packed.length < delta.length) return { encoding: 'delta-br', payload: packed, base: base.hash };
      }
      return { encoding: 'delta', payload: delta, base: base.hash };
    }
  }
  if (content.length >= MIN_COMPRESS) {
    const packed = await brotli(content);
    if (packed.length < content.length) return { encoding: 'br', payload: packed };
  }
  return { encoding: 'raw', payload: content };
}

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
  out.push(n);
  return out;
}

/** `target` as `base` with one stretch replaced: `varint(prefix) varint(suffix) middle` (format 4). */
export function spliceOf(base: Buffer, target: Buffer): Buffer {
  const prefix = commonPrefix(base, target);
  const suffix = commonSuffix(base, target, Math.min(base.length, target.length) - prefix);
  return Buffer.concat([Buffer.from([...varint(prefix), ...varint(suffix)]), target.subarray(prefix, target.length - suffix)]);
}

/** A stored payload, uncompressed (for a delta: the delta itself). */
export async function unpackPayload(encoding: BlobEncoding, payload: Buffer): Promise<Buffer> {
  return encoding === 'br' || encoding === 'delta-br' ? decompress(payload) : payload;
}
