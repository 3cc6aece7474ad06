/**
 * One memory is one Markdown file in `.keel/memory/`: a small front matter, then the text.
 *
 * ```
 * ---
 * title: Unit tests run with vitest
 * created: 2026-01-02T10:00:00.000Z
 * source: 3f2a…            (the task that taught it; absent for one a person wrote)
 * tags: [testing, vitest]
 * ---
 * `npm run test:unit` runs them; the e2e tests need `npm run package` first.
 * ```
 *
 * People edit these files by hand, so reading is lenient: a file without front matter is a memory
 * whose title is its first heading (or its file name); unknown keys are kept out of the way.
 */
export interface MemoryFrontMatter {
  title: string;
  /** ISO time; empty when the file does not say. */
  created: string;
  /** The id of the task that taught it. */
  source?: string;
  tags: string[];
}

export interface Memory extends MemoryFrontMatter {
  /** The file's name in `.keel/memory/` (e.g. `unit-tests-run-with-vitest.md`). */
  file: string;
  body: string;
}

/** The file names a memory may have: no folders, no hidden files, `.md`. */
export const MEMORY_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,150}\.md$/;

export function isMemoryFileName(name: string): boolean {
  return MEMORY_FILE_NAME.test(name) && !name.includes('..');
}

/** Reads a memory file's text. Never throws: whatever the text, a memory comes out. */
export function parseMemory(file: string, text: string): Memory {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  const fm = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(normalized);
  const fields = new Map<string, string>();
  let body = normalized;
  if (fm) {
    body = normalized.slice(fm[0].length);
    for (const line of fm[1]!.split('\n')) {
      const m = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(line);
      if (m) fields.set(m[1]!.toLowerCase(), unquote(m[2]!.trim()));
    }
  }
  body = body.trim();
  const heading = /^#{1,6}\s+(.+)$/m.exec(body)?.[1]?.trim();
  const title = fields.get('title') || heading || file.replace(/\.md$/i, '').replace(/[-_]+/g, ' ');
  const tags = parseTags(fields.get('tags') ?? '');
  const source = fields.get('source');
  return { file, title: oneLine(title), created: fields.get('created') ?? '', ...(source ? { source } : {}), tags, body };
}

/** The text of a memory file. `parseMemory(file, serializeMemory(m))` gives `m` back (title and tags on one line each). */
export function serializeMemory(m: MemoryFrontMatter & { body: string }): string {
  const lines = ['---', `title: ${quoteIfNeeded(oneLine(m.title))}`, `created: ${m.created}`];
  if (m.source) lines.push(`source: ${m.source}`);
  lines.push(`tags: [${m.tags.map((t) => oneLine(t).replace(/[[\],]/g, ' ').trim()).filter(Boolean).join(', ')}]`, '---', m.body.trim(), '');
  return lines.join('\n');
}

/** A file name for a new memory with this title: lowercase words joined by dashes, unique against `taken`. */
export function memoryFileNameFor(title: string, taken: ReadonlySet<string>): string {
  const slug =
    title
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60)
      .replace(/-+$/g, '') || 'memory';
  for (let n = 1; ; n++) {
    const name = n === 1 ? `${slug}.md` : `${slug}-${n}.md`;
    if (!taken.has(name)) return name;
  }
}

function parseTags(raw: string): string[] {
  const inner = raw.replace(/^\[|\]$/g, '');
  return inner
    .split(',')
    .map((t) => unquote(t.trim()))
    .filter(Boolean);
}

function unquote(s: string): string {
  if (s.length >= 2 && s.startsWith('"') && s.endsWith('"')) {
    try {
      return String(JSON.parse(s));
    } catch {
      return s.slice(1, -1);
    }
  }
  if (s.length >= 2 && s.startsWith("'") && s.endsWith("'")) return s.slice(1, -1);
  return s;
}

function quoteIfNeeded(s: string): string {
  return /^["'[{]|:\s|#/.test(s) ? JSON.stringify(s) : s;
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
