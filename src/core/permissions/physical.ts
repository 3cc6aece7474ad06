import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { liveFs, type FsView } from './fsView';

/**
 * The one path resolver of the permission engine: where the kernel will really open a path.
 *
 * The kernel walks a path component by component from the root (or the working directory),
 * following every symlink when it meets it, and only then applies `..` to the directory it has
 * reached. So `src/rootlink/../etc/passwd` with `src/rootlink -> /` opens `/etc/passwd`, while a
 * lexical normalisation (`path.resolve`) would say `src/etc/passwd`. This resolver does what the
 * kernel does, and goes on where the kernel would create a file: a dangling symlink is followed
 * to its (missing) target, and the missing tail is kept, so a write to `src/link` with
 * `src/link -> ../.keel/settings.local.json` resolves to that settings file.
 */
export type PhysicalPath =
  /** `path` is absolute and holds no symlink, `.` or `..` in its existing part. */
  | { ok: true; path: string; exists: boolean; viaLink: boolean }
  /** The kernel would fail or the answer depends on what other commands create first. */
  | { ok: false; reason: string };

/** Linux's MAXSYMLINKS: the kernel gives ELOOP after this many links in one lookup. */
export const MAX_LINKS = 40;
const MAX_COMPONENTS = 4096;

/**
 * Resolves `p` physically. A relative `p` is taken from `cwd`, which must be a physical
 * directory path (one this function returned). Never throws.
 *
 * Not ok when: more than 40 symlinks are met (the kernel says ELOOP), a `..` follows a component
 * that does not exist yet (the kernel says ENOENT today, but a command earlier in the same script
 * could create it as a symlink), or the path is absurdly long.
 */
export function resolvePhysical(p: string, cwd = '/', fs: FsView = liveFs): PhysicalPath {
  if (p.includes('\0')) return { ok: false, reason: 'the path holds a NUL character' };
  let resolved = isAbsolute(p) ? sep : cwd;
  // Components still to walk, in reverse (pop() takes the next one).
  const todo = p.split('/').reverse();
  let links = 0;
  let missing = false;
  let viaLink = false;
  let steps = 0;
  while (todo.length > 0) {
    if (++steps > MAX_COMPONENTS) return { ok: false, reason: 'the path is too long to resolve' };
    const c = todo.pop() as string;
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (missing) return { ok: false, reason: `".." follows a part of the path that does not exist yet (${resolved})` };
      resolved = dirname(resolved);
      continue;
    }
    const next = join(resolved, c);
    if (missing) {
      resolved = next;
      continue;
    }
    const entry = fs.lstat(next);
    if (entry.kind !== 'link') {
      // Missing (ENOENT, EACCES…): the rest is a new path. A file: nothing below it (ENOTDIR).
      if (entry.kind === 'missing' || (entry.kind !== 'dir' && todo.some((t) => t !== '' && t !== '.'))) missing = true;
      resolved = next;
      continue;
    }
    const link = entry.target;
    if (++links > MAX_LINKS) return { ok: false, reason: `more than ${MAX_LINKS} symlinks (a loop?) in ${p}` };
    viaLink = true;
    if (isAbsolute(link)) resolved = sep;
    const parts = link.split('/');
    for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i] as string);
  }
  return { ok: true, path: resolved, exists: !missing, viaLink };
}

/**
 * The physical location of `p` for code that needs one answer (settings roots, rule bases):
 * the resolution when there is one, else `p` itself, lexically made absolute.
 */
export function physicalOrLexical(p: string, cwd = '/', fs: FsView = liveFs): string {
  const r = resolvePhysical(p, cwd, fs);
  return r.ok ? r.path : resolve(cwd, p);
}
