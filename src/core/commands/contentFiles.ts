import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * Reading the Markdown files of command and skill folders. A workspace's folders are repository
 * content: they are read without following links — a link anywhere between the workspace and the
 * file, or a file with a second name, is skipped and said — so a cloned repository cannot make
 * Keel read (and put into a prompt) a file outside it. The person's own folders (`~/.claude/…`)
 * are theirs: links there are followed (dotfiles are often linked). Never throws.
 */
export interface ContentRoot {
  /** The folder to read (e.g. `<workspace>/.claude/commands`). */
  dir: string;
  /** Where the no-link rule starts (the workspace), or null to follow links (the person's folders). */
  linkFreeFrom: string | null;
}

export interface FoundFile {
  path: string;
  /** The path below the root's folder, with `/` separators (`frontend/review.md`). */
  rel: string;
}

export type ReadOutcome = { ok: true; text: string } | { ok: false; problem: string };

/** The largest command or skill file Keel reads. */
export const MAX_CONTENT_FILE_BYTES = 256 * 1024;
const MAX_DEPTH = 6;
const MAX_FILES = 2000;

/** True when `dir` exists as a folder reachable under the root's rule (no link on the way for a workspace). */
export function folderUsable(root: ContentRoot, dir: string, problems: string[]): boolean {
  if (root.linkFreeFrom === null) {
    try {
      return statSync(dir).isDirectory();
    } catch {
      return false;
    }
  }
  const rel = relative(root.linkFreeFrom, dir);
  let at = root.linkFreeFrom;
  for (const part of rel.split(sep).filter(Boolean)) {
    at = join(at, part);
    let st;
    try {
      st = lstatSync(at);
    } catch {
      return false;
    }
    if (st.isSymbolicLink()) {
      problems.push(`${display(root, at)} is a link; Keel does not follow links in a workspace's command and skill folders`);
      return false;
    }
    if (!st.isDirectory()) return false;
  }
  return true;
}

/** Every `*.md` file under the root's folder (sub-folders too, up to a depth), sorted by path. */
export function markdownFiles(root: ContentRoot, problems: string[]): FoundFile[] {
  if (!folderUsable(root, root.dir, problems)) return [];
  const out: FoundFile[] = [];
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (out.length >= MAX_FILES || e.name.startsWith('.')) continue;
      const p = join(dir, e.name);
      const linked = e.isSymbolicLink();
      if (linked && root.linkFreeFrom !== null) {
        problems.push(`${display(root, p)} is a link; Keel does not follow links in a workspace's command and skill folders`);
        continue;
      }
      const isDir = linked ? isDirectory(p) : e.isDirectory();
      if (isDir) {
        if (depth < MAX_DEPTH) walk(p, depth + 1);
        continue;
      }
      if (e.name.toLowerCase().endsWith('.md')) out.push({ path: p, rel: relative(root.dir, p).split(sep).join('/') });
    }
  };
  walk(root.dir, 0);
  return out;
}

/** The folders right under the root's folder (a skill each), sorted; links skipped in a workspace. */
export function subfolders(root: ContentRoot, problems: string[]): string[] {
  if (!folderUsable(root, root.dir, problems)) return [];
  let entries;
  try {
    entries = readdirSync(root.dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name.startsWith('.')) continue;
    const p = join(root.dir, e.name);
    if (e.isSymbolicLink()) {
      if (root.linkFreeFrom !== null) problems.push(`${display(root, p)} is a link; Keel does not follow links in a workspace's command and skill folders`);
      else if (isDirectory(p)) out.push(p);
      continue;
    }
    if (e.isDirectory()) out.push(p);
  }
  return out.slice(0, MAX_FILES);
}

/**
 * A file's text: a regular file of at most MAX_CONTENT_FILE_BYTES, valid as text. Under a
 * workspace root it is opened without following a link (`O_NOFOLLOW`) and refused when it has a
 * second name (a hard link).
 */
export function readContentFile(root: ContentRoot, path: string): ReadOutcome {
  const noFollow = root.linkFreeFrom !== null;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (noFollow ? constants.O_NOFOLLOW : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { ok: false, problem: `${display(root, path)} is a link; Keel does not follow links in a workspace's command and skill folders` };
    return { ok: false, problem: `${display(root, path)} cannot be read (${code ?? (err as Error).message})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, problem: `${display(root, path)} is not a file` };
    if (noFollow && st.nlink > 1) return { ok: false, problem: `${display(root, path)} has a second name (a hard link); Keel reads a workspace's commands and skills only as plain files` };
    if (st.size > MAX_CONTENT_FILE_BYTES) return { ok: false, problem: `${display(root, path)} is ${st.size} bytes, more than the ${MAX_CONTENT_FILE_BYTES} Keel reads` };
    const buf = Buffer.alloc(st.size);
    let read = 0;
    while (read < st.size) {
      const n = readSync(fd, buf, read, st.size - read, read);
      if (n === 0) break;
      read += n;
    }
    const text = buf.subarray(0, read).toString('utf8');
    if (text.includes('\u0000')) return { ok: false, problem: `${display(root, path)} is not text` };
    return { ok: true, text };
  } catch (err) {
    return { ok: false, problem: `${display(root, path)} cannot be read (${(err as Error).message})` };
  } finally {
    closeSync(fd);
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function display(root: ContentRoot, p: string): string {
  if (root.linkFreeFrom === null) return p;
  return relative(root.linkFreeFrom, p).split(sep).join('/');
}
