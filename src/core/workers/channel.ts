import type { Duplex } from 'node:stream';
import * as z from 'zod/mini';

/**
 * Milliseconds on a monotonic clock. Not `performance.now()`: the first touch of the global
 * `performance` loads all of `perf_hooks` (~0.8 MB resident in a worker, which otherwise never
 * needs it; docs/workers.md, "Memory").
 */
function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * One end of an NDJSON connection: what arrives is split into lines (each at most
 * `maxLineBytes`), parsed and validated against `schema`, and delivered in order to `onMessage`.
 *
 * **Large messages go in parts** (a 50 MB answer, a query carrying a long conversation: issue 26,
 * item 4): a message whose line would be longer than `PART_BYTES` is sent as consecutive part
 * lines, each a piece of its JSON text (`PART_CHARS` characters, never splitting a surrogate
 * pair) after a one-character mark: `+` for a piece with more to come, `=` for the last. A JSON
 * text holds no raw newline, and a whole message's line starts with `{`, so a part is never taken
 * for one, and nothing is escaped twice. The receiver joins the pieces, then parses and validates
 * the whole as one message. So no line is ever long, the socket's buffers stay small, and a
 * message may be as long as `maxMessageChars` characters; a peer that sends more in one message,
 * or another message before a message's last part, breaks the channel.
 *
 * Back-pressure: lines wait in a queue and are delivered `batch` at a time per turn of the event
 * loop (within `sliceMs`), so a peer that floods cannot starve the rest of this process; while more
 * than `highWater` lines (or `highWaterBytes`) wait, the socket is paused (the peer's writes back
 * up into its own memory), and it resumes below `lowWater`. Nothing here grows without bound.
 *
 * A line that is not JSON, does not match the schema (an unknown `type` included) or is too long
 * breaks the channel: `onBroken` is called once with the reason, the socket is destroyed, and
 * nothing after the bad line is delivered. `onClose` is called once when the connection is over,
 * after every valid line received before it was delivered. After `destroy` nothing more is
 * delivered (what waited is dropped; `onClose` still comes): its owner, which let go of the
 * connection, hears no message of it. Never throws into the socket's events.
 */
export interface ChannelOptions<In> {
  schema: z.core.$ZodType<In>;
  maxLineBytes: number;
  /** The longest message accepted, in characters of its JSON text (parts joined); default DEFAULT_MAX_MESSAGE_CHARS. */
  maxMessageChars?: number;
  onMessage(message: In): void;
  onBroken(reason: string): void;
  onClose(): void;
  highWater?: number;
  lowWater?: number;
  /** Bytes waiting before reading pauses, whatever the number of lines (default 16 MB). */
  highWaterBytes?: number;
  batch?: number;
  sliceMs?: number;
}

/** A message whose line would be longer than this goes in parts. */
export const PART_BYTES = 1024 * 1024;
/** Characters of a message's JSON text per part (its line is at most 3 bytes per character). */
export const PART_CHARS = 256 * 1024;
/** The longest message accepted by default, in characters of its JSON text. */
export const DEFAULT_MAX_MESSAGE_CHARS = 256 * 1024 * 1024;

/** The lines that carry `message` (one line, or its parts), each without its newline. */
export function linesOf(message: unknown): string[] {
  const text = JSON.stringify(message);
  // A UTF-16 unit is 1 to 3 bytes of UTF-8: only messages between PART_BYTES / 3 and PART_BYTES
  // units are counted (counting a 50 MB answer's message walked all of it, to no end).
  if (text.length * 3 <= PART_BYTES || (text.length <= PART_BYTES && Buffer.byteLength(text) <= PART_BYTES)) return [text];
  const lines: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(text.length, at + PART_CHARS);
    // Never between the two halves of a surrogate pair (each half alone is not valid UTF-8).
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    lines.push(`${end >= text.length ? '=' : '+'}${text.slice(at, end)}`);
    at = end;
  }
  return lines;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Splits a byte stream into lines of at most `maxLineBytes` bytes (the newline excluded). A line
 * that grows past the limit is reported as soon as it does, without waiting for its end, so a
 * peer can never make this side buffer more than the limit. Lines are decoded as UTF-8 only once
 * complete (a newline byte never occurs inside a multi-byte character).
 */
