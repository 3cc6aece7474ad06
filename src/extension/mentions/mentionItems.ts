import { MENTION_KEYWORDS, pathMentionText } from '../../shared/domain/mentions';
import type { MentionItem } from '../../shared/protocol/toWebview';

/** What the `@` list is made from (the workbench gives these; tests give lists). */
export interface MentionItemSources {
  files(query: string, max: number): Promise<string[]>;
  folders?(query: string, max: number): Promise<string[]>;
  /** MCP resources as `server:uri`. */
  resources?(query: string, max: number): Promise<string[]>;
  /** The file of the active editor, workspace-relative (for "problems in the open file"). */
  activeFile?(): string | undefined;
}

const KEYWORD_DETAIL: Record<(typeof MENTION_KEYWORDS)[number], string> = {
  problems: 'errors and warnings of the workspace',
  terminal: "the active terminal's selection, else its last command and output",
  git: "the working tree's changes (git status and diff)",
};

/**
 * The `@` list for `query`, best first: Keel's words (problems, problems of the open file,
 * terminal, git, a web page), then MCP resources, folders and files. A word is offered while
 * the query is a start of it, a path when it contains the query. At most `max` items. Never rejects:
 * a source that fails gives nothing.
 */
export async function mentionItems(query: string, sources: MentionItemSources, max: number): Promise<MentionItem[]> {
  const q = query.toLowerCase();
  const words: MentionItem[] = [];
  for (const word of MENTION_KEYWORDS) {
    if (!word.startsWith(q)) continue;
    words.push({ kind: word, insert: word, label: word, detail: KEYWORD_DETAIL[word] });
    const open = word === 'problems' ? sources.activeFile?.() : undefined;
    if (open) words.push(openFileProblems(open));
  }
  if ('url'.startsWith(q) || 'https://'.startsWith(q)) {
    words.push({ kind: 'url', insert: 'https://', label: 'https://…', detail: 'a web page, fetched as WebFetch would (type its address)', partial: true });
  }
  if (q.startsWith('problems:')) {
    const open = sources.activeFile?.();
    if (open && `problems:${open}`.toLowerCase().startsWith(q)) words.push(openFileProblems(open));
  }
  const safe = <T>(p: Promise<T[]> | undefined): Promise<T[]> => (p ?? Promise.resolve([])).catch(() => []);
  const room = Math.max(0, max - words.length);
  const [resources, folders, files] = await Promise.all([safe(sources.resources?.(query, room)), safe(sources.folders?.(query, room)), safe(sources.files(query, room))]);
  const items: MentionItem[] = [
    ...words,
    ...resources.map((r): MentionItem => ({ kind: 'resource', insert: r, label: r, detail: 'MCP resource' })),
    ...folders.map((f): MentionItem => {
      const path = f.endsWith('/') ? f : `${f}/`;
      return { kind: 'folder', insert: pathMentionText(path).slice(1), label: path };
    }),
    ...files.map((f): MentionItem => ({ kind: 'file', insert: pathMentionText(f).slice(1), label: f })),
  ];
  return items.slice(0, max);
}

function openFileProblems(open: string): MentionItem {
  return { kind: 'problems', insert: `problems:${open}`, label: `problems in ${open}`, detail: 'errors and warnings of the open file' };
}
