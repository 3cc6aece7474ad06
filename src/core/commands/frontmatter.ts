import { parseDocument } from 'yaml';

/**
 * The YAML frontmatter of a Claude Code command or skill file (`---` lines around it at the very
 * start), as people write it. Claude Code reads its keys leniently: `argument-hint: [pr] [priority]`
 * or `allowed-tools: Bash(git commit: *)` are not valid YAML, yet they are in its own examples.
 * So each key is read from the YAML when the block parses, and from its line as written when it
 * does not (or when YAML turned a hint like `[message]` into a list). Pure; never throws: what
 * cannot be read is in `problems` and the key is left out.
 */
export interface Frontmatter {
  /** Each key's value: a string, a list of strings, a boolean, or a number. */
  fields: Record<string, FieldValue>;
  /** The text after the frontmatter (the whole text when there is none). */
  body: string;
  problems: string[];
}

export type FieldValue = string | string[] | boolean | number;

/** The most frontmatter Keel reads (a command's is a few lines). */
const MAX_FRONTMATTER_CHARS = 16 * 1024;

export function parseFrontmatter(text: string): Frontmatter {
  const src = text.replace(/^\uFEFF/, '');
  const open = /^---[ \t]*\r?\n/.exec(src);
  if (!open) return { fields: {}, body: src, problems: [] };
  const rest = src.slice(open[0].length);
  const close = /^---[ \t]*(?:\r?\n|$)/m.exec(rest);
  if (!close) return { fields: {}, body: src, problems: ['the frontmatter has no closing "---" line; it was read as part of the text'] };
  const block = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length);
  if (block.length > MAX_FRONTMATTER_CHARS) return { fields: {}, body, problems: [`the frontmatter is longer than ${MAX_FRONTMATTER_CHARS} characters; it was ignored`] };
  const problems: string[] = [];
  const raw = rawFields(block);
  const yaml = yamlFields(block);
  const fields: Record<string, FieldValue> = {};
  for (const key of new Set([...Object.keys(yaml ?? {}), ...Object.keys(raw)])) {
    const fromYaml = yaml?.[key];
    const fromLine = raw[key];
    // A hint is text as written: YAML reads `[message]` as a list, and `[a] [b]` not at all.
    const value = key === 'argument-hint' && fromLine !== undefined ? fromLine : (fromYaml ?? fromLine);
    if (value !== undefined) fields[key] = value;
  }
  if (yaml === null && Object.keys(raw).length === 0 && block.trim()) problems.push('the frontmatter could not be read; it was ignored');
  return { fields, body, problems };
}

/** The block as YAML, keeping values of the shapes frontmatter uses; null when it does not parse as a mapping. */
function yamlFields(block: string): Record<string, FieldValue> | null {
  let value: unknown;
  try {
    const doc = parseDocument(block, { schema: 'core', uniqueKeys: false });
    if (doc.errors.length > 0) return null;
    value = doc.toJS({ maxAliasCount: 0 });
  } catch {
    return null;
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return null;
  const out: Record<string, FieldValue> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') out[k] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) out[k] = v.map(String);
  }
  return out;
}

/**
 * Top-level `key: value` lines as written (quotes around the whole value removed), and `- item`
 * lines under a key without a value as its list.
 */
function rawFields(block: string): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  let listKey: string | null = null;
  for (const line of block.split(/\r?\n/)) {
    const item = /^\s+-\s+(.*)$/.exec(line) ?? /^-\s+(.*)$/.exec(line);
    if (item && listKey !== null) {
      const list = out[listKey];
      out[listKey] = [...(Array.isArray(list) ? list : []), unquote(item[1]!.trim())];
      continue;
    }
    const m = /^([A-Za-z][\w-]*)\s*:(?:\s+(.*))?$/.exec(line);
    if (!m) {
      if (line.trim() && !line.trimStart().startsWith('#')) listKey = null;
      continue;
    }
    const key = m[1]!;
    const value = (m[2] ?? '').replace(/\s+#.*$/, '').trim();
    if (value === '') {
      listKey = key;
      continue;
    }
    listKey = null;
    out[key] = value === 'true' ? true : value === 'false' ? false : unquote(value);
  }
  return out;
}

function unquote(v: string): string {
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))) return v.slice(1, -1);
  return v;
}

/** A field as one line of text (a list is joined with ", "), or undefined when absent or not text. */
export function textField(fields: Record<string, FieldValue>, key: string): string | undefined {
  const v = fields[key];
  if (typeof v === 'string') return v.trim() || undefined;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return v.join(', ').trim() || undefined;
  return undefined;
}

/**
 * A tool list (`allowed-tools`) as written: a YAML list, or one line of rules separated by commas
 * or spaces outside parentheses (`Bash(git add:*), Bash(git status:*) Read`).
 */
export function toolListField(fields: Record<string, FieldValue>, key: string): string[] | undefined {
  const v = fields[key];
  if (v === undefined || typeof v === 'boolean' || typeof v === 'number') return undefined;
  const items = Array.isArray(v) ? v : splitRules(v);
  return items.map((s) => s.trim()).filter(Boolean);
}

function splitRules(line: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of line) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      if (cur.trim()) out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
