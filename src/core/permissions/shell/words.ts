import type { Node } from 'web-tree-sitter';
import { BARE, DYNAMIC, EMPTY_QUOTE, expandBraces, QUOTED, QUOTED_DYNAMIC, type TaggedText } from './braces';

/**
 * A shell word after quote removal.
 *
 * `value` is what bash would pass when `dynamic` is false (a tilde is left as written, so rules
 * match `~/x` as written). `dynamic` means the word is not one literal string: part of it is only
 * known at run time (a variable, a substitution), or it is a brace expansion; rules never match a
 * dynamic word literally. In `value`, a part only known at run time is the character U+0000 —
 * never a character of a real word, since bash cuts `$'…\0…'` at the NUL (see evalWord) and
 * commands holding a NUL byte are refused before parsing.
 *
 * `fields` are the words bash really passes for this one, when all of them are known before it
 * runs: brace expansion (`{a,b}` gives two fields, `{,}` none), tilde expansion (`~/x` gives
 * `$HOME/x`), quote removal. Absent when any part is computed at run time, or for `~user`,
 * `~+`, `~-`. Glob characters stay in the fields; `glob` says the word has unquoted ones.
 */
export interface ShellWord {
  value: string;
  dynamic: boolean;
  glob: boolean;
  /** The source text, for messages. */
  text: string;
  fields?: string[];
  /**
   * For a computed word: every computed part is inside double quotes and none is `"$@"`-like,
   * so bash passes exactly one word (whose value is still unknown).
   */
  single?: boolean;
  /**
   * Stands for every file at or below the path `value` names (what `find ROOT -exec cmd {} +`
   * and `find ROOT | xargs cmd` hand the command): a read of it is a search of that folder, a
   * write one of the whole tree.
   */
  below?: boolean;
  /** An argument xargs takes from its input (its `-I` replacement string): computed. */
  fromInput?: boolean;
}

/** A word standing for the files at or below `path` (see `ShellWord.below`). */
export function belowWord(path: string): ShellWord {
  return { value: path, dynamic: false, glob: false, text: `{files below ${path}}`, fields: [path], below: true };
}

const DYNAMIC_KINDS = new Set(['simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion']);
const PLACEHOLDER = '\u0000';
/** What bash passes for a process substitution (the number varies; any /dev/fd/N is a pipe). */
const PIPE = '/dev/fd/63';
const PLAIN = /^[A-Za-z0-9_./:=@%+,-]+$/;
const EMPTY_MARK = '\u0002';

/** Evaluates a word-like node statically; `home` expands `~` in `fields`. Never throws. */
export function evalWord(node: Node, home?: string): ShellWord {
  const type = node.type;
  // `<(cmd)` and `>(cmd)` standing alone are a pipe bash names /dev/fd/N: an operand that is no
  // file (the command inside is analysed on its own).
  if (type === 'process_substitution') return { value: PIPE, dynamic: false, glob: false, text: node.text, fields: [PIPE] };
  if (type === 'word' || type === 'number') {
    // The common case: plain characters only (no quote, escape, expansion, brace, tilde, glob).
    const text = node.text;
    if (PLAIN.test(text)) return { value: text, dynamic: false, glob: false, text, fields: [text] };
  }
  const b = new Tagger();
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop() as Node;
    switch (n.type) {
      case 'word':
      case 'number':
      case 'brace_expression':
        b.bare(n.text);
        break;
      case 'raw_string':
        b.quoted(n.text.slice(1, -1));
        break;
      case 'ansi_c_string': {
        // bash keeps C strings: a NUL ends this quoted part (the rest of the word goes on).
        const decoded = decodeAnsiC(n.text.slice(2, -1));
        const nul = decoded.indexOf('\0');
        b.quoted(nul >= 0 ? decoded.slice(0, nul) : decoded);
        break;
      }
      case 'string':
      case 'translated_string':
        b.doubleQuoted(n);
        break;
      case 'concatenation': {
        const children = n.children;
        for (let i = children.length - 1; i >= 0; i--) {
          const c = children[i];
          if (c) stack.push(c);
        }
        break;
      }
      default:
        if (!DYNAMIC_KINDS.has(n.type) && !n.isNamed) b.bare(n.text);
        else b.dynamic();
    }
  }
  return finish(b.result(), node.text, home);
}

