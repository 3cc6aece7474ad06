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
