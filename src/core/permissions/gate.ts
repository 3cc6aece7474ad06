import type { EditReview } from '../../shared/domain/review';
import type { PermissionSubject } from '../tools/types';

/**
 * Asking the person: what the permission machine's `askUser` state hands a host when the engine
 * says "ask", and the answer it gets back. The extension shows a prompt (chat card, diff editor,
 * modal; first answer wins); headless, the CLI's asker denies.
 */
export interface PermissionRequest {
  requestId: string;
  taskId: string;
  toolCallId: string;
  tool: string;
  input: unknown;
  subject: PermissionSubject;
  reason: string;
  /** The rule that made it ask, if one did (e.g. `Bash(git push:*)` in an ask list). */
  rule?: string;
  /** Unparseable, sudo, writes outside the workspace, network tools: hosts show a modal too. */
  risky?: boolean;
  /** What "Always allow" would save, most specific first; hosts let the user edit it. */
  suggestedRules?: string[];
}

export type PermissionAnswer = {
  decision: 'allow' | 'deny';
  feedback?: string;
  /** Set when the user chose "Always allow": the rules the host saved, and where. */
  always?: { rules: string[]; where: 'project' | 'local' | 'user' };
  /**
   * An Edit or Write the person reviewed change by change (an allow of exactly `review.content`,
   * made from the request's proposed diff): the tool writes that text and tells the model which
   * changes landed. Only with `decision: 'allow'`.
   */
  review?: EditReview;
};

export interface PermissionAsker {
  /** Resolves with the user's answer; rejects or resolves deny when `signal` aborts. */
  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer>;
}

/** Headless: nobody to ask, so what would ask is denied (documented in docs/cli.md). */
export const denyingAsker: PermissionAsker = {
  async ask() {
    return { decision: 'deny', feedback: 'No one is available to approve this (headless run); choose a mode that allows it, e.g. --mode acceptEdits or bypassPermissions.' };
  },
};
