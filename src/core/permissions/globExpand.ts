import { isAbsolute, sep } from 'node:path';
import { liveFs, type FsView } from './fsView';
import { resolvePhysical } from './physical';

/**
 * Pathname expansion as bash does it with its default options (no dotglob, no globstar, no
 * extglob, globskipdots, no nullglob): `*`, `?` and `[…]` within one component, hidden names only
 * for a pattern that starts with `.`. Used to see which files a command with a glob operand will
 * really open, today. Bounded: past MAX_ENTRIES directory entries or MAX_MATCHES matches the
 * answer is "unknown".
 */
export type GlobExpansion =
  /** `prefix`: the static directory part before the first glob component (what must be inside). */
  | { ok: true; prefix: string; matches: string[] }
  | { ok: false; reason: string };

export const MAX_ENTRIES = 10_000;
export const MAX_MATCHES = 1_000;

/** True when `s` holds a character bash would treat as a glob (quoting is not known here). */
export function looksLikeGlob(s: string): boolean {
  return /[*?[]/.test(s);
}

/**
 * Expands `pattern` (a word after quote removal) against the file system from `cwd` (absolute).
 * Matches are joined as bash prints them (`src/link/x`), neither normalised nor resolved. No
 * match: an empty list (bash then passes the pattern itself). `prefixOk` is asked about the
 * static prefix and about every directory the pattern lists: one it refuses makes the expansion
 * unknown, so a pattern never walks the disk outside the places it may read (`/usr/lib/…`, a
 * directory symlink to `/`). `spend` is told how many entries each directory costs; when
 * it refuses, the expansion is unknown (a budget shared by the globs of one decision).
 * Never throws.
 */
export function expandGlob(pattern: string, cwd: string, prefixOk: (prefix: string) => boolean = () => true, fs: FsView = liveFs, spend: (entries: number) => boolean = () => true): GlobExpansion {
  const parts = pattern.split('/');
  const abs = isAbsolute(pattern);
  const first = parts.findIndex((p) => looksLikeGlob(p));
  if (first < 0) return { ok: true, prefix: abs ? pattern : `${cwd}/${pattern}`, matches: [] };
  if (parts.slice(first + 1).some((p) => p === '..')) return { ok: false, reason: `".." after a glob in ${pattern}` };
  const staticPart = parts.slice(0, first).join('/');
  const prefix = abs ? staticPart || sep : `${cwd}/${staticPart}`;
  if (!prefixOk(prefix)) return { ok: false, reason: `${pattern} starts outside the places Keel may read` };
  let current = [prefix];
  let scanned = 0;
  for (let i = first; i < parts.length; i++) {
    const part = parts[i] as string;
    const last = i === parts.length - 1;
    if (part === '' && !last) continue; // `a//b`
    const next: string[] = [];
    if (!looksLikeGlob(part)) {
      for (const dir of current) {
        const p = `${dir}/${part}`;
        const r = resolvePhysical(p, '/', fs);
        if (r.ok && r.exists) next.push(p);
      }
    } else {
      const re = componentRegex(part);
      if (!re) return { ok: false, reason: `the glob ${pattern} uses a form Keel does not expand` };
      for (const dir of current) {
        // A directory the pattern walks through must be readable too: a match below it would
        // resolve outside anyway, and listing / or /proc is slow.
        if (!prefixOk(dir)) return { ok: false, reason: `${pattern} reaches ${dir}, outside the places Keel may read` };
        const r = resolvePhysical(dir, '/', fs);
        const names = r.ok ? fs.readdir(r.path) : null;
        if (!names) continue; // not a directory, or unreadable: bash matches nothing there either
        scanned += names.length;
        if (!spend(names.length)) return { ok: false, reason: `the globs of this command look at too many files` };
        if (scanned > MAX_ENTRIES) return { ok: false, reason: `the glob ${pattern} reaches more than ${MAX_ENTRIES} files` };
        for (const name of names) {
          if (name.startsWith('.') && !part.startsWith('.')) continue;
          if (re.test(name)) next.push(`${dir}/${name}`);
        }
      }
    }
    if (next.length > MAX_MATCHES) return { ok: false, reason: `the glob ${pattern} matches more than ${MAX_MATCHES} files` };
    current = next;
    if (current.length === 0) break;
  }
  return { ok: true, prefix, matches: current };
}

/**
 * One component of a pattern as a regular expression (`*`, `?`, `[…]`, `[!…]`, `[^…]`); null for
 * what is not reproduced exactly (POSIX classes `[[:alpha:]]`, backslashes inside brackets,
 * reversed ranges) or could backtrack for long (more than eight runs of `*`).
 */
function componentRegex(part: string): RegExp | null {
  // Many stars make a backtracking regex slow on long names; such patterns are not expanded.
  if ((part.match(/\*+/g) ?? []).length > 8) return null;
  let out = '';
  for (let i = 0; i < part.length; i++) {
    const ch = part[i] as string;
    if (ch === '*') {
      if (!out.endsWith('.*')) out += '.*';
    }
    else if (ch === '?') out += '.';
    else if (ch === '[') {
      let j = i + 1;
      if (part[j] === '!' || part[j] === '^') j++;
      if (part[j] === ']') j++;
      while (j < part.length && part[j] !== ']') j++;
      if (j >= part.length) {
        out += '\\[';
        continue;
      }
      let body = part.slice(i + 1, j);
      if (body.includes('[') || body.includes('\\')) return null;
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${body.replace(/[\]^]/g, '\\$&')}]`;
      i = j;
    } else out += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  try {
    return new RegExp(`^${out}$`, 's');
  } catch {
    return null; // e.g. a reversed range [z-a]
  }
}
