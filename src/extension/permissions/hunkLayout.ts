import { applyHunks, hunksOf, type HunkChoice } from '../../shared/diff/lineDiff';

/** One hunk as the proposed side of the diff editor shows it now. */
export interface LaidOutHunk {
  index: number;
  /** 0-based line of the shown text where the hunk's region starts. */
  line: number;
  /** How many lines it takes there now (0: a removal applied, or an addition left out). */
  lines: number;
  choice: HunkChoice['kind'];
}

/**
 * The proposed side of a reviewed Edit/Write: `before` with each hunk as chosen (what would be
 * written), and where each hunk's region now sits, for the diff editor's per-hunk lenses. Pure.
 */
export function hunkLayout(before: string | null, after: string, choices: readonly (HunkChoice | undefined)[]): { content: string; hunks: LaidOutHunk[] } {
  const hunks = hunksOf(before, after);
  const out: LaidOutHunk[] = [];
  let shift = 0; // shown line − old line, before the current hunk
  for (const h of hunks) {
    const c = choices[h.index] ?? { kind: 'accept' as const };
    const lines = c.kind === 'accept' ? h.newLines.length : c.kind === 'reject' ? h.oldLines.length : c.lines.length;
    out.push({ index: h.index, line: h.oldStart + shift, lines, choice: c.kind });
    shift += lines - h.oldLines.length;
  }
  return { content: applyHunks(before, hunks, choices), hunks: out };
}

/** The hunk whose region holds shown line `line` (or, for an empty region, starts there), if any. */
export function hunkAtLine(layout: LaidOutHunk[], line: number): LaidOutHunk | undefined {
  return layout.find((h) => (h.lines === 0 ? line === h.line : line >= h.line && line < h.line + h.lines));
}

/** The choices to send with an allow: one per hunk, or none when every hunk applies as proposed. */
export function choicesToSend(count: number, choices: readonly (HunkChoice | undefined)[]): HunkChoice[] | undefined {
  const all = Array.from({ length: count }, (_, i): HunkChoice => choices[i] ?? { kind: 'accept' });
  return all.some((c) => c.kind !== 'accept') ? all : undefined;
}

/**
 * Whether the proposed side's text (`shown`, as VS Code holds it) is still `layout` (what the
 * choices would write), the person having typed nothing. Line endings are not compared: VS Code
 * turns a document's mixed line endings into one kind as it loads it, which is no edit. Pure.
 */
export function showsLayout(shown: string, layout: string): boolean {
  const lines = (t: string) => t.replace(/\r\n?/g, '\n');
  return shown === layout || lines(shown) === lines(layout);
}
