/**
 * Text from a repository's files (or a model) printed to a terminal: control characters are shown
 * as `\x1b`-style escapes instead of being sent raw, so a memory file cannot move the cursor,
 * rewrite earlier lines, change the window title, set a hyperlink or hide text (ANSI/OSC escape
 * sequences, backspaces, carriage returns), and bidirectional overrides (U+202A–202E,
 * U+2066–2069) cannot reorder what is shown. Line feeds and tabs stay. Pure.
 */
export function forTerminal(text: string): string {
  let out = '';
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0;
    out += shownAsText(code) ? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`) : c;
  }
  return out;
}

/** As `forTerminal`, and on one line: line feeds and tabs shown too (a title, a file name in a list). */
export function forTerminalLine(text: string): string {
  return forTerminal(text).replace(/\n/g, '\\n').replace(/\t/g, '\\t');
}

/** C0 controls but line feed and tab, DEL, C1 controls, and the bidirectional overrides and isolates. */
function shownAsText(code: number): boolean {
  if (code === 0x0a || code === 0x09) return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}
