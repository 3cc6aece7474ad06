import type { ParsedArgs } from '../shell/options';
import type { ShellWord } from '../shell/words';
import { GNU, roTable } from './table';
import type { FileUse, ReadOnlySpec, RO } from './types';

/**
 * Commands that turn data into other data (coreutils 9.1, xxd 2022-01-14): they read their
 * operands; xxd's second operand and dd's `of=` are written.
 */
const P = { permute: true };

const BASE = `d/decode i/ignore-garbage w/wrap= ${GNU}`;
const BASENC = `/base64 /base64url /base32 /base32hex /base16 /base2msbf /base2lsbf /z85 ${BASE}`;

/** dd's operands (dd.c): `if=` is read, `of=` written; any other key is unknown. */
const DD_KEYS = new Set(['bs', 'cbs', 'conv', 'count', 'ibs', 'iflag', 'obs', 'oflag', 'seek', 'oseek', 'skip', 'iseek', 'status']);

function ddUses(a: ParsedArgs<RO>): FileUse[] | null {
  const uses: FileUse[] = [];
  for (const x of a.operands) {
    const m = /^([a-z]+)=([^]*)$/.exec(x.word.value);
    if (!m) return null;
    const [, key, value = ''] = m;
    if (key === 'if') uses.push({ kind: 'read', value, word: x.word });
    else if (key === 'of') uses.push({ kind: 'write', value, word: x.word, byRule: true });
    else if (!DD_KEYS.has(key as string)) return null;
  }
  return uses;
}

/**
 * xxd's options that take a value, with the spellings after which the value is the next word
 * (xxd.c compares them with strncmp: `-cols 8` and `-c 8` take the next word, `-c8` and `-co`
 * carry their value).
 */
const XXD_VALUES: Record<string, string[]> = { c: ['ols'], n: ['ame'], g: ['roup'], o: ['ffset'], s: ['kip', 'eek'], l: ['en'] };
const XXD_FLAGS = new Set(['a', 'b', 'e', 'u', 'p', 'i', 'C', 'd', 'r', 'E', 't', 'v']);

/**
 * xxd reads its own options (xxd.c): the first two characters of a word decide (`-ps`, `-cols`,
 * `--revert` alike), a value is attached or, after the long spelling or alone, the next word.
 * Rewritten into getopt form for the table; an option it does not know ends in its usage text.
 */
function xxdWords(words: ShellWord[]): ShellWord[] | null {
  const out: ShellWord[] = [words[0] as ShellWord];
  const word = (value: string, from: ShellWord): ShellWord => ({ ...from, value, fields: [value] });
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.glob) return null;
    const v = w.value;
    if (v === '--') {
      i++;
      break;
    }
    if (!v.startsWith('-') || v === '-') break;
    const pp = v.startsWith('--') && v.length > 2 ? v.slice(1) : v;
    const key = pp[1] as string;
    const rest = pp.slice(2);
    if (key === 'c' && rest.startsWith('apitalize')) {
      out.push(word('-C', w));
      continue;
    }
    const long = XXD_VALUES[key];
    if (long !== undefined) {
      out.push(word(`-${key}`, w));
      if (rest !== '' && !long.some((l) => rest.startsWith(l))) out.push(word(rest, w));
      else {
        const next = words[++i];
        if (!next) return null;
        out.push(next);
      }
      continue;
    }
    if (!XXD_FLAGS.has(key)) return null;
    out.push(word(`-${key}`, w));
  }
  out.push(...words.slice(i));
  return out;
}

export const DATA_TOOLS: Record<string, ReadOnlySpec> = {
  base64: { table: roTable('base64', BASE, P), operands: 'paths' },
  base32: { table: roTable('base32', BASE, P), operands: 'paths' },
  basenc: { table: roTable('basenc', BASENC, P), operands: 'paths' },
  od: {
    table: roTable('od', `A/address-radix= /endian= j/skip-bytes= N/read-bytes= S= /strings=? t/format= v/output-duplicates w/width=? /traditional a b c d f i l o s x B D e F H I L O X ${GNU}`, P),
    operands: 'paths',
  },
  numfmt: {
    table: roTable(
      'numfmt',
      `d/delimiter= /field= /format= /from= /from-unit= /grouping /header=? /invalid= /padding= /round= /suffix= /to= /to-unit= z/zero-terminated /debug ${GNU}`,
      P,
    ),
    operands: 'none',
  },
  // df reports the file system holding each operand: metadata, nothing of a file's content.
  df: {
    table: roTable('df', `a/all B/block-size= h/human-readable H/si i/inodes k l/local m /no-sync /output=? P/portability /sync /total t/type= F= T/print-type x/exclude-type= v ${GNU}`, P),
    operands: 'paths',
    operandKind: () => 'metadata',
  },
  xxd: {
    table: roTable('xxd', 'a b e u p i C d r E t v c= n= g= o= s= l=', { abbreviations: false }),
    prepare: xxdWords,
    // xxd [options] [infile [outfile]]: the output file is what `xxd -r` exists to write.
    operands: (a) => {
      const [input, output, ...more] = a.operands;
      if (more.length > 0) return [];
      const uses: FileUse[] = [];
      if (input && input.word.value !== '-') uses.push({ kind: 'read', value: input.word.value, word: input.word });
      if (output && output.word.value !== '-') uses.push({ kind: 'write', value: output.word.value, word: output.word, byRule: true });
      return uses;
    },
  },
  dd: { table: roTable('dd', GNU, { abbreviations: false }), operands: ddUses },
};
