/**
 * Gives the event loop a turn, now and then, to a loop that may run for long on data already
 * buffered.
 *
 * Why: an SDK's stream is an async iterator, and when the answer arrives faster than it is
 * handled (a 50 MB answer, a fast local server) each step resolves from a buffer, in microtasks:
 * the loop never reaches timers or I/O until the whole answer is in. In a worker that starved
 * its health check (killed after 5 s: issue 26, item 4), in a host it stalls every view; and the
 * per-turn coalescing of deltas (machines/stream/actors.ts) merged the whole answer into one.
 * Contract: `due()` is true once `sliceMs` passed since the last turn given; `breathe()` resolves
 * on the next turn of the event loop (after I/O and timers) and starts a new slice.
 */
export class TurnSlicer {
  private last = Date.now();

  constructor(private readonly sliceMs = 20) {}

  due(): boolean {
    return Date.now() - this.last >= this.sliceMs;
  }

  breathe(): Promise<void> {
    return new Promise((resolve) =>
      setImmediate(() => {
        this.last = Date.now();
        resolve();
      }),
    );
  }
}
