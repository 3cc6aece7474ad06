/**
 * Watches one provider request: links the caller's abort signal to the SDK request, and turns
 * "no bytes for `stallTimeoutMs`" into an abort flagged as a stall.
 *
 * The stall clock only runs while the provider is waiting on the network: it is suspended while
 * the consumer holds an event (a slow consumer is not a stalled server) and restarted by every
 * chunk of bytes the response body delivers.
 */
export class StreamGuard {
  readonly #controller = new AbortController();
  readonly #external: AbortSignal;
  readonly #stallTimeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armed = false;
  #stalled = false;
  #disposed = false;
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
  /** Bytes arrived: restart the clock if it is running. */
  touch(): void {
    this.#lastActivity = Date.now();
  }

  /** A fetch for the SDK whose response bodies report every chunk to `touch()`. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await globalThis.fetch(input, init);
    if (!response.body) return response;
    const touch = (): void => this.touch();
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          touch();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

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
