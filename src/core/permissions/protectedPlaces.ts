import { statSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { isInside } from './paths';

/**
 * Protected places: files whose change alters what Keel, Claude Code, git or VS Code run or
 * allow, or what every later run is told. A model's write to one asks in every mode,
 * bypassPermissions included, however it is reached (the Write and Edit tools, a redirection, a
 * file command's operand, a symlink, a hard link).
 *
 * Names are compared as a case-insensitive file system that drops trailing dots and spaces sees
 * them (macOS, Windows): `.KEEL/settings.json`, `.keel./settings.json`, `claude.MD` and
 * `KEEL.md:stream` are the protected file there. The comparison is made on every platform: on a
 * case-sensitive Linux file system such a name is another file, and asking about it costs one
 * question nobody meets in practice, while telling the two apart would need a probe per folder.
 */

/** Folders whose files run code or hold permissions, anywhere below a root. */
const PROTECTED_FOLDERS = new Map<string, string>([
  ['.git', 'writes inside a .git folder (hooks and config run code)'],
  ['.keel', "writes Keel's own files (.keel/: permission settings and more)"],
  ['.claude', 'writes Claude Code settings (.claude/)'],
  ['.vscode', 'writes VS Code settings (.vscode/: tasks and launch configurations run code)'],
]);

/**
 * Instruction files: read into the system prompt of every later run (Keel reads KEEL.md,
 * AGENTS.md, CLAUDE.md and .claude/CLAUDE.md at the workspace root; Claude Code also reads
 * CLAUDE.local.md, and other agents read these names in subfolders too), so they are protected
 * at any depth.
 */
const INSTRUCTION_FILES = new Set(['keel.md', 'agents.md', 'claude.md', 'claude.local.md']);

/** Instruction files Keel reads, relative to a root (for hard links to them). */
const ROOT_INSTRUCTION_FILES = ['KEEL.md', 'AGENTS.md', 'CLAUDE.md', 'CLAUDE.local.md', join('.claude', 'CLAUDE.md')];

/**
 * A path component as a folding file system sees it: up to an NTFS stream (`name:stream`), without
 * trailing dots and spaces, lower case.
 */
export function foldName(name: string): string {
  const colon = name.indexOf(':');
  const stem = colon > 0 ? name.slice(0, colon) : name;
  const trimmed = stem.replace(/[. ]+$/, '');
  return (trimmed === '' ? stem : trimmed).toLowerCase();
}

/** A whole path folded component by component. */
export function foldPath(p: string): string {
  return p.split(sep).map(foldName).join(sep);
}

/** Where the protected places of one decision are. All paths absolute and physical where possible. */
export interface ProtectedPlaces {
  roots: readonly string[];
  home: string;
  /**
   * Files protected wherever they are: the settings files the engine reads (the user's, the
   * workspace's, each `--settings FILE`) and the caller's own (`EngineOptions.protectedFiles`).
   */
  files: readonly string[];
  /**
   * `dev:ino` of every protected file that exists (those of `files` and the instruction files at
   * each root): a write to another name of the same file (a hard link) is a write to it.
   */
  inodes: ReadonlySet<string>;
}

/**
 * Why a write to `p` (absolute; physical or as written) must ask whatever the mode, or null:
 * anything inside a `.git`, `.keel`, `.claude` or `.vscode` folder below the root that holds it
 * (or anywhere in the path outside every root), an instruction file (KEEL.md, AGENTS.md,
 * CLAUDE.md, CLAUDE.local.md), the user's `~/.keel`, one of `places.files`. Names fold as above.
 */
export function protectedReason(p: string, places: Pick<ProtectedPlaces, 'roots' | 'home'> & { files?: readonly string[] }): string | null {
  return foldedPlaces({ files: [], ...places }).reason(p);
}

/** Places with their names folded once (a decision asks about many paths). */
export interface FoldedPlaces {
  reason(p: string): string | null;
}

export function foldedPlaces(places: Pick<ProtectedPlaces, 'roots' | 'home' | 'files'> & { reasons?: ReadonlyMap<string, string> }): FoldedPlaces {
  const roots = places.roots.map(foldPath);
  const userKeel = foldPath(join(places.home, '.keel'));
  const files = new Map(places.files.map((f) => [foldPath(f), f]));
  return {
    reason(p: string): string | null {
      const folded = foldPath(p);
      const root = roots.find((r) => isInside(r, folded));
      const parts = (root === undefined ? folded : relative(root, folded)).split(sep);
      for (const part of parts) {
        const why = PROTECTED_FOLDERS.get(part);
        if (why) return why;
      }
      const name = foldName(basename(p));
      if (INSTRUCTION_FILES.has(name)) return `writes an instruction file (${basename(p)}), which every later run reads into its instructions`;
      if (isInside(userKeel, folded)) return "writes the user's Keel folder (~/.keel)";
      const file = files.get(folded);
      return file === undefined ? null : (places.reasons?.get(file) ?? `writes a protected file (${file})`);
    },
  };
}

/** `dev:ino` of a regular file, or null (missing, not a file, unreadable). */
function inodeKey(p: string): string | null {
  try {
    const st = statSync(p, { throwIfNoEntry: false });
    return st?.isFile() ? `${st.dev}:${st.ino}` : null;
  } catch {
    return null;
  }
}

/** The inode keys of `files` and of the instruction files at each root, for `ProtectedPlaces.inodes`. */
export function protectedInodes(roots: readonly string[], files: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const f of [...files, ...roots.flatMap((r) => ROOT_INSTRUCTION_FILES.map((n) => join(r, n)))]) {
    const k = inodeKey(f);
    if (k) out.add(k);
  }
  return out;
}

/**
 * Why writing `real` (a physical path) writes a protected file under another name — it is a hard
 * link to one — or null. Only a file with more than one link is compared with `inodes()` (asked
 * for then: most files have one link, and the protected files need not be looked at).
 */
export function hardLinkReason(real: string, inodes: () => ReadonlySet<string>): string | null {
  try {
    const st = statSync(real, { throwIfNoEntry: false });
    if (!st?.isFile() || st.nlink < 2) return null;
    return inodes().has(`${st.dev}:${st.ino}`) ? `writes ${real}, another name (a hard link) of a protected file` : null;
  } catch {
    return null;
  }
}
