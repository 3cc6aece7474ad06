/**
 * The pure part of Edit: find `oldString` in `text` and replace it, with Claude Code's rules.
 * Replacement is literal (no `$&` patterns). Never throws.
 */
export type EditOutcome =
  | { ok: true; after: string; replacements: number; /** Offset of the first replacement in `after`. */ firstIndex: number; newLength: number }
  | { ok: false; reason: 'identical' | 'notFound' | 'ambiguous' | 'emptyOld'; matches: number };

export function countOccurrences(text: string, needle: string): number {
  if (needle.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

export function applyEdit(text: string, oldString: string, newString: string, replaceAll: boolean): EditOutcome {
  if (oldString === newString) return { ok: false, reason: 'identical', matches: 0 };
  if (oldString.length === 0) return { ok: false, reason: 'emptyOld', matches: 0 };
  let oldS = oldString;
  let newS = newString;
  let matches = countOccurrences(text, oldS);
  if (matches === 0 && text.includes('\r\n') && !oldS.includes('\r\n') && oldS.includes('\n')) {
    // The model usually sends LF; match a CRLF file the way it is written.
    oldS = oldS.replace(/\r?\n/g, '\r\n');
    newS = newS.replace(/\r?\n/g, '\r\n');
    matches = countOccurrences(text, oldS);
  }
  if (matches === 0) return { ok: false, reason: 'notFound', matches };
  if (matches > 1 && !replaceAll) return { ok: false, reason: 'ambiguous', matches };
  const firstIndex = text.indexOf(oldS);
  const after = replaceAll ? text.split(oldS).join(newS) : text.slice(0, firstIndex) + newS + text.slice(firstIndex + oldS.length);
  return { ok: true, after, replacements: replaceAll ? matches : 1, firstIndex, newLength: newS.length };
}

/** A few numbered lines around `[index, index+length)` of `text`, for the model to check the edit. */
export function snippetAround(text: string, index: number, length: number, context = 3, maxLines = 40): string {
  const lines = text.split('\n');
  const startLine = text.slice(0, index).split('\n').length - 1;
  const endLine = text.slice(0, index + length).split('\n').length - 1;
  const from = Math.max(0, startLine - context);
  const to = Math.min(lines.length - 1, endLine + context, from + maxLines - 1);
  const out: string[] = [];
  for (let i = from; i <= to; i++) out.push(`${String(i + 1).padStart(6)}\t${(lines[i] ?? '').replace(/\r$/, '')}`);
  return out.join('\n');
}
