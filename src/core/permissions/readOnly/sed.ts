import { basename, dirname } from 'node:path';
import { defHasName, hasOption, type ParsedArgs } from '../shell/options';
import { GNU, roTable } from './table';
import type { FileUse, OperandUses, ReadOnlySpec, RO } from './types';

/**
 * GNU sed 4.9. Its script is code: `r`/`R` read a file, `w`/`W` and the `w` flag of `s` write
 * one, `e` and the `e` flag of `s` run a shell command. A script is parsed (below) to find them;
 * one Keel cannot parse, a script file (`-f`) or any `e` makes the command opaque (it asks).
 * Operands are read; with `-i` they are also written (what `sed -i` exists to do), as is the
 * backup `-iSUFFIX` leaves (`*` in the suffix stands for the file's name; a `/` puts it in
 * another folder).
 */
const SED_TABLE = roTable(
  'sed',
  `n/quiet/silent /debug e/expression=@ f/file=* /follow-symlinks i/in-place=? l/line-length= /posix Er/regexp-extended s/separate /sandbox u/unbuffered
   z/null-data/zero-terminated b/binary ${GNU}`,
  { permute: true },
);

/** What a sed script does besides editing its stream. */
export interface SedEffects {
  reads: string[];
  writes: string[];
  /** It runs shell commands (`e`, `s///e`). */
  runs: boolean;
}

const NO_ARGS = new Set(['=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F']);

/**
 * Parses a sed script (compile.c's grammar: addresses, `!`, blocks, one-line `a`/`i`/`c` text,
 * labels, `s` and `y` with any delimiter, file names to the end of the line) and lists the
 * files it reads and writes and whether it runs commands. Null when it is not a script Keel can
 * read; never throws.
 */
export function sedEffects(src: string): SedEffects | null {
  const out: SedEffects = { reads: [], writes: [], runs: false };
  let i = 0;
  const n = src.length;
  const peek = (): string => src[i] ?? '';
  const skipSpace = (): void => {
    while (i < n && (src[i] === ' ' || src[i] === '\t')) i++;
  };
  const toLineEnd = (): string => {
    const start = i;
    while (i < n && src[i] !== '\n') i++;
    return src.slice(start, i);
  };
  const toSeparator = (): void => {
    while (i < n && src[i] !== '\n' && src[i] !== ';') i++;
  };
  /** Up to the unescaped delimiter `d`; false when the script ends first. */
  const delimited = (d: string): boolean => {
    while (i < n) {
      const c = src[i++] as string;
      if (c === '\\') i++;
      else if (c === d) return true;
      else if (c === '\n' && d !== '\n') return false;
    }
    return false;
  };
  const number = (): void => {
    while (i < n && /[0-9]/.test(src[i] as string)) i++;
  };
  const address = (): boolean => {
    const c = peek();
    if (/[0-9]/.test(c)) {
      number();
      if (peek() === '~') {
        i++;
        number();
      }
    } else if (c === '$') i++;
    else if (c === '/' || c === '\\') {
      let d = '/';
      if (c === '\\') {
        i++;
        d = peek();
        if (d === '' || d === '\n' || d === '\\') return false;
      }
      i++;
      if (!delimited(d)) return false;
      while (peek() === 'I' || peek() === 'M') i++;
    } else return true;
    return true;
  };
  while (i < n) {
    while (i < n && /[\s;]/.test(src[i] as string)) i++;
    if (i >= n) break;
    if (peek() === '#') {
      toLineEnd();
      continue;
    }
    if (!address()) return null;
    skipSpace();
    if (peek() === ',') {
      i++;
      skipSpace();
      if (peek() === '+' || peek() === '~') {
        i++;
        number();
      } else if (!address()) return null;
    }
    skipSpace();
    while (peek() === '!') {
      i++;
      skipSpace();
    }
    const cmd = src[i++] ?? '';
    if (cmd === '{' || cmd === '}' || NO_ARGS.has(cmd)) continue;
    switch (cmd) {
      case 'l':
      case 'L':
      case 'q':
      case 'Q':
        skipSpace();
        number();
        break;
      case 'a':
      case 'i':
      case 'c':
        // Text to the end of the line, a backslash at the end continuing it.
        while (i < n) {
          const ch = src[i++];
          if (ch === '\\') i++;
          else if (ch === '\n') break;
        }
        break;
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        toSeparator();
        break;
      case 'r':
      case 'R':
      case 'w':
      case 'W': {
        skipSpace();
        const file = toLineEnd();
        if (file === '') return null;
        (cmd === 'r' || cmd === 'R' ? out.reads : out.writes).push(file);
        break;
      }
      case 'e':
        out.runs = true;
        toLineEnd();
        break;
      case 's':
      case 'y': {
        const d = src[i++] ?? '';
        if (d === '' || d === '\n' || d === '\\') return null;
        if (!delimited(d) || !delimited(d)) return null;
        if (cmd === 'y') break;
        // Flags (blanks between them allowed): g p e i I m M and a number; `w FILE` ends the command.
        while (i < n && /[gpeiImM0-9 \t]/.test(src[i] as string)) {
          if (src[i] === 'e') out.runs = true;
          i++;
        }
        if (peek() === 'w') {
          i++;
          skipSpace();
          const file = toLineEnd();
          if (file === '') return null;
          out.writes.push(file);
        }
        break;
      }
      default:
        return null;
    }
  }
  return out;
}

/** The backup `sed -iSUFFIX FILE` writes (sed's get_backup_file_name), or undefined. */
function backupOf(file: string, suffix: string): string | undefined {
  if (suffix === '') return undefined;
  const name = suffix.includes('*') ? suffix.split('*').join(basename(file)) : `${basename(file)}${suffix}`;
  if (name.includes('/')) return name;
  const dir = dirname(file);
  return dir === '.' ? name : `${dir}/${name}`;
}

function sedUses(a: ParsedArgs<RO>): OperandUses {
  const scripts = a.options.filter((o) => defHasName(o.def, '-e'));
  let operands = a.operands;
  const texts: string[] = [];
  if (scripts.length > 0) {
    for (const s of scripts) {
      if (s.valueWord?.dynamic) return null;
      texts.push(s.value ?? '');
    }
  } else {
    const first = operands[0];
    if (!first) return [];
    if (first.word.dynamic) return null;
    texts.push(first.word.value);
    operands = operands.slice(1);
  }
  const uses: FileUse[] = [];
  for (const t of texts) {
    const fx = sedEffects(t);
    if (!fx) return { opaque: 'a sed script Keel cannot read' };
    if (fx.runs) return { opaque: 'a sed script that runs shell commands (e)' };
    for (const r of fx.reads) uses.push({ kind: 'read', value: r });
    for (const w of fx.writes) uses.push({ kind: 'write', value: w, byRule: false });
  }
  const inPlace = a.options.filter((o) => defHasName(o.def, '-i')).pop();
  for (const x of operands) {
    if (x.word.value === '-' && !inPlace) continue;
    uses.push({ kind: 'read', value: x.word.value, word: x.word });
    if (!inPlace) continue;
    uses.push({ kind: 'write', value: x.word.value, word: x.word, byRule: true });
    const backup = backupOf(x.word.value, inPlace.value ?? '');
    if (backup) uses.push({ kind: 'write', value: backup, byRule: true });
  }
  return uses;
}

export const SED: ReadOnlySpec = {
  table: SED_TABLE,
  operands: sedUses,
  // -i edits its files; a script that only prints is read-only.
  check: (a) => !hasOption(a, '-i'),
};
