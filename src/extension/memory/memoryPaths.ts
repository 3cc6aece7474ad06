import { lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { isMemoryFileName } from '../../core/memory/memoryFile';
import { memoryFolderProblem as coreFolderProblem } from '../../core/memory/memoryStore';

/** Where a memory file the page named lives, or why Keel will not touch it. */
export type MemoryFileResolution = { ok: true; path: string } | { ok: false; code: 'invalid_name' | 'outside' | 'not_found' | 'not_a_file'; reason: string };

function inside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

function errno(e: unknown): string | undefined {
  return e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/**
 * Resolves a memory file name the chat page sent (untrusted) to the plain file it names inside
 * `<workspace>/.keel/memory/`, after resolving symbolic links. Refused: a name that is not a plain
 * `.md` file name (`../x.md`, `a/b.md`, `.hidden.md`); a memory folder (or `.keel`) that is a link
 * (wherever it points, as the runs refuse it); a name that is a symbolic link (even one pointing inside: the
 * page opens and deletes memory files, never what a link in a cloned repository points at); a
 * folder or anything else that is not a regular file. Never throws.
 */
export function resolveMemoryFile(workspace: string, file: string): MemoryFileResolution {
  if (!isMemoryFileName(file)) return { ok: false, code: 'invalid_name', reason: `"${file.slice(0, 200)}" is not a memory file name (a plain .md file name in .keel/memory/)` };
  const folder = coreFolderProblem(workspace);
  if (folder) return { ok: false, code: 'outside', reason: folder };
  let root: string;
  let dir: string;
  try {
    root = realpathSync(workspace);
    dir = realpathSync(join(workspace, '.keel', 'memory'));
  } catch (e) {
    if (errno(e) === 'ENOENT') return { ok: false, code: 'not_found', reason: `there is no memory ${file} (no .keel/memory/ folder in ${workspace})` };
    return { ok: false, code: 'not_found', reason: `the memory folder cannot be read: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!inside(root, dir)) return { ok: false, code: 'outside', reason: `.keel/memory/ resolves to ${dir}, outside the workspace ${root}` };
  const path = join(dir, file);
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return { ok: false, code: 'not_a_file', reason: `${file} is a symbolic link; only plain files in .keel/memory/ are opened or deleted` };
    if (!st.isFile()) return { ok: false, code: 'not_a_file', reason: `${file} is not a file` };
  } catch (e) {
    if (errno(e) === 'ENOENT') return { ok: false, code: 'not_found', reason: `there is no memory ${file} in .keel/memory/` };
    return { ok: false, code: 'not_found', reason: `${file} cannot be read: ${e instanceof Error ? e.message : String(e)}` };
  }
  return { ok: true, path };
}

/**
 * Why the memory folder of `workspace` is not used, or undefined: `.keel` or `.keel/memory` is a
 * symbolic link (wherever it points: the runs refuse it too, core/memory/memoryStore.ts). Never
 * throws.
 */
export function memoryFolderProblem(workspace: string): string | undefined {
  return coreFolderProblem(workspace) ?? undefined;
}
