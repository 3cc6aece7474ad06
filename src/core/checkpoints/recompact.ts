import { promisify } from 'node:util';
import { brotliCompress, constants } from 'node:zlib';
import { encodeRecord, type ContentHash } from './format';
import type { BlobLocation, PackWriter } from './pack';

const compress = promisify(brotliCompress);

/**
 * Whole copies at least this large are recompacted. Below it a whole copy costs at most ~40 KB
 * at quality 4, and quality 11 would save ~6 KB of it for ~200 ms of a core; above it one copy
 * dominates a task's checkpoints (a 1 MB file's first before-image is ~285 KB at quality 4 and
 * a thousand edits of it ~62 KB), and the saving (~20 %) is worth the core it costs in the
 * background. (At 64 KiB, the checkpoints bench's rounds of 100 KB Writes took 2.26 times the
 * CPU of rounds without checkpoints instead of ~1.5.)
 */
export const RECOMPACT_MIN_BYTES = 128 * 1024;
/** A better encoding that saves less than this is not worth writing the pack anew. */
const MIN_SAVING = 4096;

/**
 * Brotli at its best (quality 11, 16 MB window): ~1.5 s of one libuv pool thread per MB of code,
 * never the event loop's. Quality 4 (blobCodec.ts) is what the turn waits for.
 */
function brotliBest(input: Buffer): Promise<Buffer> {
  return compress(input, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: input.length,
    },
  });
}

/** What the recompactor needs of its store. */
export interface RecompactHost {
  /** Where the blob `hash` lies, when it is a Brotli-compressed whole copy in a frame of its own. */
  wholeCopy(hash: ContentHash): { at: BlobLocation; size: number; payloadBytes: number } | null;
  /** The content of `hash`, read back (and checked against its address). */
  content(hash: ContentHash): Promise<Buffer>;
  /** The writer of this process's pack, if it is open and has not failed. */
  writer(): PackWriter | null;
  /** The pack was written anew: frames after `from` moved `shift` bytes earlier; `hash` is at `at`. */
  moved(file: string, from: number, shift: number, hash: ContentHash, at: BlobLocation): void;
}

/** What recompaction did so far (for the benchmark and the docs' figures). */
export interface RecompactStats {
  /** Whole copies written anew. */
  done: number;
  /** Bytes the packs hold fewer for it. */
  savedBytes: number;
  /** Wall time spent, jobs one after another (compression and the pack's rewrite). */
  ms: number;
}

/**
 * Recompacts large whole copies off the turn's path (docs/persistence.md, "Checkpoints"): a
 * before-image is made durable at Brotli quality 4 before the write it protects; afterwards, one
 * at a time per store, it is compressed again at quality 11 on libuv's pool and the pack is
 * written anew holding the better encoding (PackWriter.replace: crash-safe, never in place, never
 * a pack a fork links). Best effort: a job that cannot be done (the pack is shared, the writer
 * failed, the process ends first) leaves the quality-4 copy, which reads back the same.
 */
export class Recompactor {
  private readonly queue: ContentHash[] = [];
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly waiters: (() => void)[] = [];
  readonly stats: RecompactStats = { done: 0, savedBytes: 0, ms: 0 };

  constructor(
    private readonly host: RecompactHost,
    private readonly warn: (message: string) => void = () => undefined,
  ) {}

  /** A whole copy of `size` bytes was stored as `hash`: recompact it once it is durable. */
  offer(hash: ContentHash, size: number): void {
    if (!this.stopped && size >= RECOMPACT_MIN_BYTES) this.queue.push(hash);
  }

  /** Starts the next job if none is running (called once what was offered is durable). */
  kick(): void {
    if (this.running || this.stopped || !this.queue.length) {
      if (!this.running) this.settle();
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
      this.settle();
    });
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (!this.running && (this.stopped || !this.queue.length)) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.kick();
    });
  }

  /**
   * No more jobs: what is queued is dropped; the running one goes on to its end, not waited for
   * (the end of a turn on a worker waits for its checkpoints to close, and must not wait ~1.5 s
   * per MB for a saving; the process, a worker or the host, lives on and finishes it; a `keel`
   * command's process ends once it is done).
   */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.settle();
  }

  private settle(): void {
    if (this.running || (this.queue.length && !this.stopped)) return;
    for (const w of this.waiters.splice(0)) w();
  }

  private async drain(): Promise<void> {
    while (this.queue.length && !this.stopped) {
      const hash = this.queue.shift()!;
      // Yield first: what the turn queued meanwhile goes before.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const started = performance.now();
      try {
        await this.one(hash);
      } catch (err) {
        this.warn(`recompacting a checkpoint failed (its first encoding is kept): ${(err as Error).message}`);
      }
      this.stats.ms += performance.now() - started;
    }
  }

  private async one(hash: ContentHash): Promise<void> {
    const found = this.host.wholeCopy(hash);
    const writer = this.host.writer();
    if (!found || !writer || found.at.file !== writer.file) return;
    const content = await this.host.content(hash);
    const packed = await brotliBest(content);
    if (packed.length + MIN_SAVING > found.payloadBytes) return;
    const body = encodeRecord({ type: 'blob', hash, size: content.length, encoding: 'br', payload: packed });
    const from = found.at.frameOffset;
    const file = writer.file;
    await writer.replace(found.at, body, (shift, at) => {
      this.stats.done++;
      this.stats.savedBytes += shift;
      this.host.moved(file, from, shift, hash, at);
    });
  }
}
