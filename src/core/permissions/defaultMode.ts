import type { PermissionMode } from '../../shared/domain/permissionModes';

/**
 * Which mode a task starts in when nobody chose one (docs/permissions.md, "The starting mode"):
 * the settings files' `defaultMode` (Claude Code's `permissions.defaultMode`), with one safety
 * rule. The user's own file (`~/.keel/settings.json`) may set any mode. A workspace file
 * (`.claude/`, `.keel/` settings and settings.local, or a `--settings FILE`) comes with the
 * repository, so it may only make the mode stricter, never looser: a looser or incomparable one
 * is ignored with a notice. An explicit choice (`--mode`, the VS Code setting) wins over all of
 * this; the caller applies that.
 *
 * Strictness is what each mode lets through (modes.ts): bypassPermissions < acceptEdits <
 * default < plan, and default < dontAsk; plan and dontAsk are incomparable (plan still asks for a
 * read outside the workspace that dontAsk denies; dontAsk allows a change that an allow rule
 * allows, which plan refuses), so neither may replace the other from a workspace file.
 */
const LOOSER_THAN: Readonly<Record<PermissionMode, readonly PermissionMode[]>> = {
  bypassPermissions: [],
  acceptEdits: ['bypassPermissions'],
  default: ['acceptEdits', 'bypassPermissions'],
  plan: ['default', 'acceptEdits', 'bypassPermissions'],
  dontAsk: ['default', 'acceptEdits', 'bypassPermissions'],
};

/** True when `mode` lets through nothing that `than` would not: the same mode, or a stricter one. */
export function atLeastAsStrict(mode: PermissionMode, than: PermissionMode): boolean {
  return mode === than || LOOSER_THAN[mode].includes(than);
}

/** One `defaultMode` a settings file asks for. */
export interface ModeRequest {
  mode: PermissionMode;
  scope: 'project' | 'local' | 'user';
  path: string;
  /** A workspace request the person approved (docs/permissions.md, "Trust"): it may loosen. */
  approved?: boolean;
}

export interface SettledMode {
  /** The mode the files settle on; undefined when none asks for one (the caller's default applies). */
  mode: PermissionMode | undefined;
  /** One per ignored request: what was ignored and why, for the person to see. */
  notices: string[];
}

/**
 * Folds the files' requests in reading order (user file first). Starting from the user file's
 * mode (else `default`), each workspace file's request applies only when it is at least as strict
 * as the mode so far. The result is never looser than what the user file (or `default`) says. Pure.
 */
export function settleDefaultMode(requests: readonly ModeRequest[]): SettledMode {
  const notices: string[] = [];
  let mode: PermissionMode | undefined;
  for (const r of requests.filter((q) => q.scope === 'user')) mode = r.mode;
  for (const r of requests.filter((q) => q.scope !== 'user')) {
    const base = mode ?? 'default';
    if (r.approved || atLeastAsStrict(r.mode, base)) mode = r.mode;
    else {
      const hint = 'approve this workspace (keel trust approve), set a looser default in ~/.keel/settings.json, or choose it for a run';
      notices.push(`${r.path}: defaultMode "${r.mode}" ignored: a workspace settings file may only make the mode stricter than "${base}" (${hint})`);
    }
  }
  return { mode, notices };
}

/**
 * The workspace requests `settleDefaultMode` would ignore as looser, each with the mode it would
 * keep instead (`base`): what a person may approve (docs/permissions.md, "Trust"). Pure.
 */
export function looserRequests(requests: readonly ModeRequest[]): { request: ModeRequest; base: PermissionMode }[] {
  const out: { request: ModeRequest; base: PermissionMode }[] = [];
  let mode: PermissionMode | undefined;
  for (const r of requests.filter((q) => q.scope === 'user')) mode = r.mode;
  for (const r of requests.filter((q) => q.scope !== 'user')) {
    const base = mode ?? 'default';
    if (atLeastAsStrict(r.mode, base)) mode = r.mode;
    else out.push({ request: r, base });
  }
  return out;
}
