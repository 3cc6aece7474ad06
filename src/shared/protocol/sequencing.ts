import type { ToWebviewMessage } from './toWebview';

/**
 * The receiving side of the per-view sequence numbers, as a pure function so both the webview
 * and tests use the same rule:
 * - a message whose seq is not higher than the last applied one is a duplicate or arrived out
 *   of order: it is dropped;
 * - a `snapshot` is applied whenever its seq is new, and replaces what the view shows;
 * - an `event` before any snapshot is dropped (it would have nothing to fold into);
 * - an `event` whose seq skips numbers is still applied (a later event beats a stale view),
 *   and reported as a gap so the caller can log it.
 */
export interface SequenceState {
  /** Highest seq applied so far; 0 on a fresh page load. */
  lastSeq: number;
  /** Whether a snapshot has been applied since the page loaded. */
  hasSnapshot: boolean;
}

export const INITIAL_SEQUENCE_STATE: SequenceState = { lastSeq: 0, hasSnapshot: false };

export type SequenceVerdict =
  | { apply: true; state: SequenceState; gap: number }
  | { apply: false; state: SequenceState; reason: 'duplicate' | 'beforeSnapshot' };

/** Decides whether `message` should be applied, and the state after it. Pure. */
export function acceptMessage(state: SequenceState, message: ToWebviewMessage): SequenceVerdict {
  if (message.seq <= state.lastSeq) return { apply: false, state, reason: 'duplicate' };
  if (message.type === 'snapshot') {
    return { apply: true, state: { lastSeq: message.seq, hasSnapshot: true }, gap: 0 };
  }
  if (!state.hasSnapshot) return { apply: false, state, reason: 'beforeSnapshot' };
  return { apply: true, state: { lastSeq: message.seq, hasSnapshot: true }, gap: message.seq - state.lastSeq - 1 };
}
