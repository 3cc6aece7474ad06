import { promises as fs, type Dirent } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { LineRange } from '../../shared/domain/mentions';
import { count, type MentionLimits } from './limits';

/**
 * A mentioned path, read as the person's own attachment: a file (whole, or the line range of
 * `#L10-20`) or a folder (a bounded listing). Only what is inside the workspace, physically: a
 * path that leaves it, or a link that leads out of it (a cloned repository may hold one pointing
 * at ~/.ssh), is refused, never read.
 */

export type PathResolution = { ok: true; abs: string; physical: string; isFolder: boolean } | { ok: false; why: string };

/** Where `path` (workspace-relative, as mentioned) is, and whether it may be read. Never rejects. */
export async function locate(workspace: string, path: string): Promise<PathResolution> {
  const root = resolve(workspace);
  const abs = resolve(root, path);
  if (!inside(root, abs)) return { ok: false, why: 'it is outside the workspace' };
  try {
    const physicalRoot = await fs.realpath(root);
    const physical = await fs.realpath(abs);
    if (!inside(physicalRoot, physical)) return { ok: false, why: 'it is a link to a place outside the workspace' };
    const st = await fs.stat(physical);
    if (!st.isFile() && !st.isDirectory()) return { ok: false, why: 'it is not a file or a folder' };
    return { ok: true, abs, physical, isFolder: st.isDirectory() };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, why: code === 'ENOENT' || code === 'ENOTDIR' ? 'there is no such file or folder in the workspace' : `it cannot be read (${code ?? String(err)})` };
  }
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export interface FileAttachment {
  content: string;
  /** What was cut, or undefined when the model gets all it asked for. */
  note?: string;
  failed?: boolean;
}

/**
 * The file's lines (all, or `range`), numbered as Read numbers them, within the limits; the note
 * says which lines came and how to read the rest. A binary file is refused. Never rejects.
 */
export async function readFileMention(physical: string, range: LineRange | undefined, limits: MentionLimits): Promise<FileAttachment> {
  let buf: Buffer;
  let size: number;
  try {
    const handle = await fs.open(physical, 'r');
    try {
      size = (await handle.stat()).size;
      buf = Buffer.alloc(Math.min(size, limits.fileBytes));
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      buf = buf.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (err) {
    return { content: '', note: `it could not be read: ${(err as Error).message}`, failed: true };
  }
  if (buf.subarray(0, 8192).includes(0)) return { content: '', note: 'it is a binary file; only text files can be attached', failed: true };
  if (size === 0) return { content: '(empty file)' };
  const partial = size > buf.length;
  const lines = buf.toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  // A file read only in part ends in a cut line: it is left out.
  if (partial) lines.pop();
  const known = lines.length;
  const first = range ? range.start : 1;
  const wanted = range ? range.end : known;
  if (first > known) return { content: '', note: `the file has ${count(known)} lines; line ${count(first)} is past its end`, failed: true };
  let last = Math.min(wanted, known, first + limits.fileLines - 1);
  const out: string[] = [];
  let chars = 0;
  for (let n = first; n <= last; n++) {
    const line = `${String(n).padStart(6)}\t${(lines[n - 1] ?? '').replace(/\r$/, '')}`;
    if (chars + line.length + 1 > limits.fileChars && out.length > 0) {
      last = n - 1;
      break;
    }
    out.push(line);
    chars += line.length + 1;
  }
  const total = partial ? `more than ${count(known)}` : count(known);
  const cut = last < Math.min(wanted, known) || (!range && partial);
  const asked = range && wanted > known ? `; the file ends at line ${count(known)}` : '';
  const most = `mentions bring at most ${count(limits.fileLines)} lines, ${count(limits.fileChars)} characters`;
  const shownLines = `lines ${count(first)}-${count(last)}`;
  const note = cut ? `${shownLines} of ${total}: the rest was cut (${most}); Read it with offset ${last + 1} for more` : asked ? `${shownLines}${asked}` : undefined;
  return { content: out.join('\n'), ...(note ? { note } : {}) };
}

/** Folders a listing never opens: what tools and package managers keep, not the project's files. */
const SKIPPED = new Set(['.git', 'node_modules', '.hg', '.svn', '__pycache__', '.venv', '.tox', '.cache']);

/**
 * The folder's entries, breadth first, up to `folderDepth` levels and `folderEntries` entries;
 * folders end with `/`, links are named but never followed. The note says what was left out.
 */
export async function listFolderMention(physical: string, limits: MentionLimits): Promise<FileAttachment> {
  const out: string[] = [];
  let more = 0;
  let skipped = 0;
  let deeper = 0;
  let queue: { dir: string; rel: string; depth: number }[] = [{ dir: physical, rel: '', depth: 1 }];
  while (queue.length > 0) {
    const next: typeof queue = [];
    for (const { dir, rel, depth } of queue) {
      let entries: Dirent[];
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch {
        out.push(`${rel}(not readable)`);
        continue;
      }
      entries.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || a.name.localeCompare(b.name));
      for (const e of entries) {
        const name = `${rel}${e.name}`;
        if (out.length >= limits.folderEntries) {
          more += 1;
          continue;
        }
        if (e.isSymbolicLink()) out.push(`${name} (link)`);
        else if (e.isDirectory()) {
          out.push(`${name}/`);
          if (SKIPPED.has(e.name)) skipped += 1;
          else if (depth < limits.folderDepth) next.push({ dir: join(dir, e.name), rel: `${name}${sep}`, depth: depth + 1 });
          else deeper += 1;
        } else out.push(name);
      }
    }
    queue = next;
  }
  const notes: string[] = [];
  if (more > 0) notes.push(`${count(more)} more entries were cut (a listing shows at most ${count(limits.folderEntries)})`);
  if (skipped > 0) notes.push(`${count(skipped)} folder(s) such as .git or node_modules are named, not listed`);
  if (deeper > 0) notes.push(`${count(deeper)} folder(s) ${limits.folderDepth} levels down are named, not listed`);
  if (notes.length > 0) notes.push('use Glob to see more');
  return { content: out.length > 0 ? out.join('\n') : '(empty folder)', ...(notes.length > 0 ? { note: notes.join('; ') } : {}) };
}