class LineDecoder {
  private parts: Buffer[] = [];
  private partBytes = 0;
  private overflowed = false;

  constructor(private readonly maxLineBytes: number) {}

  /**
   * Feeds a chunk; returns the complete lines it finished, or `overflow` when the current line
   * passed the limit (after which the decoder stays broken: nothing more is returned).
   */
  push(chunk: Buffer): { lines: string[]; overflow: boolean } {
    if (this.overflowed) return { lines: [], overflow: true };
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      if (this.partBytes + piece.length > this.maxLineBytes) return this.overflow(lines);
      const line = this.parts.length === 0 ? piece : Buffer.concat([...this.parts, piece]);
      this.parts = [];
      this.partBytes = 0;
      lines.push(line.toString('utf8'));
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length > 0) {
      if (this.partBytes + rest.length > this.maxLineBytes) return this.overflow(lines);
      // Copy: the caller may reuse the chunk's memory.
      this.parts.push(Buffer.from(rest));
      this.partBytes += rest.length;
    }
    return { lines, overflow: false };
  }

  /** Bytes of an unfinished line held (never more than the limit). */
  get pendingBytes(): number {
    return this.partBytes;
  }

  private overflow(lines: string[]): { lines: string[]; overflow: boolean } {
    this.overflowed = true;
    this.parts = [];
    this.partBytes = 0;
    return { lines, overflow: true };
  }
}

export interface ChannelStats {
  received: number;
  /** Times reading was paused because too much was waiting. */
  pauses: number;
  /** The longest the delivery queue has been. */
  maxQueued: number;
}

export class MessageChannel<In, Out> {
  private readonly decoder: LineDecoder;
  private readonly queue: string[] = [];
  private head = 0;
  private queuedBytes = 0;
  /** The pieces of a message arriving in parts, and their length so far. */
  private parts: string[] = [];
  private partsLength = 0;
  private paused = false;
  private pumpScheduled = false;
  private ended = false;
  private broken = false;
  /** `destroy` was called: nothing more is delivered. */
  private dropped = false;
  private closeReported = false;
  private readonly highWater: number;
  private readonly lowWater: number;
  private readonly highWaterBytes: number;
  private readonly maxMessageChars: number;
  private readonly batch: number;
  private readonly sliceMs: number;
  readonly stats: ChannelStats = { received: 0, pauses: 0, maxQueued: 0 };

