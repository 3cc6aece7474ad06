import { isAbsolute, resolve } from 'node:path';
import { liveFs, type FsView } from '../fsView';
import { resolvePhysical } from '../physical';
import type { ShellWord } from './words';

/**
 * The working directory of a script as it runs, through `cd`, `pushd`, `popd`: the set of
 * directories it may be in at each command. A `cd` that may fail (followed by `;`, `||`, a
 * newline…) leaves both the old and the new directory possible; only `cd x && next` guarantees
 * `x` for `next`. Null means unknown (a computed target, `cd -`, `CDPATH`, a target that is a
 * directory from nowhere today, a loop or function that changes directory, `eval`, `source`…):
 * relative paths then cannot be checked and ask. Like every path check, this reads the disk as
 * it is when the decision is made.
 */
export interface Dir {
  /** `$PWD` as bash keeps it (symlinks not resolved: `cd ..` goes up this path by default). */
  logical: string;
  /** Where the kernel is: relative paths of commands start here. */
  physical: string;
}

export type Dirs = readonly Dir[] | null;

/** More possible directories than this: unknown. */
export const MAX_DIRS = 16;

export function unionDirs(a: Dirs, b: Dirs): Dirs {
  if (a === null || b === null) return null;
  const out: Dir[] = [...a];
  for (const d of b) if (!out.some((o) => o.logical === d.logical && o.physical === d.physical)) out.push(d);
  return out.length > MAX_DIRS ? null : out;
}

/** The physical directories of `dirs`, without repeats; null when unknown. */
export function physicalDirs(dirs: Dirs): string[] | null {
  if (dirs === null) return null;
  return [...new Set(dirs.map((d) => d.physical))];
}

/** A `pushd` entry; `maybe`: the `pushd` may have failed, so the entry may not be there. */
interface StackEntry {
  dirs: Dirs;
  maybe: boolean;
}

/** What a scope (subshell, pipeline element, substitution) saves and restores. */
export interface DirSnapshot {
  dirs: Dirs;
  stack: StackEntry[] | null;
}

export class DirTracker {
  dirs: Dirs;
  /** The `pushd` stack; null when unknown. */
  private stack: StackEntry[] | null = [];
  /** Where the last command left us if it succeeded (for `&&`); undefined: as `dirs`. */
  lastSuccess: Dirs | undefined;
  /** Set once anything assigns CDPATH: relative `cd` targets are then unknown. */
  cdpathAssigned = false;

  constructor(
    start: string,
    private readonly home: string,
    private readonly fs: FsView = liveFs,
  ) {
    const r = resolvePhysical(start, '/', fs);
    this.dirs = [{ logical: resolve(start), physical: r.ok ? r.path : resolve(start) }];
  }

  snapshot(): DirSnapshot {
    return { dirs: this.dirs, stack: this.stack && [...this.stack] };
  }

  restore(s: DirSnapshot): void {
    this.dirs = s.dirs;
    this.stack = s.stack;
    this.lastSuccess = undefined;
  }

  /** Forget everything: from here on the directory is unknown. */
  unknown(): void {
    this.dirs = null;
    this.stack = null;
    this.lastSuccess = undefined;
  }

  /** Applies one simple command (its words after assignments) as bash runs it in this shell. */
  command(words: ShellWord[]): void {
    let i = 0;
    // `builtin cd`, `command cd` and `time cd` (a keyword: it times a command of this shell) all
    // run this shell's own cd.
    while (words[i] && !words[i]?.dynamic && (words[i]?.value === 'builtin' || words[i]?.value === 'command' || words[i]?.value === 'time')) {
      const wrapper = words[i]?.value;
      i++;
      while (wrapper === 'time' && words[i] && /^-p$|^--$/.test(words[i]?.value ?? '')) i++;
      while (wrapper === 'command' && words[i] && /^-[p]+$|^--$/.test(words[i]?.value ?? '')) i++;
      if (wrapper === 'command' && /^-[vV]/.test(words[i]?.value ?? '')) {
        this.lastSuccess = undefined;
        return;
      }
    }
    const name = words[i];
    if (!name) return;
    const args = words.slice(i + 1);
    if (name.dynamic) return this.unknown();
    switch (name.value) {
      case 'cd':
        return this.cd(args);
      case 'pushd':
        return this.pushd(args);
      case 'popd':
        return this.popd(args);
      case 'dirs':
        if (args.some((a) => a.dynamic || a.value.startsWith('-c'))) this.stack = [];
        this.lastSuccess = undefined;
        return;
      // Run code in this shell, or change what `cd` and `..` mean: the directory is unknown after.
      case 'eval':
      case 'source':
      case '.':
      case 'trap':
      case 'enable':
      case 'shopt':
        return this.unknown();
      case 'set':
        if (args.some((a) => a.dynamic || /^[-+][a-zA-Z]*P|^physical$/.test(a.value))) return this.unknown();
        this.lastSuccess = undefined;
        return;
      default:
        // Any other command leaves the directory as it was, whether it succeeds or not.
        this.lastSuccess = this.dirs;
    }
  }

