/**
 * The stdout of a follower (`keel events --follow`, `keel status --follow`), which prints what
 * other processes publish until it is stopped.
 *
 * - Back-pressure: `write` returns a promise while stdout holds more than its buffer (its reader
 *   is not reading); the caller stops reading its sockets until it settles, so what waits is
 *   bounded (one buffer here; the publishers bound or drop the rest), never the whole stream.
 * - The first SIGINT, SIGTERM or SIGHUP aborts `signal`. `exit()` then ends the process at once
 *   when output is still waiting for a reader that stopped reading (Node would otherwise keep the
 *   process alive until it drained, so a second signal was needed): the follower ends on the
 *   first signal whatever its reader does. Exit status 0: stopping a follower is its normal end.
 */
export interface FollowerOutput {
  readonly signal: AbortSignal;
  write(line: string): void | Promise<void>;
  /** Removes the signal handlers (idempotent). */
  dispose(): void;
  /** The exit status (0); exits the process now if it was stopped with output still waiting. */
  exit(): number;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export function followerStdout(command: string, out: NodeJS.WriteStream = process.stdout): FollowerOutput {
  const ac = new AbortController();
  const stop = () => ac.abort();
  for (const s of SIGNALS) process.once(s, stop);
  let draining: Promise<void> | null = null;
  const whenDrained = (): Promise<void> =>
    (draining ??= new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        ac.signal.removeEventListener('abort', done);
        draining = null;
        resolve();
      };
      out.on('drain', done);
      ac.signal.addEventListener('abort', done, { once: true });
    }));
  return {
    signal: ac.signal,
    write: (line) => {
      if (ac.signal.aborted) return;
      if (!out.write(line)) return whenDrained();
    },
    dispose: () => {
      for (const s of SIGNALS) process.off(s, stop);
    },
    exit: () => {
      if (ac.signal.aborted && out.writableLength > 0) {
        process.stderr.write(`keel ${command}: stopped; ${out.writableLength} bytes its reader did not take are dropped\n`);
        process.exit(0);
      }
      return 0;
    },
  };
}
