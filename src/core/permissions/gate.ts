import type { PermissionMode } from '../../shared/domain/permissionModes';
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
  /** The mode the call was decided in. */
  mode?: PermissionMode;
  /**
   * What would let this call run without asking, checked with the same engine before the host
   * is asked (`whatWouldAllow`): the least permissive mode that allows it, and allow rules when
   * only the lack of one made it ask. Neither: only a person can approve it (an ask rule or a
   * safety check asks in every mode).
   */
  allowedBy?: { mode?: PermissionMode; rules?: string[] };
}

export type PermissionAnswer = {
  decision: 'allow' | 'deny';
  feedback?: string;
  /**
   * Set when no person answered (headless: nobody to ask): what denied the call, said to the
   * model and the person instead of "denied by the user".
   */
  deniedBecause?: string;
  /** Set when the user chose "Always allow": the rules the host saved, and where. */
  always?: { rules: string[]; where: 'project' | 'local' | 'user' };
};

export interface PermissionAsker {
  /** Resolves with the user's answer; rejects or resolves deny when `signal` aborts. */
  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer>;
}

/**
 * Headless: nobody to ask, so what would ask is denied (documented in docs/cli.md), saying so —
 * never "denied by the user" — and what would really allow it (`allowedBy`, checked with the
 * engine): a mode, allow rules, or nothing but a person.
 */
export const denyingAsker: PermissionAsker = {
  async ask(request) {
    return { decision: 'deny', deniedBecause: unattendedDenial(request, 'a headless run has no one to ask') };
  },
};

/**
 * Why a call that would ask was denied where nobody can answer (`nobody`: who is missing, e.g. "a
 * headless run has no one to ask"), and what would allow it: the mode as a `--mode` flag, allow
 * rules in the workspace's `.keel/settings.local.json` (where "Always allow" saves them) — which,
 * written by hand, count only once the person approves the workspace (`keel trust approve`).
 */
export function unattendedDenial(request: Pick<PermissionRequest, 'reason' | 'allowedBy'>, nobody: string): string {
  const ways: string[] = [];
  if (request.allowedBy?.mode) ways.push(`--mode ${request.allowedBy.mode}`);
  const rules = request.allowedBy?.rules ?? [];
  // Where "Always allow" saves a rule for this workspace in VS Code (paths in it are the workspace's).
  // Written there by hand, a rule counts only once the person approves the workspace (trust).
  const where = "in the workspace's .keel/settings.local.json once you approve it (keel trust approve)";
  if (rules.length > 0) ways.push(`${rules.length === 1 ? 'the allow rule' : 'the allow rules'} ${rules.map((r) => JSON.stringify(r)).join(', ')} ${where}`);
  const how =
    ways.length > 0
      ? `${ways.join(', or ')}, would allow it`
      : 'no mode or allow rule would run it without asking, so only a person can approve it';
  return `Keel would ask first (${request.reason}) and ${nobody}; ${how}`;
}
