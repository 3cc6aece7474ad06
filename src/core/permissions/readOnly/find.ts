import { mayBeOption } from '../shell/options';
import type { ShellWord } from '../shell/words';
import type { CommandVerdict, ReadOnlyContext } from './types';

/**
 * find (findutils 4.9) has an expression grammar, not options: leading `-H -L -P -D opts -Olevel`,
 * then starting points, then primaries with fixed arities. Read-only when every primary is known
 * and none deletes, writes (`-fprint*`, `-fls`: their files are reported as writes), runs
 * (`-exec`, `-ok`: planned as commands of their own, commandPlan.ts, and cut out of the words
 * seen here) or follows links out of the tree (`-L`, `-follow`); files a primary names
 * (`-newer F`, `-samefile F`) and the starting points are path-checked; `-files0-from` reads
 * starting points Keel cannot see.
 */
const NO_ARG = new Set([
  '-daystart', '-depth', '-d', '-ignore_readdir_race', '-noignore_readdir_race', '-mount', '-xdev', '-noleaf', '-nowarn', '-warn', '-help', '--help',
  '-version', '--version', '-empty', '-executable', '-false', '-nogroup', '-nouser', '-readable', '-true', '-writable', '-ls', '-print', '-print0',
  '-prune', '-quit', '-and', '-a', '-or', '-o', '-not', '!', '(', ')', ',',
]);
const ONE_ARG = new Set([
  '-maxdepth', '-mindepth', '-regextype', '-amin', '-atime', '-cmin', '-ctime', '-fstype', '-gid', '-group', '-ilname', '-iname', '-inum', '-ipath',
  '-iregex', '-iwholename', '-links', '-lname', '-mmin', '-mtime', '-name', '-path', '-perm', '-regex', '-size', '-type', '-uid', '-used', '-user',
  '-wholename', '-xtype', '-context', '-printf',
]);
const READS_ARG = new Set(['-anewer', '-cnewer', '-newer', '-samefile']);
/** Primaries that write the file their argument names (-fprintf also takes a format). */
const WRITES_ARG = new Set(['-fprint', '-fprint0', '-fprintf', '-fls']);

const isExpressionStart = (v: string): boolean => (v.startsWith('-') && v.length > 1) || v === '(' || v === '!' || v === ')' || v === ',';

/**
 * What `find …` (words[0] is find) reads: its starting points (listed, names only: a read of
 * each folder) and the files its primaries name. Read-only when nothing else is done.
 */
export function findVerdict(words: readonly ShellWord[], ctx: ReadOnlyContext): CommandVerdict {
  const unknown: CommandVerdict = { readOnly: false, complete: false };
  let readOnly = true;
  const read = (w: ShellWord | string): void => {
    const value = typeof w === 'string' ? w : w.value;
    if (!ctx.use({ kind: 'read', value, ...(typeof w === 'string' ? {} : { word: w }) })) readOnly = false;
  };
  let i = 1;
  // Leading options.
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.glob) break;
    const v = w.value;
    if (v === '-H' || v === '-P') continue;
    if (v === '-L') readOnly = false;
    if (v === '-D') {
      i++;
      continue;
    }
    if (/^-O\d*$/.test(v)) continue;
    if (v === '--') {
      i++;
      break;
    }
    break;
  }
  // Starting points.
  const starts: ShellWord[] = [];
  let deletes = false;
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic) return unknown;
    if (w.glob && mayBeOption(w)) return unknown;
    if (!w.glob && isExpressionStart(w.value)) break;
    read(w);
    starts.push(w);
  }
  // The expression.
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.glob) return unknown;
    const v = w.value;
    if (NO_ARG.has(v)) continue;
    if (v === '-delete' || v === '-follow') {
      // -delete removes what it finds below its starting points; -follow leaves the tree.
      readOnly = false;
      deletes ||= v === '-delete';
      continue;
    }
    // -files0-from reads starting points Keel cannot see.
    if (v === '-files0-from') return unknown;
    const arg = words[i + 1];
    if (!arg || arg.dynamic || (arg.glob && mayBeOption(arg))) return unknown;
    if (WRITES_ARG.has(v)) {
      ctx.use({ kind: 'write', value: arg.value, word: arg, byRule: false });
      readOnly = false;
      i += v === '-fprintf' ? 2 : 1;
      continue;
    }
    if (ONE_ARG.has(v)) {
      i++;
      continue;
    }
    const newer = /^-newer([aBcm])([aBcmt])$/.exec(v);
    if (READS_ARG.has(v) || (newer && newer[2] !== 't')) {
      read(arg);
      i++;
      continue;
    }
    if (newer) {
      i++;
      continue;
    }
    // -exec/-ok bodies are planned as commands of their own (commandPlan.ts), never here.
    return unknown;
  }
  if (starts.length === 0) read('.');
  if (deletes) {
    const trees = starts.length > 0 ? starts.map((w) => ({ value: w.value, word: w })) : [{ value: '.' }];
    for (const t of trees) ctx.use({ kind: 'writeTree', ...t, byRule: true });
  }
  return { readOnly, complete: true };
}

/** Primaries after which find's output is no longer the paths it found. */
const REFORMATS = new Set(['-printf', '-fprintf', '-ls', '-fls', '-fprint', '-fprint0', '-exec', '-execdir', '-ok', '-okdir', '-delete', '-quit']);

/**
 * The starting points of `find …` (words[0] is find) when every path it can hand on begins with
 * one of them: literal starting points (`.` when none), no `-L`/`-follow`/`-files0-from`. For
 * `-exec … {}` that is always so; its printed output (`… | xargs cmd`) only when nothing but
 * `-print`/`-print0` prints (`output`). Null when unknown.
 */
export function findRoots(words: readonly ShellWord[], output: boolean): string[] | null {
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.glob) return null;
    if (w.value === '-H' || w.value === '-P' || /^-O\d*$/.test(w.value)) continue;
    if (w.value === '-D') {
      i++;
      continue;
    }
    if (w.value === '-L') return null;
    if (w.value === '--') i++;
    break;
  }
  const roots: string[] = [];
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.glob) return null;
    if (isExpressionStart(w.value)) break;
    roots.push(w.value);
  }
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic) return null;
    if (w.value === '-follow' || w.value === '-files0-from') return null;
    if (output && REFORMATS.has(w.value)) return null;
  }
  return roots.length > 0 ? roots : ['.'];
}
