import { isAbsolute } from 'node:path';
import type { FsView } from './fsView';
import { expandGlob, looksLikeGlob } from './globExpand';

/**
 * Every file a command may open for one path operand: for each directory the command may run in,
 * the operand as written, and, when it holds glob characters, each of its current matches (bash
 * passes the pattern itself when nothing matches). The directories a glob lists must be
 * `readable`, or hold what is (`Read(~/docs/**)` lets `~/docs/*` be listed). A leading `~` is
 * read both ways (home, and a literal name, since whether it was quoted is not known here).
 * Paths are absolute and not normalised: check them with the physical resolver.
 *
 * Null when they cannot be known: `~user`, an unknown directory for a relative operand, a `..`
 * after a glob, a glob that lists a directory it may not read (it is not expanded then), or one
 * past the expansion bounds. Never throws.
 */
export function operandPaths(
  value: string,
  cwds: readonly string[] | null,
  home: string,
  readable: (path: string) => boolean,
  fs?: FsView,
  spend?: (entries: number) => boolean,
): string[] | null {
  if (value.includes('\0')) return null;
  const readings = [value];
  if (value === '~' || value.startsWith('~/')) readings.push(home + value.slice(1));
  else if (value.startsWith('~')) return null;
  const out: string[] = [];
  for (const r of readings) {
    const bases = isAbsolute(r) ? ['/'] : cwds;
    if (!bases) return null;
    for (const base of bases) {
      out.push(isAbsolute(r) ? r : `${base}/${r}`);
      if (!looksLikeGlob(r)) continue;
      // A directory may be listed when it or what is inside it may be read (`Read(~/docs/**)`).
      const listable = (dir: string): boolean => readable(dir) || readable(`${dir}/_`);
      const g = expandGlob(r, base, listable, fs, spend);
      if (!g.ok) return null;
      out.push(...g.matches);
    }
  }
  return out;
}
