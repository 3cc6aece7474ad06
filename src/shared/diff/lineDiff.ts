/** One line of a diff: kept, removed or added. */
export interface DiffLine {
  kind: 'same' | 'del' | 'add';
  text: string;
}

/** Above this many cells the middle part is shown as removed-then-added instead of aligned. */
const MAX_CELLS = 2_000_000;

/**
 * A line diff of `before` (null: a new file) and `after`: common prefix and suffix are kept, the
 * middle is aligned by a longest-common-subsequence table when it is small enough. Pure.
 */
export function diffLines(before: string | null, after: string): DiffLine[] {
  const a = before === null || before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = a.slice(0, start).map((text) => ({ kind: 'same', text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length > MAX_CELLS) {
    for (const text of midA) out.push({ kind: 'del', text });
    for (const text of midB) out.push({ kind: 'add', text });
  } else {
    out.push(...lcsDiff(midA, midB));
  }
  for (const text of a.slice(endA)) out.push({ kind: 'same', text });
  return out;
}

function lcsDiff(a: string[], b: string[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const t = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i * w + j] = a[i] === b[j] ? t[(i + 1) * w + j + 1]! + 1 : Math.max(t[(i + 1) * w + j]!, t[i * w + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i]! });
      i++;
      j++;
    } else if (t[(i + 1) * w + j]! >= t[i * w + j + 1]!) out.push({ kind: 'del', text: a[i++]! });
    else out.push({ kind: 'add', text: b[j++]! });
  }
  while (i < n) out.push({ kind: 'del', text: a[i++]! });
  while (j < m) out.push({ kind: 'add', text: b[j++]! });
  return out;
}

/**
 * Keeps changed lines and `context` lines around them; longer runs of unchanged lines become a
 * single `null` (shown as "⋯"). Pure.
 */
export function withContext(lines: DiffLine[], context = 3): Array<DiffLine | null> {
  const keep = new Uint8Array(lines.length);
  lines.forEach((l, i) => {
    if (l.kind === 'same') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = 1;
  });
  const out: Array<DiffLine | null> = [];
  let skipped = false;
  lines.forEach((l, i) => {
    if (keep[i]) {
      out.push(l);
      skipped = false;
    } else if (!skipped) {
      out.push(null);
      skipped = true;
    }
  });
  return out;
}

/** One change of a diff: consecutive removed and added lines between unchanged ones. */
export interface Hunk {
  /** 0-based, in file order. */
  index: number;
  /** Where the hunk starts in the old text (0-based line) and the lines it removes. */
  oldStart: number;
  oldLines: string[];
  /** Where it starts in the new text (0-based line) and the lines it adds. */
  newStart: number;
  newLines: string[];
}

/** The changes between `before` (null: no file) and `after`, each a hunk of its own. Pure. */
export function hunksOf(before: string | null, after: string): Hunk[] {
  const lines = diffLines(before, after);
  const out: Hunk[] = [];
  let oldLine = 0;
  let newLine = 0;
  let cur: Hunk | null = null;
  for (const l of lines) {
    if (l.kind === 'same') {
      cur = null;
      oldLine++;
      newLine++;
      continue;
    }
    if (!cur) {
      cur = { index: out.length, oldStart: oldLine, oldLines: [], newStart: newLine, newLines: [] };
      out.push(cur);
    }
    if (l.kind === 'del') {
      cur.oldLines.push(l.text);
      oldLine++;
    } else {
      cur.newLines.push(l.text);
      newLine++;
    }
  }
  return out;
}

/** What the person chose for one hunk: apply it, keep the old lines, or put their own lines. */
export type HunkChoice = { kind: 'accept' } | { kind: 'reject' } | { kind: 'edit'; lines: string[] };

/**
 * `before` with each hunk as chosen (a missing choice applies the hunk). `before` is the text the
 * hunks were made from. Pure.
 */
export function applyHunks(before: string | null, hunks: Hunk[], choices: readonly (HunkChoice | undefined)[]): string {
  const old = before === null || before === '' ? [] : before.split('\n');
  const out: string[] = [];
  let at = 0;
  for (const h of hunks) {
    while (at < h.oldStart) out.push(old[at++]!);
    const c = choices[h.index] ?? { kind: 'accept' };
    if (c.kind === 'accept') out.push(...h.newLines);
    else if (c.kind === 'reject') out.push(...h.oldLines);
    else out.push(...c.lines);
    at += h.oldLines.length;
  }
  while (at < old.length) out.push(old[at++]!);
  return out.join('\n');
}

/**
 * A unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@`) of `before` → `after`, with
 * `context` lines around each change; '' when they are equal. `maxLines` cuts a long one with a
 * line saying how much was left out. Pure.
 */
export function unifiedDiff(path: string, before: string | null, after: string | null, context = 3, maxLines = 400): string {
  if (before === after) return '';
  const lines = diffLines(before, after ?? '');
  const head = [`--- ${before === null ? '/dev/null' : `a/${path}`}`, `+++ ${after === null ? '/dev/null' : `b/${path}`}`];
  const body: string[] = [];
  let i = 0;
  const oldNo: number[] = [];
  const newNo: number[] = [];
  let o = 1;
  let n = 1;
  for (const l of lines) {
    oldNo.push(o);
    newNo.push(n);
    if (l.kind !== 'add') o++;
    if (l.kind !== 'del') n++;
  }
  while (i < lines.length) {
    if (lines[i]!.kind === 'same') {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    // Extend over changes closer than 2·context lines apart.
    for (;;) {
      while (end < lines.length && lines[end]!.kind !== 'same') end++;
      let next = end;
      while (next < lines.length && lines[next]!.kind === 'same' && next - end < 2 * context) next++;
      if (next < lines.length && lines[next]!.kind !== 'same') end = next;
      else break;
    }
    const stop = Math.min(lines.length, end + context);
    const slice = lines.slice(start, stop);
    const oldCount = slice.filter((l) => l.kind !== 'add').length;
    const newCount = slice.filter((l) => l.kind !== 'del').length;
    const oldAt = oldCount === 0 ? oldNo[start]! - 1 : oldNo[start]!;
    const newAt = newCount === 0 ? newNo[start]! - 1 : newNo[start]!;
    body.push(`@@ -${oldAt},${oldCount} +${newAt},${newCount} @@`);
    for (const l of slice) body.push(`${l.kind === 'same' ? ' ' : l.kind === 'del' ? '-' : '+'}${l.text}`);
    i = stop;
  }
  if (body.length > maxLines) return [...head, ...body.slice(0, maxLines), `… ${body.length - maxLines} more lines of this diff not shown`].join('\n');
  return [...head, ...body].join('\n');
}
