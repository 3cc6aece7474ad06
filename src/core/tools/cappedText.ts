/**
 * Collects streamed text while keeping memory bounded: the first half of `maxChars` and the
 * most recent half are kept, the middle is dropped and counted. `text()` returns what was kept
 * with a notice saying how many characters were dropped, so the model knows output is missing.
 */
export class CappedText {
  private head = '';
  private tail = '';
  private total = 0;

  constructor(readonly maxChars: number) {}

  append(chunk: string): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    const headMax = Math.ceil(this.maxChars / 2);
    const tailMax = this.maxChars - headMax;
    if (this.head.length < headMax) {
      const room = headMax - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
      if (chunk.length === 0) return;
    }
    this.tail += chunk;
    // Trim lazily so a stream of small chunks does not copy the tail each time.
    if (this.tail.length > tailMax * 2) this.tail = this.tail.slice(-tailMax);
  }

  /** Characters received in total. */
  get totalChars(): number {
    return this.total;
  }

  /** Characters that will not be shown by `text()`. */
  get droppedChars(): number {
    return Math.max(0, this.total - this.maxChars);
  }

  get truncated(): boolean {
    return this.droppedChars > 0;
  }

  text(): string {
    const dropped = this.droppedChars;
    if (dropped === 0) return this.head + this.tail;
    const tailMax = this.maxChars - Math.ceil(this.maxChars / 2);
    const tail = this.tail.slice(-tailMax);
    return `${this.head}\n\n[... output truncated: ${dropped} of ${this.total} characters dropped from the middle ...]\n\n${tail}`;
  }
}

/** Cuts `text` to `maxChars`, saying how much was dropped. Returns it unchanged when it fits. */
export function truncateText(text: string, maxChars: number, hint = ''): string {
  if (text.length <= maxChars) return text;
  const dropped = text.length - maxChars;
  return `${text.slice(0, maxChars)}\n\n[... truncated: ${dropped} more characters not shown${hint ? `; ${hint}` : ''} ...]`;
}
