import type { TrustItem } from './items';
import type { TrustStatus } from './workspaceTrust';

/**
 * How the trust state of a workspace reads for a person (docs/permissions.md, "Trust"): the same
 * words in `keel trust show`, in a headless run's notice and in VS Code's approval page. Pure.
 */
export type ItemState = 'approved' | 'new' | 'changed' | 'cannot be approved';

/** The state of one item in `status`. */
export function stateOf(status: TrustStatus, item: TrustItem): ItemState {
  if (item.blocked?.length) return 'cannot be approved';
  if (status.approved.includes(item)) return 'approved';
  return status.changed.has(item.id) ? 'changed' : 'new';
}

const STATE_TEXT: Record<ItemState, string> = {
  approved: 'approved',
  new: 'waits for approval',
  changed: 'changed since approved: waits for approval',
  'cannot be approved': 'cannot be approved',
};

/**
 * One item: its summary, where it comes from, its state, then each detail indented. `maxRuns`:
 * at most that many "runs …" lines (the rest counted), for a dialog that must stay readable.
 */
export function itemLines(status: TrustStatus, item: TrustItem, indent = '  ', maxRuns = Infinity): string[] {
  const state = stateOf(status, item);
  const runs = item.details.filter((d) => d.startsWith('runs '));
  const shown = runs.slice(0, maxRuns);
  const details = item.details.filter((d) => !d.startsWith('runs ') || shown.includes(d));
  const rest = runs.length - shown.length;
  if (rest > 0) details.push(shown.length ? `… and ${rest} more files it runs` : `runs ${rest} file${rest === 1 ? '' : 's'} (each with its digest in the full list)`);
  return [`${indent}${item.summary}  (${item.source}; ${STATE_TEXT[state]})`, ...details.map((d) => `${indent}    ${d}`), ...(item.blocked ?? []).map((b) => `${indent}    ${b}`)];
}

/** What `keel trust show` prints: every item, grouped by state, and what to do. */
export function statusLines(status: TrustStatus, approveCommand: string): string[] {
  const out: string[] = [`Workspace ${status.manifest.workspace}`];
  if (status.restricted) out.push("VS Code's Restricted Mode: nothing this workspace provides loosens permissions or runs until you trust the folder.");
  if (status.otherRepository) out.push('An earlier approval of this folder was for another repository (or one since replaced): it does not apply.');
  const items = status.manifest.items;
  if (items.length === 0) out.push('It provides nothing that loosens permissions or runs code: nothing to approve.');
  const waiting = [...status.pending, ...status.blocked];
  if (waiting.length) {
    out.push('', 'Held back:');
    for (const i of waiting) out.push(...itemLines(status, i));
  }
  if (status.approved.length) {
    out.push('', 'Approved:');
    for (const i of status.approved) out.push(...itemLines(status, i));
  }
  if (status.manifest.problems.length) {
    out.push('', 'Problems:');
    for (const p of status.manifest.problems) out.push(`  ${p}`);
  }
  if (status.pending.length) out.push('', `Approve all of it (as listed here) with: ${approveCommand} --fingerprint ${status.manifest.fingerprint.slice(0, 16)}`);
  return out;
}

/** The one-paragraph notice of a headless run: what was held back and how to approve it. */
export function heldNoticeLines(status: TrustStatus, showCommand: string, approveCommand: string): string[] {
  const waiting = [...status.pending, ...status.blocked];
  if (waiting.length === 0) return [];
  const one = waiting.length === 1;
  const head =
    `this workspace provides ${one ? 'something that loosens permissions or runs code' : `${waiting.length} things that loosen permissions or run code`}; ` +
    `Keel holds ${one ? 'it' : 'them'} back until you approve (review: ${showCommand}; approve: ${approveCommand}):`;
  return [head, ...waiting.map((i) => `  ${i.summary}  (${i.source}; ${STATE_TEXT[stateOf(status, i)]})`)];
}

/** The stream-json event of a headless run's held-back items. */
export interface TrustHeldEvent {
  type: 'trust';
  workspace: string;
  held: { id: string; kind: string; summary: string; source: string; state: ItemState; details: string[] }[];
  review: string;
  approve: string;
}

export function heldEvent(status: TrustStatus, showCommand: string, approveCommand: string): TrustHeldEvent {
  return {
    type: 'trust',
    workspace: status.manifest.workspace,
    held: [...status.pending, ...status.blocked].map((i) => ({
      id: i.id,
      kind: i.kind,
      summary: i.summary,
      source: i.source,
      state: stateOf(status, i),
      details: [...i.details, ...(i.blocked ?? [])],
    })),
    review: showCommand,
    approve: approveCommand,
  };
}