  constructor(
    private readonly socket: Duplex,
    private readonly opts: ChannelOptions<In>,
  ) {
    this.decoder = new LineDecoder(opts.maxLineBytes);
    this.highWater = opts.highWater ?? 512;
    this.lowWater = opts.lowWater ?? Math.floor(this.highWater / 4);
    this.highWaterBytes = opts.highWaterBytes ?? 16 * 1024 * 1024;
    this.maxMessageChars = opts.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
    this.batch = opts.batch ?? 128;
    this.sliceMs = opts.sliceMs ?? 8;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => {
      this.ended = true;
      this.pump();
    });
    // 'close' follows every error; the error itself is the peer going away.
    socket.on('error', () => undefined);
  }

  /**
   * Sends one message (in parts when it is long). Returns false when the socket's buffer is full
   * (wait for `drained()` before sending more if the sender can), or when the channel is closed
   * (nothing is sent).
   */
  send(message: Out): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return false;
    let ok = true;
    for (const line of linesOf(message)) ok = this.socket.write(`${line}\n`);
    return ok;
  }

  /** Resolves when the socket's write buffer has drained (at once if it is not full or closed). */
  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  get isOpen(): boolean {
    return !this.ended && !this.broken && !this.socket.destroyed;
  }

  /** Bytes written but not yet taken by the peer. */
  get pendingWriteBytes(): number {
    return this.socket.writableLength;
  }

  /** Ends the connection after what was sent is flushed. */
  end(): void {
    if (!this.socket.destroyed) this.socket.end();
  }

  /** Drops the connection at once: nothing more is delivered (see the class contract). */
  destroy(): void {
    this.dropped = true;
    this.queue.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
    this.parts = [];
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.broken || this.dropped) return;
    const { lines, overflow } = this.decoder.push(chunk);
    for (const l of lines) {
      if (l.trim() === '') continue;
      this.queue.push(l);
      this.queuedBytes += l.length;
    }
    this.stats.received += lines.length;
    const queued = this.queue.length - this.head;
    if (queued > this.stats.maxQueued) this.stats.maxQueued = queued;
    if (overflow) {
      // What came before the oversized line is valid and is delivered first.
      this.pump();
      this.break(`a message longer than ${this.opts.maxLineBytes} bytes`);
      return;
    }
    if (!this.paused && (queued > this.highWater || this.queuedBytes > this.highWaterBytes)) {
      this.paused = true;
      this.stats.pauses++;
      this.socket.pause();
    }
    if (!this.pumpScheduled) this.pump();
  }

  /** Delivers up to one batch now; the rest on later turns of the event loop. */
  private pump(): void {
    this.pumpScheduled = false;
    const started = monotonicMs();
    let n = 0;
    while (this.head < this.queue.length && !this.broken && !this.dropped) {
      if (n >= this.batch || (n > 0 && monotonicMs() - started > this.sliceMs)) break;
      const line = this.queue[this.head]!;
      this.queue[this.head] = '';
      this.head++;
      this.queuedBytes -= line.length;
      n++;
      this.deliver(line);
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    const left = this.queue.length - this.head;
    if (this.paused && left <= this.lowWater && this.queuedBytes <= this.highWaterBytes / 4 && !this.broken) {
      this.paused = false;
      this.socket.resume();
    }
    if (left > 0 && !this.broken) {
      this.pumpScheduled = true;
      setImmediate(() => this.pump());
      return;
    }
    if (this.ended && !this.closeReported) {
      this.closeReported = true;
      this.opts.onClose();
    }
  }

  private deliver(line: string): void {
    const mark = line[0];
    if (mark === '+' || mark === '=') {
      const whole = this.takePart(line, mark === '=');
      if (whole !== null) this.deliverWhole(whole);
      return;
    }
    if (this.parts.length > 0) {
      this.break('a message arrived while another one was still arriving in parts');
      return;
    }
    this.deliverWhole(line);
  }

  private deliverWhole(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.break(`a line that is not JSON (${line.length} characters)`);
      return;
    }
    const v = validate(this.opts.schema, value);
    if (!v.ok) {
      this.break(v.problem);
      return;
    }
    try {
      this.opts.onMessage(v.message);
    } catch {
      // A listener's failure is its own; the connection stays as it is.
    }
  }

  /** Adds one part (its mark stripped); returns the message's JSON text after the last, else null (also when it broke the channel). */
  private takePart(line: string, last: boolean): string | null {
    this.partsLength += line.length - 1;
    if (this.partsLength > this.maxMessageChars) {
      this.break(`a message longer than ${this.maxMessageChars} characters`);
      return null;
    }
    this.parts.push(line.slice(1));
    if (!last) return null;
    const whole = this.parts.join('');
    this.parts = [];
    this.partsLength = 0;
    return whole;
  }

  private break(reason: string): void {
    if (this.broken) return;
    this.broken = true;
    this.queue.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
    this.parts = [];
    try {
      this.opts.onBroken(reason);
    } finally {
      this.socket.destroy();
    }
  }
}

export type Validated<T> = { ok: true; message: T } | { ok: false; problem: string };

/** Validates one decoded line against a schema (the channel's envelope). Never throws. */
export function validate<T>(schema: z.core.$ZodType<T>, value: unknown): Validated<T> {
  const r = z.safeParse(schema, value);
  if (r.success) return { ok: true, message: r.data };
  const kind = value && typeof value === 'object' && 'kind' in value ? String((value as { kind: unknown }).kind).slice(0, 40) : '(none)';
  return { ok: false, problem: `invalid message of kind ${JSON.stringify(kind)}: ${r.error.issues[0]?.message ?? 'does not match the protocol'}` };
}
