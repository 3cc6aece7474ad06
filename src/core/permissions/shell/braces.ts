/**
 * Bash brace expansion over a word whose characters are tagged as quoted or not. Only unquoted
 * `{`, `,`, `}` and `..` are active, as in bash: `{a,'b,c'}` gives `a` and `b,c`; `'{a,b}'` stays
 * one word. Sequences `{1..3}`, `{a..e..2}`, `{01..10}`; nesting `{a,{b,c}}`; an invalid
 * expression (`{a}`, `{}`, `{1..a}`) stays literal while braces inside it may still expand
 * (`{a{b,c}}` gives `{ab}` and `{ac}`); `${` never starts one. Iterative, and bounded: more than
 * MAX_FIELDS words (or MAX_CHARS characters) gives null, which callers treat as unknown.
 */

/** Per-character tags. */
export const BARE = 0;
export const QUOTED = 1;
/** A part only known at run time (its character is a placeholder). */
export const DYNAMIC = 2;
/** Such a part inside double quotes (`"$x"`, `"$(cmd)"`): it cannot split into more words. */
export const QUOTED_DYNAMIC = 4;
/**
 * Marks an empty quoted string (`""`): its placeholder character is dropped from the final word,
 * but it keeps the word from vanishing (`""{a,}` gives `a` and an empty word, `{a,}` only `a`).
 */
export const EMPTY_QUOTE = 3;

/** A word as characters plus one tag per character. */
export interface TaggedText {
  text: string;
  tags: Uint8Array;
}

export const MAX_FIELDS = 256;
const MAX_CHARS = 256 * 1024;
const MAX_STEPS = 16 * 1024;

/** The words bash makes of `w` by brace expansion, in bash's order; null past the bounds. */
export function expandBraces(w: TaggedText): TaggedText[] | null {
  if (atLeastFields(w) > MAX_FIELDS) return null;
  const out: TaggedText[] = [];
  const work: TaggedText[] = [w];
  let chars = 0;
  let steps = 0;
  while (work.length > 0) {
    if (++steps > MAX_STEPS) return null;
    const t = work.pop() as TaggedText;
    const found = firstExpansion(t);
    if (!found) {
      out.push(t);
      chars += t.text.length;
      if (out.length > MAX_FIELDS || chars > MAX_CHARS) return null;
      continue;
    }
    const pre = slice(t, 0, found.start);
    const post = slice(t, found.end + 1, t.text.length);
    if (out.length + work.length + found.alternatives.length > MAX_FIELDS) return null;
    if (chars + (pre.text.length + post.text.length) * found.alternatives.length > MAX_CHARS) return null;
    for (let i = found.alternatives.length - 1; i >= 0; i--) work.push(concat(pre, found.alternatives[i] as TaggedText, post));
  }
  return out;
}

/**
 * A lower bound of the number of words, found in one pass: the product, over the outermost
 * brace groups with a comma at their own level, of their number of alternatives. (`{a,b}` twenty
 * times is refused at once instead of after a thousand steps.)
 */
function atLeastFields({ text, tags }: TaggedText): number {
  let product = 1;
  let depth = 0;
  let commas = 0;
  for (let i = 0; i < text.length; i++) {
    if (tags[i] !== BARE) continue;
    const ch = text[i];
    if (ch === '{' && !(text[i - 1] === '$' && tags[i - 1] === BARE)) {
      if (depth === 0) commas = 0;
      depth++;
    } else if (ch === '}' && depth > 0) {
      depth--;
      if (depth === 0 && commas > 0) product = Math.min(product * (commas + 1), Number.MAX_SAFE_INTEGER);
    } else if (ch === ',' && depth === 1) commas++;
  }
  return product;
}

interface Found {
  start: number;
  end: number;
  alternatives: TaggedText[];
}

/** The first `{` (left to right) that opens a valid comma list or sequence. */
function firstExpansion(t: TaggedText): Found | null {
  const { text, tags } = t;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '{' || tags[i] !== BARE) continue;
    if (i > 0 && text[i - 1] === '$' && tags[i - 1] === BARE) continue;
    let depth = 0;
    let end = -1;
    const commas: number[] = [];
    for (let j = i + 1; j < text.length; j++) {
      if (tags[j] !== BARE) continue;
      const ch = text[j];
      if (ch === '{' && !(text[j - 1] === '$' && tags[j - 1] === BARE)) depth++;
      else if (ch === '}') {
        if (depth === 0) {
          end = j;
          break;
        }
        depth--;
      } else if (ch === ',' && depth === 0) commas.push(j);
    }
    if (end < 0) continue;
    if (commas.length > 0) {
      const alternatives: TaggedText[] = [];
      let from = i + 1;
      for (const c of [...commas, end]) {
        alternatives.push(slice(t, from, c));
        from = c + 1;
      }
      return { start: i, end, alternatives };
    }
    const seq = sequence(t, i + 1, end);
    if (seq === 'too-many') return { start: i, end, alternatives: tooMany() };
    if (seq) return { start: i, end, alternatives: seq };
  }
  return null;
}

/** Signals the bound through expandBraces' own check (more alternatives than MAX_FIELDS). */
function tooMany(): TaggedText[] {
  return Array.from({ length: MAX_FIELDS + 1 }, () => bare(''));
}

const NUM_SEQ = /^([+-]?\d+)\.\.([+-]?\d+)(?:\.\.([+-]?\d+))?$/;
const CHAR_SEQ = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.([+-]?\d+))?$/;

function sequence(t: TaggedText, from: number, to: number): TaggedText[] | 'too-many' | null {
  for (let k = from; k < to; k++) if (t.tags[k] !== BARE) return null;
  const inner = t.text.slice(from, to);
  const num = NUM_SEQ.exec(inner);
  const chr = num ? null : CHAR_SEQ.exec(inner);
  const m = num ?? chr;
  if (!m) return null;
  const step = Math.abs(Number(m[3] ?? '1')) || 1;
  let a: number;
  let b: number;
  if (num) {
    a = Number(m[1]);
    b = Number(m[2]);
  } else {
    a = (m[1] as string).charCodeAt(0);
    b = (m[2] as string).charCodeAt(0);
  }
  if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) return null;
  if (Math.floor(Math.abs(b - a) / step) + 1 > MAX_FIELDS) return 'too-many';
  const pad = num && (/^[+-]?0\d/.test(m[1] as string) || /^[+-]?0\d/.test(m[2] as string)) ? Math.max((m[1] as string).length, (m[2] as string).length) : 0;
  const out: TaggedText[] = [];
  const dir = b >= a ? 1 : -1;
  for (let v = a; dir > 0 ? v <= b : v >= b; v += dir * step) {
    if (!num) out.push(bare(String.fromCharCode(v)));
    else {
      const s = String(Math.abs(v)).padStart(pad - (v < 0 ? 1 : 0), '0');
      out.push(bare(v < 0 ? `-${s}` : s));
    }
  }
  return out;
}

function bare(text: string): TaggedText {
  return { text, tags: new Uint8Array(text.length) };
}

function slice(t: TaggedText, from: number, to: number): TaggedText {
  return { text: t.text.slice(from, to), tags: t.tags.slice(from, to) };
}

function concat(...parts: TaggedText[]): TaggedText {
  const len = parts.reduce((n, p) => n + p.text.length, 0);
  const tags = new Uint8Array(len);
  let at = 0;
  for (const p of parts) {
    tags.set(p.tags, at);
    at += p.text.length;
  }
  return { text: parts.map((p) => p.text).join(''), tags };
}
