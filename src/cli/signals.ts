/**
 * How `keel run` ends on a signal, whatever it is doing (a stream in flight, a command running,
 * a retry backoff, waiting on a lock):
 * - SIGTERM (and SIGHUP): stop now. Every task is recorded as interrupted and its lock released,
 *   running commands get their process group killed, and the process exits 143 (129 for SIGHUP)
 *   as soon as that is done, at the latest after `graceMs`.
 * - SIGINT (Ctrl+C): the first one cancels the task, which ends `aborted` and the run exits as
 *   usual (1). If it has not ended within `graceMs`, or on a second Ctrl+C, it is stopped as for
 *   SIGTERM and the process exits 130.
 * Nothing here blocks the event loop, so a signal is always handled.
 */
export interface SignalActions {
  /** Asks the task to cancel (first Ctrl+C). */
  cancel(): void;
  /** Stops every task and records the unsettled ones as interrupted; synchronous. */
  interrupt(signal: NodeJS.Signals): void;
}

const EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** The exit status of a run a signal ended (1 when no signal is known). */
export function signalExitCode(signal: NodeJS.Signals | undefined): number {
  return (signal && EXIT_CODES[signal]) ?? 1;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Between the end of a run (its handlers removed) and the end of the process, a command the run
 * cancelled may still be on its way out (SIGTERM ignored, SIGKILL due a moment later). Node's
 * default action for a signal would end the process without its 'exit' hooks, and such a command
 * would outlive it. So a signal then ends the process at once *through* `process.exit`, whose
 * hooks kill what is left (main.ts), with the signal's exit status.
 */
const exitNow = (signal: NodeJS.Signals): never => process.exit(signalExitCode(signal));
let installed = 0;
/**
 * While `on`, SIGINT, SIGTERM and SIGHUP end the process at once through `process.exit` (its exit
 * hooks kill the commands still running). For a command with no run to stop first (`keel mcp
 * serve`); `handleSignals` takes the signals over while it is installed.
 */
export function exitOnSignals(on: boolean): void {
  for (const signal of SIGNALS) {
    process.off(signal, exitNow);
    if (on) process.on(signal, exitNow);
  }
}

/**
 * Installs the handlers; returns the function that removes them (after the run ended on its own).
 * From then on until the process exits, a signal exits it at once (see `exitNow`).
 */
export function handleSignals(actions: SignalActions, graceMs = 3000): () => void {
  installed++;
  exitOnSignals(false);
  let cancelling: NodeJS.Timeout | undefined;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    if (cancelling) clearTimeout(cancelling);
    process.exitCode = signalExitCode(signal);
    try {
      actions.interrupt(signal);
    } finally {
      // Whatever still holds the event loop (a command's process group being killed, a socket)
      // gets `graceMs`; the process exits earlier when nothing is left.
      setTimeout(() => process.exit(), graceMs).unref();
    }
  };
  const onInt = () => {
    if (cancelling || stopping) return stop('SIGINT');
    actions.cancel();
    cancelling = setTimeout(() => stop('SIGINT'), graceMs);
    cancelling.unref();
  };
  const onTerm = () => stop('SIGTERM');
  const onHup = () => stop('SIGHUP');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.on('SIGHUP', onHup);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    if (cancelling) clearTimeout(cancelling);
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.off('SIGHUP', onHup);
    if (--installed === 0) exitOnSignals(true);
  };
}
