import type { PendingPermission } from '../shared/protocol/chatMessages';

/**
 * The permission request a keyboard shortcut (Keel: Allow / Deny Pending Permission, Open Diff)
 * acts on: the oldest one of the task the chat shows, else the window's oldest (the one the
 * status bar item names). Undefined when none waits. Pure.
 */
export function pendingFor(pending: readonly PendingPermission[], shownTaskId: string | undefined): PendingPermission | undefined {
  return pending.find((p) => shownTaskId !== undefined && p.taskId === shownTaskId) ?? pending[0];
}

/** What a shortcut says when there is nothing for it to act on (a notice, never a silent no-op). */
export const NOTHING_PENDING = 'Keel: no permission request is waiting.';
