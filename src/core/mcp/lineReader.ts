/**
 * Splits a byte stream into newline-terminated lines (the MCP stdio framing), in linear time
 * (the pieces of a line are joined once, when its newline comes) and bounded memory: a line longer
 * than `maxLineBytes` is not kept. Only its first `HEAD_BYTES` and last `TAIL_BYTES` are, and it
 * is handed over as `oversized` with its full length, so that the one message it was can be
 * answered (its id is at one end) while the stream goes on with the next line.
 */
export interface OversizedLine {
  head: Buffer;
  tail: Buffer;
  bytes: number;
}

const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 4 * 1024;

export class LineReader {
  private pieces: Buffer[] = [];
  private size = 0;
  /** Set while a line longer than the limit is being skipped. */
  private skipping: { head: Buffer; tail: Buffer; bytes: number } | null = null;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversized: (line: OversizedLine) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        this.add(chunk.subarray(start));
        return;
      }
      this.add(chunk.subarray(start, nl));
      this.end();
      start = nl + 1;
    }
  }

  /** Forgets a partial line (the stream ended or was closed). */
  clear(): void {
    this.pieces = [];
    this.size = 0;
    this.skipping = null;
  }

  private add(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += piece.length;
      this.skipping.tail = lastBytes(Buffer.concat([this.skipping.tail, piece.subarray(Math.max(0, piece.length - TAIL_BYTES))]), TAIL_BYTES);
      return;
    }
    if (this.size + piece.length <= this.maxLineBytes) {
      this.pieces.push(piece);
      this.size += piece.length;
      return;
    }
    const kept = Buffer.concat([...this.pieces, piece]);
    this.skipping = { head: Buffer.from(kept.subarray(0, HEAD_BYTES)), tail: Buffer.from(lastBytes(kept, TAIL_BYTES)), bytes: kept.length };
    this.pieces = [];
    this.size = 0;
  }

  private end(): void {
    const skipped = this.skipping;
    if (skipped) {
      this.skipping = null;
      this.onOversized(skipped);
      return;
    }
    const line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.size);
    this.pieces = [];
    this.size = 0;
    if (line.length > 0) this.onLine(line);
  }
}

function lastBytes(b: Buffer, n: number): Buffer {
  return b.length <= n ? b : b.subarray(b.length - n);
}

/**
 * The JSON-RPC id of a message cut off by `LineReader`, read from whichever end holds it: the
 * start (`{"jsonrpc":"2.0","id":7,…`, as Python servers write it) or the end (`…,"id":7}`, as the
 * TypeScript SDK writes a response). Undefined when neither end names one.
 */
export function idOfOversized(line: OversizedLine): string | number | undefined {
  const head = /^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(line.head.toString('utf8'));
  const tail = /[,{]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*\r?$/.exec(line.tail.toString('utf8'));
  const raw = head?.[1] ?? tail?.[1];
  if (raw === undefined) return undefined;
  try {
    const id: unknown = JSON.parse(raw);
    return typeof id === 'number' || typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
