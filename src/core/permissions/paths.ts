import { relative, resolve, sep, isAbsolute } from 'node:path';
import { physicalOrLexical } from './physical';
import { escapeRegex } from './rules';

/**
 * File paths for permission decisions: the allowed roots (workspace + additional directories)
 * and Read/Edit rule patterns in gitignore style (protected places: protectedPlaces.ts). Where a path really leads
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

export interface PathBases {
  /** Workspace root (the agent's working directory), realpath. */
  workspace: string;
  home: string;
}

/** A compiled Read/Edit/Write rule pattern (see `compilePathPattern`). */
export interface PathPattern {
  /** Does the pattern match this absolute path (or a folder holding it)? */
  test(absPath: string): boolean;
  /**
   * Could the pattern match something at or below `root` (absolute, physical)? `all`: `root`
   * itself or a folder above it matches, so everything below does; `some`: some path strictly
   * inside may match; `none`: nothing inside can.
   */
  reach(root: string): 'all' | 'some' | 'none';
  /**
   * ripgrep globs (gitignore syntax, anchored at `root` with a leading `/`) that together match
   * every path below `root` the pattern matches, for `--glob !GLOB`; null when they cannot be
   * written exactly (then a search must ask instead). Empty when nothing below can match.
   */
  ripgrepGlobs(root: string): string[] | null;
}

/**
 * Compiles a Read/Edit/Write specifier into a matcher of absolute real paths:
 * `//abs` absolute, `~/x` home, `/x` relative to `projectRoot`, `./x` and `x` relative to the
 * workspace. A pattern without a slash (other than a trailing one) matches at any depth below its
 * base, as in .gitignore. A matching directory matches everything inside it.
 */
export function compilePathPattern(spec: string, projectRoot: string, bases: PathBases): PathPattern {
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
  const test = (absPath: string): boolean => {
    if (!isInside(base, absPath)) return false;
    const rel = relative(base, absPath).split(sep).join('/');
    return re.test(rel);
  };
  const segments = pat === '' ? ['**'] : anchored ? pat.split('/').filter((s) => s !== '') : ['**', pat];
  return {
    test,
    reach: (root) => reachOf(segments, base, root).kind,
    ripgrepGlobs: (root) => {
      const r = reachOf(segments, base, root);
      if (r.kind === 'none') return [];
      if (r.kind === 'all') return ['/**'];
      const globs: string[] = [];
      for (const rest of r.residuals) {
        const g = rest.map(ripgrepSegment);
        if (g.some((x) => x === null)) return null;
        globs.push(`/${g.join('/')}`);
      }
      return globs;
    },
  };
}

type Reach = { kind: 'all' | 'none'; residuals: [] } | { kind: 'some'; residuals: string[][] };

/** A segment that may match across slashes (`**`, or `a**b`, which the regex reads as `.*`). */
const anyDepth = (s: string): boolean => s.includes('**');

/**
 * How far pattern `segments` (relative to `base`) reach into `root`: walks `root`'s components
 * below `base` through the pattern as a small automaton (`**` matches any number of components),
 * and returns what is left of the pattern for paths below `root`.
 */
function reachOf(segments: string[], base: string, root: string): Reach {
  if (!isInside(base, root)) {
    if (!isInside(root, base)) return { kind: 'none', residuals: [] };
    const lead = relative(root, base).split(sep).filter(Boolean).map(literalSegment);
    return { kind: 'some', residuals: [[...lead, ...segments]] };
  }
  const comps = relative(base, root).split(sep).filter(Boolean);
  // `**` may match no component at all; `a**b` (read as `a.*b`) at least one, starting with `a`.
  const closure = (states: Set<number>): Set<number> => {
    const out = new Set(states);
    for (const i of out) if (segments[i] === '**') out.add(i + 1);
    return out;
  };
  let states = closure(new Set([0]));
  for (const c of comps) {
    if (states.has(segments.length)) return { kind: 'all', residuals: [] };
    const next = new Set<number>();
    for (const i of states) {
      const s = segments[i];
      if (s === undefined) continue;
      if (s === '**') next.add(i);
      else if (anyDepth(s)) {
        if (!c.startsWith(s.slice(0, s.search(/[*?[]/)))) continue;
        next.add(i);
        next.add(i + 1);
      } else if (segmentRegex(s).test(c)) next.add(i + 1);
    }
    states = closure(next);
    if (states.size === 0) return { kind: 'none', residuals: [] };
  }
  if (states.has(segments.length)) return { kind: 'all', residuals: [] };
  return { kind: 'some', residuals: [...states].map((i) => segments.slice(i)) };
}

const segmentCache = new Map<string, RegExp>();
function segmentRegex(s: string): RegExp {
  let re = segmentCache.get(s);
  if (!re) {
    re = new RegExp(`^${globToRegex(s)}$`, 's');
    segmentCache.set(s, re);
  }
  return re;
}

/** A path component as a residual segment that matches only itself (marked: see `ripgrepSegment`). */
function literalSegment(name: string): string {
  return `\u0000${name.replace(/[\\*?[\]{}!]/g, (c) => `\\${c}`)}`;
}

/**
 * One pattern segment in ripgrep's glob syntax, meaning exactly what the engine's matcher means:
 * `**`, `*`, `?` and `[…]` as they are, braces and backslashes escaped (the engine reads them
 * literally); null for a `**` inside a segment, which the engine reads as crossing folders.
 */
function ripgrepSegment(s: string): string | null {
  if (s === '**') return s;
  if (s.startsWith('\u0000')) return s.slice(1);
  if (anyDepth(s)) return null;
  return s.replace(/[\\{}]/g, (c) => `\\${c}`);
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
