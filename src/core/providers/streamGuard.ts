/**
 * Watches one provider request: links the caller's abort signal to the SDK request, and turns
 * "no progress for `stallTimeoutMs`" into an abort flagged as a stall.
 *
 * Progress is a part of the answer, not bytes: the provider restarts the clock (`arm`) after
 * each event it passes on, and keep-alive pings (or SSE comments) never do, so a server that only
 * pings is a stalled one. The clock only runs while the provider waits on the network: it is
 * suspended while the consumer holds an event (a slow consumer is not a stalled server).
 */
export class StreamGuard {
  readonly #controller = new AbortController();
  readonly #external: AbortSignal;
  readonly #stallTimeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armed = false;
  #stalled = false;
  #disposed = false;
  /** When the clock was last (re)started. */
  #lastActivity = 0;
  readonly #onExternalAbort = (): void => this.#controller.abort(this.#external.reason);

  constructor(external: AbortSignal, stallTimeoutMs: number) {
    this.#external = external;
    this.#stallTimeoutMs = stallTimeoutMs;
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

  /** Starts (or restarts) the stall clock. */
  arm(): void {
    this.#armed = true;
    this.#lastActivity = Date.now();
    if (this.#timer === undefined) this.#schedule(this.#stallTimeoutMs);
  }
  /** Stops the stall clock until the next `arm()` (the consumer holds an event). */
  suspend(): void {
    this.#armed = false;
  }
  dispose(): void {
    this.#disposed = true;
    this.#clear();
    this.#armed = false;
    this.#external.removeEventListener('abort', this.#onExternalAbort);
  }

  /**
   * One timer, re-scheduled lazily: activity only records a timestamp (events can arrive by the
   * thousand per second), and the timer checks on expiry whether the quiet time really elapsed.
   */
  #schedule(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#disposed) return;
      if (!this.#armed) return; // re-armed (and re-scheduled) by the next arm()
      const quiet = Date.now() - this.#lastActivity;
      if (quiet < this.#stallTimeoutMs) {
        this.#schedule(this.#stallTimeoutMs - quiet);
        return;
      }
      this.#stalled = true;
      this.#controller.abort();
    }, ms);
  }
  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
