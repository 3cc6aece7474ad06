import { applyHunks, hunksOf, type Hunk, type HunkChoice } from '../diff/lineDiff';

/**
 * A proposed edit reviewed change by change (issue 23, "Per-hunk review"): the person applied some
 * hunks, left others out, and may have put their own lines in place of a proposal. The outcome is
 * the permission decision (an allow of exactly this text) and what the model is told.
 */
export interface EditReview {
  /** The text that is written: the file the proposal was made from, with each hunk as chosen. */
  content: string;
  /** The number of hunks the proposal had. */
  hunks: number;
  /** 1-based numbers of the hunks applied as proposed, left out, and replaced by the person's lines. */
  accepted: number[];
  rejected: number[];
  edited: number[];
  /** The person's own lines for each edited hunk. */
  edits: { hunk: number; lines: string[] }[];
}

/**
 * The review of `after` against `before` with `choices` (by hunk index; a missing one applies
 * the hunk). Pure; the host builds it from the person's choices, never from a view's text alone.
 */
export function reviewOf(before: string | null, after: string, choices: readonly (HunkChoice | undefined)[]): EditReview {
  const hunks = hunksOf(before, after);
  const out: EditReview = { content: applyHunks(before, hunks, choices), hunks: hunks.length, accepted: [], rejected: [], edited: [], edits: [] };
  for (const h of hunks) {
    const c = choices[h.index] ?? { kind: 'accept' };
    const n = h.index + 1;
    if (c.kind === 'accept' || (c.kind === 'edit' && same(c.lines, h.newLines))) out.accepted.push(n);
    else if (c.kind === 'reject' || (c.kind === 'edit' && same(c.lines, h.oldLines))) out.rejected.push(n);
    else if (c.kind === 'edit') {
      out.edited.push(n);
      out.edits.push({ hunk: n, lines: c.lines });
    }
  }
  return out;
}

/**
 * The choices that turn `before` + the proposal into `edited` (a text the person changed freely,
 * e.g. in the diff editor): each hunk whose region now holds the proposal is accepted, one that
 * holds the old lines is rejected, anything else is an edit with the lines it holds. Null when the
 * edited text does not keep the unchanged lines around the hunks (then it is one edit of the
 * whole). Pure.
 */
export function choicesFromText(before: string | null, after: string, edited: string): HunkChoice[] | null {
  const hunks = hunksOf(before, after);
  const old = before === null || before === '' ? [] : before.split('\n');
  const now = edited === '' ? [] : edited.split('\n');
  // Unchanged stretches between hunks must be found in order in the edited text.
  const choices: HunkChoice[] = [];
  let at = 0; // position in `now`
  let oldAt = 0;
  for (let k = 0; k < hunks.length; k++) {
    const h = hunks[k]!;
    const kept = old.slice(oldAt, h.oldStart);
    if (!startsWith(now, at, kept)) return null;
    at += kept.length;
    oldAt = h.oldStart + h.oldLines.length;
    const nextSame = old.slice(oldAt, k + 1 < hunks.length ? hunks[k + 1]!.oldStart : old.length);
    const end = findFrom(now, at, nextSame, k + 1 === hunks.length);
    if (end < 0) return null;
    const lines = now.slice(at, end);
    choices.push(same(lines, h.newLines) ? { kind: 'accept' } : same(lines, h.oldLines) ? { kind: 'reject' } : { kind: 'edit', lines });
    at = end;
  }
  const tail = old.slice(oldAt);
  if (!(now.length - at === tail.length && startsWith(now, at, tail))) return null;
  return choices;
}

function startsWith(a: string[], at: number, b: string[]): boolean {
  if (at + b.length > a.length) return false;
  for (let i = 0; i < b.length; i++) if (a[at + i] !== b[i]) return false;
  return true;
}

/** Where `b` starts in `a` at or after `from` (the last hunk: `b` must end `a`). */
function findFrom(a: string[], from: number, b: string[], last: boolean): number {
  if (last) return startsWith(a, a.length - b.length, b) && a.length - b.length >= from ? a.length - b.length : -1;
  if (b.length === 0) return -1;
  for (let i = from; i + b.length <= a.length; i++) if (startsWith(a, i, b)) return i;
  return -1;
}

function same(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** One line for the permission record: "allowed in part by the user: changes 1, 3 of 3 applied, 2 left out". */
export function reviewReason(r: EditReview): string {
  const parts = [`${list(r.accepted)} applied`];
  if (r.edited.length) parts.push(`${list(r.edited)} changed by the user`);
  if (r.rejected.length) parts.push(`${list(r.rejected)} left out`);
  const whole = r.rejected.length === 0 && r.edited.length === 0;
  return `${whole ? 'allowed by the user' : 'allowed in part by the user'} after a review of each change: ${parts.join(', ')} (of ${r.hunks})`;
}

function list(ns: number[]): string {
  if (ns.length === 0) return 'no change';
  return `${ns.length === 1 ? 'change' : 'changes'} ${ns.join(', ')}`;
}

/**
 * What the model is told after a reviewed edit was written: which changes landed, which were left
 * out (the file keeps its old lines there), which the user rewrote and with what, and the file as
 * it now reads (when short), so its next step starts from the real file.
 */
export function reviewForModel(path: string, before: string | null, after: string, r: EditReview): string {
  const hunks: Hunk[] = hunksOf(before, after);
  const lines = [`The user reviewed your change to ${path} hunk by hunk before it was written: ${r.accepted.length} of ${r.hunks} applied as you proposed.`];
  for (const h of hunks) {
    const n = h.index + 1;
    const where = h.oldLines.length ? `old lines ${h.oldStart + 1}–${h.oldStart + h.oldLines.length}` : `after old line ${h.oldStart}`;
    if (r.accepted.includes(n)) lines.push(`- Change ${n} (${where}): applied.`);
    else if (r.rejected.includes(n)) {
      lines.push(h.oldLines.length ? `- Change ${n} (${where}): NOT applied; the file keeps its old lines there:` : `- Change ${n} (${where}): NOT applied; nothing was added there.`);
      lines.push(...h.oldLines.map((l) => `    ${l}`));
    } else {
      const own = r.edits.find((e) => e.hunk === n)?.lines ?? [];
      lines.push(`- Change ${n} (${where}): the user replaced your proposal with their own lines:`, ...own.map((l) => `    ${l}`));
    }
  }
  const total = r.content.split('\n').length;
  if (total <= 200) lines.push('', `${path} now reads:`, r.content);
  else lines.push('', `Read ${path} again before editing it further: it is not what you proposed.`);
  return lines.join('\n');
}
