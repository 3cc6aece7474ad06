/**
 * Exit statuses of `keel` (documented in docs/cli.md): 0 success; 1 the task failed or was
 * cancelled, or a stored task cannot be read or is locked; 2 bad usage or an unknown id; 3 the
 * storage folder cannot record or hold tasks; 128 + n when ended by signal n (130 SIGINT, 143 SIGTERM).
 */
export const EXIT_STORAGE_UNUSABLE = 3;

/** `keel loop`: the loop stalled and waits for the person (docs/loop.md). */
export const EXIT_LOOP_STALLED = 4;

/** `keel loop`: every allowed iteration ran and the goal was not reached (docs/loop.md). */
export const EXIT_LOOP_LIMIT = 5;

/**
 * `keel run`, `keel loop`: the task (the loop) paused before a model request that could take it
 * past its budget (docs/cli.md, "Budget"); a higher --max-budget-usd with --resume continues it.
 */
export const EXIT_BUDGET_REACHED = 6;

/** Said after an `unusable` storage error. */
export const STORAGE_HINT = 'choose a folder Keel can write with --storage DIR or $KEEL_HOME';
