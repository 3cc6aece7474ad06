/**
 * `@` mentions in what a person types: which words of a message are mentions, what each one
 * names, and how the composer writes one. One definition for both sides: the webview draws a
 * chip for each mention it finds, the host resolves the very same ones into attachments the
 * model reads (src/core/mentions). Pure.
 *
 * A mention starts with `@` at the start of the text or after white space:
 * - `@problems` (the workspace's diagnostics) or `@problems:src/a.ts` (one file's);
 * - `@terminal` (the active terminal's selection, else its last command and output);
 * - `@git` (the working tree's changes);
 * - `@https://…` / `@http://…` (a web page, fetched as WebFetch would);
 * - `@server:uri` (a resource of an MCP server; the host's MCP part resolves it);
 * - a workspace path with a `/` or a `.` in it: `@src/a.ts`, `@src/`, `@./Makefile`, with an
 *   optional line range `#L10-20` / `#L10`; `@"a b/c.ts"` when the path has spaces.
 * A word like `@bob` (no `/`, no `.`) is not a mention, nor is `a@b.c`.
 */

/** What a mention names. `file` may turn out to be a folder: only the host can tell. */
export type Mention =
  | { kind: 'file'; path: string; range?: LineRange }
  | { kind: 'problems'; path?: string }
  | { kind: 'terminal' }
  | { kind: 'git' }
  | { kind: 'url'; url: string }
  | { kind: 'resource'; server: string; uri: string };

export interface LineRange {
  /** 1-based, inclusive. */
  start: number;
  /** 1-based, inclusive; ≥ start. */
  end: number;
}

/** A mention found in a text, with where it is (`text.slice(start, end)` is `raw`). */
export interface MentionToken {
  mention: Mention;
  start: number;
  end: number;
  raw: string;
}

/** The words that name something other than a path. */
export const MENTION_KEYWORDS = ['problems', 'terminal', 'git'] as const;

/** At most this many mentions of one message are resolved; the rest are said to be left out. */
export const MAX_MENTIONS = 20;

const MENTION_START = /(^|\s)@/g;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}'"]+$/;
const RANGE = /#L(\d{1,7})(?:-L?(\d{1,7}))?$/;

/**
 * Every mention of `text`, in order. Words that only look like one (`@bob`) are skipped; a word
 * ending a sentence (`@src/a.ts.`) loses its trailing punctuation.
 */
export function findMentions(text: string): MentionToken[] {
  const out: MentionToken[] = [];
  for (const m of text.matchAll(MENTION_START)) {
    const at = (m.index ?? 0) + (m[1]?.length ?? 0);
    const token = tokenAt(text, at);
    if (token) out.push(token);
  }
  return out;
}

function tokenAt(text: string, at: number): MentionToken | undefined {
  const rest = text.slice(at + 1);
  if (rest.startsWith('"')) {
    const close = rest.indexOf('"', 1);
    if (close <= 1) return undefined;
    const path = rest.slice(1, close);
    if (/[\n\r]/.test(path)) return undefined;
    const after = /^#L\d{1,7}(?:-L?\d{1,7})?/.exec(rest.slice(close + 1))?.[0] ?? '';
    const raw = `@${rest.slice(0, close + 1)}${after}`;
    const range = after ? parseRange(after) : undefined;
    if (after && !range) return undefined;
    return { mention: { kind: 'file', path, ...(range ? { range } : {}) }, start: at, end: at + raw.length, raw };
  }
  let word = /^\S*/.exec(rest)?.[0] ?? '';
  // `@src/a.ts.` at the end of a sentence: the dot is the sentence's. A URL keeps its own slash.
  word = word.replace(TRAILING_PUNCTUATION, '');
  if (!word) return undefined;
  const mention = mentionOf(word);
  if (!mention) return undefined;
  const raw = `@${word}`;
  return { mention, start: at, end: at + raw.length, raw };
}

/** What the word after `@` names, or undefined when it is not a mention. */
export function mentionOf(word: string): Mention | undefined {
  if (word === 'problems' || word === 'terminal' || word === 'git') return word === 'problems' ? { kind: 'problems' } : { kind: word };
  if (/^https?:\/\/\S+$/i.test(word)) return { kind: 'url', url: word };
  if (word.startsWith('problems:')) {
    const path = word.slice('problems:'.length);
    return path ? { kind: 'problems', path } : undefined;
  }
  const resource = /^([A-Za-z0-9_-]+):(\S+)$/.exec(word);
  if (resource && !resource[2]!.startsWith('//')) return { kind: 'resource', server: resource[1]!, uri: resource[2]! };
  const rangeText = RANGE.exec(word)?.[0];
  const path = rangeText ? word.slice(0, -rangeText.length) : word;
  if (!/[/.]/.test(path) || /^[.]+$/.test(path) || path.includes('#')) return undefined;
  const range = rangeText ? parseRange(rangeText) : undefined;
  if (rangeText && !range) return undefined;
  return { kind: 'file', path, ...(range ? { range } : {}) };
}

function parseRange(text: string): LineRange | undefined {
  const m = RANGE.exec(text);
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : Number(m[2]);
  return start >= 1 && end >= start ? { start, end } : undefined;
}

/** How a mention reads on its chip: `src/a.ts:10-20`, `problems`, `problems in src/a.ts`, the URL. */
export function mentionLabel(m: Mention): string {
  switch (m.kind) {
    case 'file':
      return m.range ? `${m.path}:${m.range.start === m.range.end ? m.range.start : `${m.range.start}-${m.range.end}`}` : m.path;
    case 'problems':
      return m.path ? `problems in ${m.path}` : 'problems';
    case 'terminal':
    case 'git':
      return m.kind;
    case 'url':
      return m.url;
    case 'resource':
      return `${m.server}:${m.uri}`;
  }
}

/** How the composer writes a mention of `path` (quoted when it has spaces; `./` when it has no `/` or `.`). */
export function pathMentionText(path: string): string {
  if (/\s/.test(path)) return `@"${path.replace(/"/g, '')}"`;
  return /[/.]/.test(path) ? `@${path}` : `@./${path}`;
}

/** `text` without the mention `token` (and one space next to it), e.g. when its chip is removed. */
export function removeMention(text: string, token: Pick<MentionToken, 'start' | 'end'>): string {
  let { start, end } = token;
  if (text[end] === ' ') end += 1;
  else if (start > 0 && text[start - 1] === ' ') start -= 1;
  return text.slice(0, start) + text.slice(end);
}

/** Two mentions name the same thing (a message mentioning a file twice gets it once). */
export function mentionKey(m: Mention): string {
  return `${m.kind}:${mentionLabel(m)}`;
}