function finish(t: TaggedText, text: string, home: string | undefined): ShellWord {
  const value = t.text.split(EMPTY_MARK).join('');
  const bare = t.tags.includes(DYNAMIC);
  const hasDynamic = bare || t.tags.includes(QUOTED_DYNAMIC);
  const glob = hasGlob(t);
  if (hasDynamic) return { value, dynamic: true, glob, text, ...(!bare && !glob ? { single: true } : {}) };
  // Most words have no brace and no tilde: their one field is their value.
  if (!t.text.includes('{') && !t.text.includes('~')) return { value, dynamic: false, glob, text, fields: value === '' && !t.tags.some((g) => g !== BARE) ? [] : [value] };
  const expanded = expandBraces(t);
  if (!expanded) return { value, dynamic: true, glob, text };
  const braced = expanded.length !== 1 || (expanded[0] as TaggedText).text !== t.text;
  const fields: string[] = [];
  for (const f of expanded) {
    const withHome = expandTilde(f, home);
    if (withHome === null) return { value, dynamic: braced, glob, text };
    const s = withHome.split(EMPTY_MARK).join('');
    // An unquoted expansion that comes out empty is removed, as bash removes it.
    if (s === '' && !f.tags.some((g) => g !== BARE)) continue;
    fields.push(s);
  }
  return { value, dynamic: braced, glob, text, fields };
}

function hasGlob({ text, tags }: TaggedText): boolean {
  let lastClose = -1;
  for (let j = text.length - 1; j >= 0 && lastClose < 0; j--) if (text[j] === ']' && tags[j] === BARE) lastClose = j;
  for (let i = 0; i < text.length; i++) {
    if (tags[i] !== BARE) continue;
    const ch = text[i];
    if (ch === '*' || ch === '?') return true;
    if (ch === '[' && lastClose >= i + 2) return true;
    if ((ch === '@' || ch === '!' || ch === '+') && text[i + 1] === '(' && tags[i + 1] === BARE) return true;
  }
  return false;
}

/**
 * Tilde expansion of one field, as a string (marks kept): `~` and `~/…` at the start, and after
 * `=` or `:` in a word that looks like an assignment. Null for `~user`, `~+`, `~-`, `~N` (or any
 * tilde without `home`): unknown.
 */
function expandTilde(t: TaggedText, home: string | undefined): string | null {
  const { text, tags } = t;
  const starts = [0];
  const assign = /^[A-Za-z_][A-Za-z0-9_]*=/.exec(text);
  if (assign && !tags.slice(0, assign[0].length).some((g) => g !== BARE)) {
    starts.push(assign[0].length);
    for (let i = assign[0].length; i < text.length; i++) if (text[i] === ':' && tags[i] === BARE) starts.push(i + 1);
  }
  let out = '';
  let from = 0;
  for (const p of starts) {
    if (text[p] !== '~' || tags[p] !== BARE) continue;
    let end = p + 1;
    while (end < text.length && !(tags[end] === BARE && (text[end] === '/' || (p > 0 && text[end] === ':')))) end++;
    if (tags.slice(p + 1, end).some((g) => g !== BARE)) continue; // a quoted tilde-prefix is literal
    if (end > p + 1 || home === undefined) return null;
    out += text.slice(from, p) + home;
    from = p + 1;
  }
  return out + text.slice(from);
}

/** Builds the tagged characters of one word, in runs of one tag. */
class Tagger {
  private readonly parts: string[] = [];
  private readonly runs: number[] = [];

