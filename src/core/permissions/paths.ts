import { join, relative, resolve, sep, isAbsolute } from 'node:path';
import { physicalOrLexical } from './physical';
import { escapeRegex } from './rules';

/**
 * File paths for permission decisions: the allowed roots (workspace + additional directories),
 * protected places, and Read/Edit rule patterns in gitignore style. Where a path really leads
 * is physical.ts's job (symlinks first, then `..`, as the kernel does).
 */

/** The physical location of `p` (absolute, or relative to the process), for roots and bases. */
export function realLocation(p: string): string {
  return physicalOrLexical(resolve(p));
}

/** True when `p` is `root` or below it. Both absolute; a normalised pair takes a fast path. */
export function isInside(root: string, p: string): boolean {
  const plain = (x: string): boolean => !x.includes(`${sep}.`) && !x.includes(`${sep}${sep}`) && !x.endsWith(sep);
  if (plain(root) && plain(p)) return p === root || p.startsWith(`${root}${sep}`);
  if (root === sep) return isAbsolute(p);
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Folders whose files change what Keel, Claude Code, git or VS Code run or allow. */
const PROTECTED_FOLDERS: [string, string][] = [
  ['.git', 'writes inside a .git folder (hooks and config run code)'],
  ['.keel', "writes Keel's own files (.keel/: permission settings and more)"],
  ['.claude', 'writes Claude Code settings (.claude/)'],
  ['.vscode', 'writes VS Code settings (.vscode/: tasks and launch configurations run code)'],
];

/**
 * Why a write to `p` (an absolute path, physical or lexical) must ask whatever the mode, or null:
 * anything inside a `.git`, `.keel`, `.claude` or `.vscode` folder below the root that holds it
 * (or anywhere in the path outside every root), the user's `~/.keel`, the user settings file.
 */
export function protectedReason(p: string, places: { roots: readonly string[]; home: string; userSettingsPath?: string }): string | null {
  const root = places.roots.find((r) => isInside(r, p));
  const parts = (root === undefined ? p : relative(root, p)).split(sep);
  for (const [folder, why] of PROTECTED_FOLDERS) if (parts.includes(folder)) return why;
  if (isInside(join(places.home, '.keel'), p)) return "writes the user's Keel folder (~/.keel)";
  if (places.userSettingsPath && p === places.userSettingsPath) return 'writes the user permission settings';
  return null;
}

export interface PathBases {
  /** Workspace root (the agent's working directory), realpath. */
  workspace: string;
  home: string;
}

/**
 * Compiles a Read/Edit/Write specifier into a matcher of absolute real paths:
 * `//abs` absolute, `~/x` home, `/x` relative to `projectRoot`, `./x` and `x` relative to the
 * workspace. A pattern without a slash (other than a trailing one) matches at any depth below its
 * base, as in .gitignore. A matching directory matches everything inside it.
 */
export function compilePathPattern(spec: string, projectRoot: string, bases: PathBases): (absPath: string) => boolean {
  let base: string;
  let pat: string;
  let anchored = true;
  if (spec.startsWith('//')) {
    base = '/';
    pat = spec.slice(2);
  } else if (spec === '~' || spec.startsWith('~/')) {
    base = bases.home;
    pat = spec.slice(2);
  } else if (spec.startsWith('/')) {
    base = projectRoot;
    pat = spec.slice(1);
  } else if (spec.startsWith('./')) {
    base = bases.workspace;
    pat = spec.slice(2);
  } else {
    base = bases.workspace;
    pat = spec;
    anchored = pat.replace(/\/$/, '').includes('/');
  }
  pat = pat.replace(/\/+$/, '');
  const re = pat === '' ? /^.*$/s : new RegExp(`^${anchored ? '' : '(?:.*/)?'}${globToRegex(pat)}(?:/.*)?$`, 's');
  return (absPath: string) => {
    if (!isInside(base, absPath)) return false;
    const rel = relative(base, absPath).split(sep).join('/');
    return re.test(rel);
  };
}

/** gitignore-style glob: `**` any depth, `*` and `?` within one segment, `[...]` classes. */
function globToRegex(pat: string): string {
  let out = '';
  for (let i = 0; i < pat.length; i++) {
    const ch = pat[i] as string;
    if (ch === '*') {
      if (pat[i + 1] === '*') {
        const slash = pat[i + 2] === '/';
        out += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '[') {
      const end = pat.indexOf(']', i + 1);
      if (end < 0) out += '\\[';
      else {
        out += `[${pat.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else out += escapeRegex(ch);
  }
  return out;
}
