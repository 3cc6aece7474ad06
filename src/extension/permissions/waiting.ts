import type { PendingPermission } from '../../shared/protocol/chatMessages';

/** What the status bar item and the view's badge show while prompts wait. */
export interface WaitingIndicator {
  /** Status bar text (with a codicon). */
  text: string;
  tooltip: string;
  /** The view badge's number. */
  count: number;
}

/** The view badge for the prompts waiting now (the number and its tooltip); see `badgeFor`. */
export interface WaitingBadge {
  value: number;
  tooltip: string;
}

/**
 * The chat view's badge for `pending`: the number of prompts, or — once none waits — a badge of 0,
 * which VS Code does not draw. Not `undefined`: VS Code (1.100, the version the e2e runs) keeps a
 * webview view's last badge on the activity bar when it is set to undefined (its webview view pane
 * only ever adds the badge's activity; microsoft/vscode#331019), so "Keel is waiting for
 * permission" stayed after every task had ended. Pure.
 */
export function badgeFor(pending: readonly PendingPermission[]): WaitingBadge {
  const n = pending.length;
  if (n === 0) return { value: 0, tooltip: '' };
  return { value: n, tooltip: n === 1 ? 'Keel is waiting for permission' : `Keel is waiting for ${n} permission answers` };
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
