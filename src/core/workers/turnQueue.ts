/**
 * Runs costly starts at most one per turn of the event loop: the first at once, each next one on
 * a following turn (`setImmediate`), in order, so that what other work is waiting (I/O, timers,
 * a view's messages) runs between them instead of after all of them.
 *
 * Returns `schedule(start)`, which runs or queues `start` and returns a function that withdraws
 * it if it has not run yet (a no-op once it has). Each queue is its own: starts of one kind
 * (worker processes, worker handles) are spread out, whatever other queues do in the same turn.
 */
export function createTurnQueue(): (start: () => void) => () => void {
  const queue: (() => void)[] = [];
  let ranThisTurn = false;

  function run(start: () => void): void {
    ranThisTurn = true;
    setImmediate(() => {
      ranThisTurn = false;
      const next = queue.shift();
      if (next) run(next);
    });
    start();
  }

  return (start) => {
    if (!ranThisTurn) {
      run(start);
      return () => undefined;
    }
    queue.push(start);
    return () => {
      const i = queue.indexOf(start);
      if (i >= 0) queue.splice(i, 1);
    };
  };
}
