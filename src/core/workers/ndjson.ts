/**
 * Splits a byte stream into lines of at most `maxLineBytes` bytes (the newline excluded). A line
 * that grows past the limit is reported as soon as it does, without waiting for its end, so a
 * peer can never make this side buffer more than the limit. Lines are decoded as UTF-8 only once
 * complete (a newline byte never occurs inside a multi-byte character).
 */
export class LineDecoder {
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
