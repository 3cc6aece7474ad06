/**
 * Watches one provider request as its stream is read: links the caller's abort signal to the SDK
 * request, turns "no progress for `stallTimeoutMs`" into an abort flagged as a stall, and paces
 * the reading loop so that it gives the event loop a turn now and then.
 *
 * Progress is a part of the answer, not bytes: the provider calls `progress()` when the stream
 * starts and after each event it passes on; keep-alive pings (and SSE comments) never do, so a
 * server that only pings is a stalled one. Events are pushed to the consumer synchronously, so the
 * clock measures the server alone: a slow consumer cannot make it fire.
 *
 * `onQuiet` is told once per silence, at the first look that saw no progress (the answer has
 * been quiet for at least a quarter of the timeout): a host shows that it is waiting, and how long
 * it still waits, rather than nothing until the stall.
 *
 * Pacing (`turnDue` / `giveTurn`): an SDK's stream is an async iterator, and when the answer
 * arrives faster than it is handled (a 50 MB answer, a fast local server) each step resolves from
 * a buffer, in microtasks: the loop never reaches timers or I/O until the whole answer is in. In a
 * worker that starved its health check (killed after 5 s: issue 26, item 4), in a host it stalls
 * every view; and the per-turn coalescing of deltas (machines/stream/actors.ts) merged the whole
 * answer into one. `turnDue()` is true once `SLICE_MS` passed since the stream started or the last
 * turn given; `giveTurn()` resolves on the next turn of the event loop (after I/O and timers).
 * (Until 28 Nov 2026 the pacing was a class of its own, `turnSlicer.ts`, made beside each guard by
 * both providers and called at the same point of the same loop.)
 */
const LOOKS = 4;
/** How long a loop reading a buffered stream runs before it gives the event loop a turn. */
const SLICE_MS = 20;

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
  /** When the reading loop last gave the event loop a turn (or the stream started). */
  #lastTurn = Date.now();
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
      this.#lastTurn = Date.now();
      this.#look();
    }
  }

  /** The reading loop has run for a slice since its last turn given: it should `giveTurn()`. */
  turnDue(): boolean {
    return Date.now() - this.#lastTurn >= SLICE_MS;
  }

  /** Resolves on the next turn of the event loop (after I/O and timers); a new slice starts then. */
  giveTurn(): Promise<void> {
    return new Promise((resolve) =>
      setImmediate(() => {
        this.#lastTurn = Date.now();
        resolve();
      }),
    );
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
