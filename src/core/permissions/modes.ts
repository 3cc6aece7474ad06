import type { PermissionMode } from '../../shared/domain/permissionModes';

/**
 * What each permission mode does to a decision, in one place. The engine's precedence
 * (`combine` in engine.ts: deny rules, then a read-only mode's refusal, then ask rules and safety
 * asks, then the mode, then allow rules, then the user), the permission machine's `checkMode` and
 * the fallback used when the engine cannot load all read these; none of them names a mode.
 * The list of modes and their labels are in src/shared/domain/permissionModes.ts.
 */
export interface ModeSemantics {
  /** Look, do not change: anything not read-only is refused, before any rule or question (plan). */
  refusesChanges: boolean;
  /** Nobody is asked: what would ask is denied (dontAsk). */
  deniesInsteadOfAsking: boolean;
  /** Edits inside the workspace, and read-only commands that write there, need no question (acceptEdits). */
  acceptsEditsInside: boolean;
  /** Whatever no deny rule, ask rule or safety ask stops is allowed (bypassPermissions). */
  allowsUnlessStopped: boolean;
}

const NONE: ModeSemantics = { refusesChanges: false, deniesInsteadOfAsking: false, acceptsEditsInside: false, allowsUnlessStopped: false };

export const MODE_SEMANTICS: Readonly<Record<PermissionMode, ModeSemantics>> = {
  default: NONE,
  acceptEdits: { ...NONE, acceptsEditsInside: true },
  plan: { ...NONE, refusesChanges: true },
  dontAsk: { ...NONE, deniesInsteadOfAsking: true },
  bypassPermissions: { ...NONE, allowsUnlessStopped: true },
};

/** A decision the mode alone makes: allowed, or refused. */
export type ModeVerdict = { decision: 'allow' | 'deny'; reason: string };

/** The refusal of a change by a mode that makes none, or null when the mode lets it be decided further. */
export function refusalOfChange(mode: PermissionMode, readOnly: boolean): ModeVerdict | null {
  return MODE_SEMANTICS[mode].refusesChanges && !readOnly ? { decision: 'deny', reason: `${mode} mode allows read-only tools only` } : null;
}

/**
 * What becomes of a call that would ask: a question, or a denial in a mode that asks nobody.
 * `reason` says why it would ask.
 */
export function whenItWouldAsk(mode: PermissionMode, reason: string): { decision: 'ask' | 'deny'; reason: string } {
  return MODE_SEMANTICS[mode].deniesInsteadOfAsking ? { decision: 'deny', reason: `${reason} (${mode} mode denies what would ask)` } : { decision: 'ask', reason };
}

/** The allow of a mode that allows whatever was not stopped before it, or null. */
export function allowedByMode(mode: PermissionMode): ModeVerdict | null {
  return MODE_SEMANTICS[mode].allowsUnlessStopped ? { decision: 'allow', reason: `${mode} mode` } : null;
}

/** The allow of an edit inside the workspace (`what` names it) by a mode that accepts edits, or null. */
export function acceptedEdit(mode: PermissionMode, what: string): ModeVerdict | null {
  return MODE_SEMANTICS[mode].acceptsEditsInside ? { decision: 'allow', reason: `${mode} mode: ${what}` } : null;
}
