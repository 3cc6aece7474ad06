import type { PendingPermission } from '../../shared/protocol/chatMessages';

/** What the status bar item and the view's badge show while prompts wait. */
export interface WaitingIndicator {
  /** Status bar text (with a codicon). */
  text: string;
  tooltip: string;
  /** The view badge's number. */
  count: number;
}

/**
 * The indicator for the prompts waiting now, or undefined when none waits (then the status bar
 * item is hidden and the badge cleared). Pure.
 */
export function waitingIndicator(pending: readonly PendingPermission[]): WaitingIndicator | undefined {
  if (pending.length === 0) return undefined;
  const first = pending[0]!;
  const more = pending.length > 1 ? ` (+${pending.length - 1} more)` : '';
  return {
    text: `$(shield) Keel: waiting for permission${pending.length > 1 ? ` (${pending.length})` : ''}`,
    tooltip: `Keel is waiting for your answer: ${first.tool} — ${first.summary.slice(0, 200)}${more}. Click to show the chat.`,
    count: pending.length,
  };
}