  bare(raw: string): void {
    let from = 0;
    for (let i = 0; i < raw.length; i++) {
      const ch = raw[i];
      if (ch !== '\\' && ch !== '$' && ch !== '\0') continue;
      this.push(raw.slice(from, i), BARE);
      if (ch === '\\') {
        const next = raw[i + 1];
        i++;
        if (next !== undefined && next !== '\n') this.push(next, QUOTED);
      } else {
        // A bare `$` that the parser did not see as an expansion (bash would print it): unknown.
        this.push(PLACEHOLDER, DYNAMIC);
      }
      from = i + 1;
    }
    this.push(raw.slice(from), BARE);
  }

  quoted(s: string): void {
    if (s === '') return this.push(EMPTY_MARK, EMPTY_QUOTE);
    const nul = s.indexOf('\0');
    if (nul < 0) return this.push(s, QUOTED);
    this.push(s.slice(0, nul), QUOTED);
    this.push(PLACEHOLDER, DYNAMIC);
  }

  dynamic(quoted = false): void {
    this.push(PLACEHOLDER, quoted ? QUOTED_DYNAMIC : DYNAMIC);
  }

  /** `"…"` and `$"…"`: contents quoted, expansions dynamic. */
  doubleQuoted(n: Node): void {
    let any = false;
    const children = n.children;
    const last = children.length - 1;
    children.forEach((c, i) => {
      if (!c) return;
      if ((i === 0 || i === last) && !c.isNamed && (c.type === '"' || c.type === '$"')) return;
      any = true;
      if (c.type === 'string_content') this.quoted(unescapeDouble(c.text));
      // `"$@"`, `"${a[@]}"`, `"${!p@}"` expand to several words even quoted.
      else if (c.isNamed) this.dynamic(!/^\$\{?[!#]?@|\[@\]/.test(c.text));
      else this.quoted(c.text);
    });
    if (!any) this.push(EMPTY_MARK, EMPTY_QUOTE);
  }

  result(): TaggedText {
    const text = this.parts.join('');
    const tags = new Uint8Array(text.length);
    let at = 0;
    this.parts.forEach((p, i) => {
      tags.fill(this.runs[i] as number, at, at + p.length);
      at += p.length;
    });
    return { text, tags };
  }

  private push(s: string, tag: number): void {
    if (s === '') return;
    this.parts.push(s);
    this.runs.push(tag);
  }
}

function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c));
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** Decodes the body of `$'…'` as bash does (a NUL, from `\0`, `\x00`, `\u0000`, `\c@`…, is kept: the caller cuts there). */
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const n = body[i + 1];
    if (n === undefined) {
      out += '\\';
      break;
    }
    const simple = SIMPLE_ESCAPES[n];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    const take = (re: RegExp, max: number, from: number): string => {
      let s = '';
      while (s.length < max && from + s.length < body.length && re.test(body[from + s.length] as string)) s += body[from + s.length];
      return s;
    };
    if (n === 'x') {
      const h = take(/[0-9a-fA-F]/, 2, i + 2);
      if (h) out += String.fromCharCode(parseInt(h, 16));
      else out += '\\x';
      i += 1 + h.length;
    } else if (n === 'u' || n === 'U') {
      const h = take(/[0-9a-fA-F]/, n === 'u' ? 4 : 8, i + 2);
      if (h) out += String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff));
      else out += `\\${n}`;
      i += 1 + h.length;
    } else if (/[0-7]/.test(n)) {
      const o = take(/[0-7]/, 3, i + 1);
      out += String.fromCharCode(parseInt(o, 8) & 0xff);
      i += o.length;
    } else if (n === 'c' && body[i + 2] !== undefined) {
      out += String.fromCharCode((body.charCodeAt(i + 2) & 0x1f) >>> 0);
      i += 2;
    } else {
      out += `\\${n}`;
      i++;
    }
  }
  return out;
}
