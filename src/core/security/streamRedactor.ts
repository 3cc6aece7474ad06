import { redactSecrets } from './secrets';

/**
 * Redacts live output that arrives in chunks cut anywhere (a pipe hands over 64 KB at a time, or
 * one byte). A secret split between two chunks must not slip through in halves, so text is let
 * out line by line: a line is redacted once it is complete (ended by `\n` or `\r`). A private-key block is held until its
 * END line (it spans lines). Limits keep memory bounded: a line longer than `maxLine` is let out
 * except its last `holdBack` characters; a key block longer than `maxBlock` is replaced at once and
 * the rest of it dropped until its END line.
 *
 * Contract: the concatenation of everything `push` and `end` return is the redaction of the whole
 * stream (the same text `redactSecrets` gives for it, except where the limits above cut). `end`
 * must be called once, after the last chunk.
 */
export class StreamRedactor {
  private pending = '';
  private droppingKey = false;

  constructor(
    private readonly knownValues: () => Iterable<string>,
    private readonly limits: { maxLine: number; holdBack: number; maxBlock: number } = { maxLine: 16_384, holdBack: 4_096, maxBlock: 65_536 },
  ) {}

  /** Takes the next chunk; returns the text that may be shown now (possibly empty). */
  push(chunk: string): string {
    this.pending += chunk;
    let out = '';
    for (;;) {
      if (this.droppingKey && !this.skipKeyRest()) return out;
      const text = this.pending;
      // A carriage return ends a line too (progress bars redraw with it); no key holds one.
      let cut = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1;
      if (cut === 0 && text.length > this.limits.maxLine) cut = text.length - this.limits.holdBack;
      const begin = openKeyBlock(text.slice(0, cut));
      if (begin === -1) return out + this.release(cut);
      // A key block started and has not ended: hold it, from its line, until it does.
      const lineStart = text.lastIndexOf('\n', begin) + 1;
      if (text.length - lineStart <= this.limits.maxBlock) return out + this.release(lineStart);
      // Too long to hold: what precedes it, a marker for it, and the rest of it dropped.
      out += `${this.release(lineStart)}[REDACTED:private-key]\n`;
      this.pending = this.pending.slice(begin - lineStart + 10);
      this.droppingKey = true;
    }
  }

  /** The rest, redacted. */
  end(): string {
    const rest = this.droppingKey ? '' : this.pending;
    this.pending = '';
    this.droppingKey = false;
    return rest ? redactSecrets(rest, this.knownValues()) : '';
  }

  /** Redacts and lets out the first `n` characters of what is pending. */
  private release(n: number): string {
    if (n <= 0) return '';
    const ready = this.pending.slice(0, n);
    this.pending = this.pending.slice(n);
    return redactSecrets(ready, this.knownValues());
  }

  /** While dropping an over-long key block: drops up to and including its END line; false while none came. */
  private skipKeyRest(): boolean {
    const m = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[^\n]*\n?/.exec(this.pending);
    if (!m) {
      // Keep only a tail in which an END line may be starting.
      this.pending = this.pending.slice(-80);
      return false;
    }
    this.pending = this.pending.slice(m.index + m[0].length);
    this.droppingKey = false;
    return true;
  }
}

/** Index of a `-----BEGIN … PRIVATE KEY` with no END after it, or -1. */
function openKeyBlock(text: string): number {
  const begin = text.lastIndexOf('-----BEGIN');
  if (begin === -1) return -1;
  const header = /^-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY/.exec(text.slice(begin, begin + 80));
  if (!header) return -1;
  return /-----END[ A-Z0-9]{0,40}PRIVATE KEY/.test(text.slice(begin)) ? -1 : begin;
}
