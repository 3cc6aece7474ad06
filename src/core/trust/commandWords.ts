/**
 * A small, conservative reading of a shell command line for the trust model: which simple
 * commands it holds (substitutions `$(…)`, backticks and `<(…)` included, as commands of their
 * own) and, for each word, its text and whether that text is known before the command runs. It
 * does not execute or expand anything beyond the variables it is given; whatever it cannot read
 * for certain (a here-document, an unterminated quote) is reported in `problems`, and the caller
 * treats the command as one whose files cannot be known. Pure; never throws.
 */
export interface Word {
  /** The word as bash would pass it, when `literal`; otherwise the raw text. */
  text: string;
  /** No part of it is computed at run time (`$X`, `$(…)`, backticks, `~user`). */
  literal: boolean;
  /** Unquoted glob or brace characters: bash may turn it into other words. */
  pattern: boolean;
}

export interface SimpleCommand {
  words: Word[];
}

export interface ParsedCommandLine {
  commands: SimpleCommand[];
  problems: string[];
}

const MAX_DEPTH = 8;

/**
 * Splits `script` into simple commands. `vars` are substituted where `$NAME` or `${NAME}`
 * appears (e.g. CLAUDE_PROJECT_DIR); any other expansion makes its word non-literal.
 */
export function parseCommandLine(script: string, vars: Readonly<Record<string, string>> = {}): ParsedCommandLine {
  const out: ParsedCommandLine = { commands: [], problems: [] };
  parseInto(script, vars, out, 0);
  return out;
}

function parseInto(script: string, vars: Readonly<Record<string, string>>, out: ParsedCommandLine, depth: number): void {
  if (depth > MAX_DEPTH) {
    out.problems.push('substitutions nested too deeply');
    return;
  }
  let words: Word[] = [];
  let cur: { text: string; literal: boolean; pattern: boolean; started: boolean } = fresh();
  const endWord = () => {
    if (cur.started) words.push({ text: cur.text, literal: cur.literal, pattern: cur.pattern });
    cur = fresh();
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) out.commands.push({ words });
    words = [];
  };
  const sub = (inner: string) => parseInto(inner, vars, out, depth + 1);
  let i = 0;
  const n = script.length;
  while (i < n) {
    const c = script[i]!;
    if (c === ' ' || c === '\t') {
      endWord();
      i++;
    } else if (c === '\n' || c === ';' || c === '&' || c === '|' || c === ')') {
      endCommand();
      i++;
    } else if (c === '(') {
      if (cur.started) {
        // `name(` is a function definition or extglob: not something Keel reads for certain.
        out.problems.push('a parenthesis inside a word');
      }
      endCommand();
      i++;
    } else if (c === '#' && !cur.started) {
      while (i < n && script[i] !== '\n') i++;
    } else if ((c === '<' || c === '>') && script[i + 1] === '(') {
      const end = matchParen(script, i + 1);
      if (end < 0) return unterminated(out, 'process substitution');
      sub(script.slice(i + 2, end));
      cur.started = true;
      cur.literal = false;
      cur.text += script.slice(i, end + 1);
      i = end + 1;
    } else if (c === '<' || c === '>') {
      endWord();
      if (c === '<' && script[i + 1] === '<' && script[i + 2] !== '<') {
        out.problems.push('a here-document');
        return;
      }
      while (i < n && (script[i] === '<' || script[i] === '>' || script[i] === '&')) i++;
    } else if (c === '\\') {
      if (script[i + 1] === '\n') i += 2;
      else {
        cur.started = true;
        cur.text += script[i + 1] ?? '';
        i += 2;
      }
    } else if (c === "'") {
      const end = script.indexOf("'", i + 1);
      if (end < 0) return unterminated(out, 'single quote');
      cur.started = true;
      cur.text += script.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const r = readDoubleQuoted(script, i + 1, vars, sub);
      if (r === null) return unterminated(out, 'double quote');
      cur.started = true;
      cur.text += r.text;
      cur.literal &&= r.literal;
      i = r.end + 1;
    } else if (c === '$' || c === '`') {
      const r = readExpansion(script, i, vars, sub, false);
      if (r === null) return unterminated(out, c === '`' ? 'backtick' : 'expansion');
      cur.started = true;
      cur.text += r.text;
      cur.literal &&= r.literal;
      i = r.end;
    } else {
      if (c === '~' && !cur.started) {
        const m = /^~([A-Za-z0-9_.-]*)/.exec(script.slice(i))!;
        if (m[1] === '' && vars.HOME !== undefined) {
          cur.started = true;
          cur.text += vars.HOME;
          i += 1;
          continue;
        }
        cur.literal = false;
      }
      if (c === '*' || c === '?' || c === '[' || (c === '{' && /^\{[^}\s]*(,|\.\.)[^}\s]*\}/.test(script.slice(i)))) cur.pattern = true;
      cur.started = true;
      cur.text += c;
      i++;
    }
  }
  endCommand();
}

