/**
 * Watches one provider request: links the caller's abort signal to the SDK request, and turns
 * "no progress for `stallTimeoutMs`" into an abort flagged as a stall.
 *
 * Progress is a part of the answer, not bytes: the provider calls `progress()` when the stream
 * starts and after each event it passes on; keep-alive pings (and SSE comments) never do, so a
 * server that only pings is a stalled one. Events are pushed to the consumer synchronously, so the
 * clock measures the server alone: a slow consumer cannot make it fire.
 *
 * `onQuiet` is told once per silence, at the first look that saw no progress (the answer has
 * been quiet for at least a quarter of the timeout): a host shows that it is waiting, and how long
 * it still waits, rather than nothing until the stall.
 */
const LOOKS = 4;

export class StreamGuard {
  readonly #controller = new AbortController();
  readonly #external: AbortSignal;
  readonly #stallTimeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #stalled = false;
  #disposed = false;
  /** Progress seen since the clock last looked. */
  #progressed = false;
  /** Looks in a row that saw no progress. */
  #quietLooks = 0;
  readonly #onExternalAbort = (): void => this.#controller.abort(this.#external.reason);

  readonly #onQuiet: ((quietMs: number) => void) | undefined;

  constructor(external: AbortSignal, stallTimeoutMs: number, onQuiet?: (quietMs: number) => void) {
    this.#external = external;
    this.#stallTimeoutMs = stallTimeoutMs;
    this.#onQuiet = onQuiet;
    if (external.aborted) this.#controller.abort(external.reason);
    else external.addEventListener('abort', this.#onExternalAbort, { once: true });
  }

  /** Pass this to the SDK request: aborts on the caller's abort or on a stall. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  /** The caller aborted (takes precedence over a stall). */
  get cancelled(): boolean {
    return this.#external.aborted;
  }
  get stalled(): boolean {
    return this.#stalled && !this.cancelled;
  }
  get stallTimeoutMs(): number {
    return this.#stallTimeoutMs;
  }

  /** A part of the answer arrived (or the stream started): the stall clock starts over. */
  progress(): void {
    this.#progressed = true;
    if (!this.#running) {
      this.#running = true;
      this.#look();
    }
  }

  dispose(): void {
    this.#disposed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#external.removeEventListener('abort', this.#onExternalAbort);
  }

  /**
   * The clock looks LOOKS times per timeout, so progress costs one field write (events arrive by
   * the thousand per second) rather than a timestamp each. A stall is declared after LOOKS looks
   * in a row without progress: between 1 and 1 + 1/LOOKS timeouts after the last progress.
   */
  #look(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#disposed) return;
      if (this.#progressed) {
        this.#progressed = false;
        this.#quietLooks = 0;
      } else if (++this.#quietLooks >= LOOKS) {
        this.#stalled = true;
        this.#controller.abort();
        return;
      } else if (this.#quietLooks === 1) {
        this.#onQuiet?.(Math.round(this.#stallTimeoutMs / LOOKS));
      }
      this.#look();
    }, this.#stallTimeoutMs / LOOKS);
  }
}