  private cd(args: ShellWord[]): void {
    let physicalOnly = false;
    let j = 0;
    for (; j < args.length; j++) {
      const a = args[j] as ShellWord;
      if (a.dynamic) return this.unknown();
      if (a.value === '--') {
        j++;
        break;
      }
      if (!/^-[LPe]+$/.test(a.value)) break;
      for (const ch of a.value.slice(1)) if (ch === 'L' || ch === 'P') physicalOnly = ch === 'P';
    }
    const success = this.targets(args[j], physicalOnly);
    if (success === null) return this.unknown();
    this.dirs = unionDirs(this.dirs, success);
    this.lastSuccess = success;
  }

  private pushd(args: ShellWord[]): void {
    const target = args[0];
    if (!target || args.length > 1 || target.dynamic || /^[-+]/.test(target.value)) return this.unknown();
    const success = this.targets(target, false);
    if (success === null) return this.unknown();
    const old = this.dirs;
    this.stack?.push({ dirs: old, maybe: true });
    this.dirs = unionDirs(old, success);
    this.lastSuccess = success;
  }

  private popd(args: ShellWord[]): void {
    if (args.length > 0 || this.stack === null) return this.unknown();
    const top = this.stack.pop();
    if (!top) {
      this.lastSuccess = undefined; // popd on an empty stack fails and stays
      return;
    }
    if (top.maybe && this.stack.length > 0) return this.unknown();
    this.dirs = top.maybe ? unionDirs(this.dirs, top.dirs) : top.dirs;
    this.lastSuccess = top.dirs;
  }

  /**
   * Where `cd target` goes, from each possible directory, when it succeeds; null when that cannot
   * be known. From a directory where the target is not a directory (today), that `cd` fails and
   * adds nothing; if it fails from everywhere, what follows `cd … &&` is unknown.
   */
  private targets(target: ShellWord | undefined, physicalOnly: boolean): Dirs {
    let t: string;
    if (!target) t = this.home;
    else {
      if (target.dynamic || target.glob || target.fields?.length !== 1) return null;
      t = target.fields[0] as string;
    }
    if (t === '' || t === '-') return null;
    if (this.cdpathAssigned && !isAbsolute(t) && !/^\.\.?(\/|$)/.test(t)) return null;
    const from: Dirs = isAbsolute(t) ? [{ logical: '/', physical: '/' }] : this.dirs;
    if (from === null) return null;
    const out: Dir[] = [];
    for (const d of from) {
      // bash's default (-L): `..` is taken off $PWD as text, then the result is entered; if that
      // fails it tries the path as given, from where the process really is.
      const logical = resolve(d.logical, t);
      const viaLogical = physicalOnly ? null : directory(logical, this.fs);
      if (viaLogical !== null) {
        out.push({ logical, physical: viaLogical });
        continue;
      }
      const viaPhysical = directory(isAbsolute(t) ? t : `${d.physical}/${t}`, this.fs);
      if (viaPhysical !== null) out.push({ logical: viaPhysical, physical: viaPhysical });
    }
    return out.length === 0 ? null : unionDirs([], out);
  }
}

/** The physical directory `p` leads to, or null when it is not (today) a directory. */
export function directory(p: string, fs: FsView): string | null {
  const r = resolvePhysical(p, '/', fs);
  return r.ok && r.exists && fs.isDirectory(r.path) ? r.path : null;
}
