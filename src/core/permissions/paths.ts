import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { escapeRegex } from './rules';

/**
 * File paths for permission decisions: symlink-resolved locations, the allowed roots
 * (workspace + additional directories), protected places, and Read/Edit rule patterns in
 * gitignore style. Pure except for realpath lookups.
 */

/** realpath of `p`, or of its longest existing ancestor joined with the rest (new files). */
export function realLocation(p: string): string {
  const abs = resolve(p);
  let cur = abs;
  const tail: string[] = [];
  for (let i = 0; i < 256; i++) {
    if (existsSync(cur)) {
      try {
        return join(realpathSync(cur), ...tail.reverse());
      } catch {
        return abs;
      }
    }
    const parent = dirname(cur);
    if (parent === cur) return abs;
    tail.push(basename(cur));
    cur = parent;
  }
  return abs;
}

export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Why a write to `real` (a realpath) must ask whatever the mode, or null. */
export function protectedReason(real: string, userSettingsPath: string | undefined): string | null {
  const parts = real.split(sep);
  if (parts.includes('.git')) return 'writes inside a .git folder';
  if (parts.includes('.vscode')) return 'writes VS Code settings (.vscode/)';
  const name = parts[parts.length - 1] ?? '';
  const parent = parts[parts.length - 2] ?? '';
  if ((parent === '.keel' || parent === '.claude') && /^settings(\.local)?\.json$/.test(name)) return `writes permission settings (${parent}/${name})`;
  if (userSettingsPath && real === realLocation(userSettingsPath)) return 'writes the user permission settings';
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
