import { mayBeOption } from '../shell/options';
import type { ShellWord } from '../shell/words';
import type { ReadOnlyContext } from './types';

/**
 * find (findutils 4.9) has an expression grammar, not options: leading `-H -L -P -D opts -Olevel`,
 * then starting points, then primaries with fixed arities. Read-only when every primary is known
 * and none deletes, writes (`-fprint*`, `-fls`), runs (`-exec`, `-ok`: planned as commands of
 * their own) or follows links out of the tree (`-L`, `-follow`); files a primary names
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
// -files0-from reads starting points from a file: folders Keel cannot see.
const UNSAFE = new Set(['-delete', '-fprint', '-fprint0', '-fprintf', '-fls', '-follow', '-exec', '-execdir', '-ok', '-okdir', '-files0-from']);

const isExpressionStart = (v: string): boolean => (v.startsWith('-') && v.length > 1) || v === '(' || v === '!' || v === ')' || v === ',';

/** True when `find …` (words[0] is find) only reads files that pass `ctx.pathOk`. */
export function findIsReadOnly(words: readonly ShellWord[], ctx: ReadOnlyContext): boolean {
  let i = 1;
  // Leading options.
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.glob) break;
    const v = w.value;
    if (v === '-H' || v === '-P') continue;
    if (v === '-L') return false;
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
  let starts = 0;
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic) return false;
    if (w.glob && mayBeOption(w)) return false;
    if (!w.glob && isExpressionStart(w.value)) break;
    if (!ctx.pathOk(w.value, w)) return false;
    starts++;
  }
  // The expression.
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.glob) return false;
    const v = w.value;
    if (NO_ARG.has(v)) continue;
    if (UNSAFE.has(v)) return false;
    const arg = words[i + 1];
    if (!arg || arg.dynamic || (arg.glob && mayBeOption(arg))) return false;
    if (ONE_ARG.has(v)) {
      i++;
      continue;
    }
    const newer = /^-newer([aBcm])([aBcmt])$/.exec(v);
    if (READS_ARG.has(v) || (newer && newer[2] !== 't')) {
      if (!ctx.pathOk(arg.value, arg)) return false;
      i++;
      continue;
    }
    if (newer) {
      i++;
      continue;
    }
    return false;
  }
  return starts > 0 || ctx.pathOk('.');
}