function fresh(): { text: string; literal: boolean; pattern: boolean; started: boolean } {
  return { text: '', literal: true, pattern: false, started: false };
}

function unterminated(out: ParsedCommandLine, what: string): void {
  out.problems.push(`an unterminated ${what}`);
}

/** Reads `"…"` from `start` (just after the quote). Null when it never ends. */
function readDoubleQuoted(s: string, start: number, vars: Readonly<Record<string, string>>, sub: (inner: string) => void): { text: string; literal: boolean; end: number } | null {
  let text = '';
  let literal = true;
  let i = start;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"') return { text, literal, end: i };
    if (c === '\\' && '$`"\\\n'.includes(s[i + 1] ?? '')) {
      if (s[i + 1] !== '\n') text += s[i + 1];
      i += 2;
    } else if (c === '$' || c === '`') {
      const r = readExpansion(s, i, vars, sub, true);
      if (r === null) return null;
      text += r.text;
      literal &&= r.literal;
      i = r.end;
    } else {
      text += c;
      i++;
    }
  }
  return null;
}

/** Reads one `$…` or backtick expansion at `i`; `end` is the index after it. Null when it never ends. */
function readExpansion(
  s: string,
  i: number,
  vars: Readonly<Record<string, string>>,
  sub: (inner: string) => void,
  quoted: boolean,
): { text: string; literal: boolean; end: number } | null {
  if (s[i] === '`') {
    let j = i + 1;
    let inner = '';
    while (j < s.length && s[j] !== '`') {
      if (s[j] === '\\' && j + 1 < s.length) {
        inner += s[j + 1];
        j += 2;
      } else inner += s[j++];
    }
    if (j >= s.length) return null;
    sub(inner);
    return { text: s.slice(i, j + 1), literal: false, end: j + 1 };
  }
  const next = s[i + 1];
  if (next === '(') {
    const end = matchParen(s, i + 1);
    if (end < 0) return null;
    // `$((…))` is arithmetic; anything else a command substitution.
    if (s[i + 2] !== '(') sub(s.slice(i + 2, end));
    return { text: s.slice(i, end + 1), literal: false, end: end + 1 };
  }
  if (next === "'" && !quoted) {
    const end = s.indexOf("'", i + 2);
    if (end < 0) return null;
    return { text: s.slice(i + 2, end), literal: true, end: end + 1 };
  }
  if (next === '{') {
    const end = s.indexOf('}', i + 2);
    if (end < 0) return null;
    const name = s.slice(i + 2, end);
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && vars[name] !== undefined) return { text: vars[name]!, literal: true, end: end + 1 };
    return { text: s.slice(i, end + 1), literal: false, end: end + 1 };
  }
  const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i + 1));
  if (m) {
    const name = m[0];
    if (vars[name] !== undefined) return { text: vars[name]!, literal: true, end: i + 1 + name.length };
    return { text: `$${name}`, literal: false, end: i + 1 + name.length };
  }
  if (next !== undefined && /[0-9@*#?$!-]/.test(next)) return { text: s.slice(i, i + 2), literal: false, end: i + 2 };
  // A lone `$` is itself.
  return { text: '$', literal: true, end: i + 1 };
}

/** The index of the `)` closing the `(` at `open`, skipping quotes and nested parentheses; -1 if none. */
function matchParen(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') i++;
    else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === '\\') i++;
      if (i >= s.length) return -1;
    } else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
