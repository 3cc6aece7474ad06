/**
 * The permission modes, defined once: the list every schema, setting and flag accepts (the
 * protocol's zod schemas, `keel.permissions.defaultMode`, the CLI's `--mode`, the settings files'
 * `defaultMode`), the words people read for each, and the ones the chat's selector offers. Shared
 * because the webview needs the labels; what each mode allows is core's business, in
 * `src/core/permissions/modes.ts`.
 */
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** The modes the chat's mode selector offers (the others are settings-only). */
export const SELECTABLE_MODES = ['default', 'acceptEdits', 'plan'] as const satisfies readonly PermissionMode[];

export interface PermissionModeInfo {
  /** A few words for a selector, e.g. "Accept edits". */
  label: string;
  /** One sentence: what the mode lets Keel do (settings descriptions, `keel --help`). */
  summary: string;
}

export const PERMISSION_MODE_INFO: Readonly<Record<PermissionMode, PermissionModeInfo>> = {
  default: { label: 'Ask before edits', summary: 'Reads in the workspace and read-only commands run; edits and other commands ask first.' },
  acceptEdits: { label: 'Accept edits', summary: 'As default, and edits inside the workspace are allowed without asking.' },
  plan: { label: 'Plan (read-only)', summary: 'Look, do not change: read-only tools and commands only; every change is refused.' },
  dontAsk: { label: "Don't ask", summary: 'As default, but whatever would ask is denied: nobody is asked.' },
  bypassPermissions: { label: 'Bypass permissions', summary: 'Everything is allowed except what a deny or ask rule or a safety check stops.' },
};

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === 'string' && (PERMISSION_MODES as readonly string[]).includes(value);
}
