/** The `@` mention being typed just before the caret, if any: its start index and query. Pure. */
export function activeMention(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!m) return undefined;
  const query = m[2] ?? '';
  return { start: caret - query.length - 1, query };
}

/** `text` with the mention at `start` (up to `caret`) replaced by `@path `; returns the new caret too. */
export function insertMention(text: string, start: number, caret: number, path: string): { text: string; caret: number } {
  const inserted = `@${path} `;
  return { text: text.slice(0, start) + inserted + text.slice(caret), caret: start + inserted.length };
}
