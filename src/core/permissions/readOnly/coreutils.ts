import { defHasName, hasOption, type ParsedArgs } from '../shell/options';
import type { ShellWord } from '../shell/words';
import { GNU, roTable } from './table';
import type { AccessKind, FileUse, ReadOnlySpec, RO } from './types';

/**
 * Read-only coreutils (9.1) and shell builtins (bash 5.2), each with its full option table from
 * `--help` / `help`. Options that write (`sort -o`, `uniq IN OUT`), run programs
 * (`sort --compress-program`), set things (`date -s`, `printf -v`), follow links out of the tree
 * (`du -L`) or read a list of further files Keel cannot see (`--files0-from`) are unsafe; options
 * naming a file they read (`date -f`, `date -r`, `--random-source`) are path-checked.
 */
const P = { permute: true };
const BUILTIN = { abbreviations: false };
const HERE = (): string => '.';

/** head/tail accept an obsolete count (`-5`, `-5c`) only as the first argument; it takes no word. */
function obsoleteCount(letters: RegExp): (words: ShellWord[]) => ShellWord[] | null {
  return (words) => {
    const w = words[1];
    if (!w || w.dynamic || !/^-\d/.test(w.value)) return words;
    return letters.test(w.value) ? [words[0] as ShellWord, ...words.slice(2)] : null;
  };
}

/**
 * How ls opens a file operand (ls.c, coreutils 9.1): `-d` lists the entry itself; a symlink on
 * the command line is followed unless the format is long (`-l -g -o -n --full-time
 * --format=long|verbose`, the last format option winning) or `-F` classifies, and always with
 * `-L` or `-H`.
 */
function lsOperandKind(a: ParsedArgs<RO>): AccessKind {
  if (hasOption(a, '-d')) return 'metadata';
  if (hasOption(a, '-L', '-H', '--dereference-command-line-symlink-to-dir')) return 'read';
  let long = false;
  const is = (o: (typeof a.options)[number], ...names: string[]): boolean => names.some((n) => defHasName(o.def, n));
  for (const o of a.options) {
    if (is(o, '-l', '-g', '-o', '-n', '--full-time')) long = true;
    else if (is(o, '-1', '-C', '-x', '-m')) long = false;
    else if (is(o, '--format')) long = /^(long|verbose)$/.test(o.value ?? '');
  }
  const classify = a.options.some((o) => is(o, '-F') && !/^(never|no|none)$/.test(o.value ?? ''));
  return long || classify ? 'entry' : 'read';
}

const SUMS = roTable('sum', `b/binary c/check* /tag t/text z/zero /ignore-missing /quiet /status /strict w/warn ${GNU}`, P);

export const COREUTILS: Record<string, ReadOnlySpec> = {
  pwd: { table: roTable('pwd', 'L P /help', BUILTIN), operands: 'none' },
  cd: { table: roTable('cd', 'L P e @ /help', BUILTIN), operands: 'none' },
  printf: { table: roTable('printf', 'v=! /help', BUILTIN), operands: 'none' },
  type: { table: roTable('type', 'a f P p t /help', BUILTIN), operands: 'none' },
  command: { table: roTable('command', 'p v V /help', BUILTIN), operands: 'none', check: (a) => hasOption(a, '-v', '-V') },
  which: { table: roTable('which', 'a', BUILTIN), operands: 'none' },
  // hostname NAME and -F FILE set the name; -b sets it when unset; the other forms look names up in DNS.
  hostname: { table: roTable('hostname', 's/short h/help V/version', BUILTIN), operands: 'none', check: (a) => a.operands.length === 0 },
  whoami: { table: roTable('whoami', GNU), operands: 'none' },
  id: { table: roTable('id', `a Z/context g/group G/groups n/name r/real u/user z/zero ${GNU}`, P), operands: 'none' },
  uname: {
    table: roTable('uname', `a/all s/kernel-name n/nodename r/kernel-release v/kernel-version m/machine p/processor i/hardware-platform o/operating-system ${GNU}`, P),
    operands: 'none',
  },
  nproc: { table: roTable('nproc', `/all /ignore= ${GNU}`, P), operands: 'none' },
  basename: { table: roTable('basename', `a/multiple s/suffix= z/zero ${GNU}`, P), operands: 'none' },
  dirname: { table: roTable('dirname', `z/zero ${GNU}`, P), operands: 'none' },
  seq: { table: roTable('seq', `f/format= s/separator= w/equal-width ${GNU}`, { numericOperands: true }), operands: 'none' },
  sleep: { table: roTable('sleep', GNU, P), operands: 'none' },
  date: {
    table: roTable('date', `d/date= /debug f/file=< I/iso-8601=? /resolution R/rfc-email /rfc-3339= r/reference=< s/set=! u/utc/universal ${GNU}`, P),
    operands: 'none',
    // An operand that is not +FORMAT sets the clock (`date 0101…`).
    check: (a) => a.operands.every((x) => x.word.value.startsWith('+')),
  },
  ls: {
    table: roTable(
      'ls',
      `a/all A/almost-all /author b/escape /block-size= B/ignore-backups c C /color=? d/directory D/dired f F/classify=? /file-type /format= /full-time g
       /group-directories-first G/no-group h/human-readable /si H/dereference-command-line /dereference-command-line-symlink-to-dir /hide= /hyperlink=?
       /indicator-style= i/inode I/ignore= k/kibibytes l L/dereference m n/numeric-uid-gid N/literal o p q/hide-control-chars /show-control-chars
       Q/quote-name /quoting-style= r/reverse R/recursive s/size S /sort= /time= /time-style= t T/tabsize= u U v w/width= x X Z/context /zero 1 ${GNU}`,
      P,
    ),
    operands: 'paths',
    folderGlobs: true,
    operandKind: lsOperandKind,
    defaultPath: HERE,
    defaultKind: () => 'read',
    // Recursing while following every link lists folders outside the tree.
    check: (a) => !(hasOption(a, '-R') && hasOption(a, '-L')),
  },
  cat: { table: roTable('cat', `A/show-all b/number-nonblank e E/show-ends n/number s/squeeze-blank t T/show-tabs u v/show-nonprinting ${GNU}`, P), operands: 'paths' },
  tac: { table: roTable('tac', `b/before r/regex s/separator= ${GNU}`, P), operands: 'paths' },
  head: {
    table: roTable('head', `c/bytes= n/lines= q/quiet/silent v/verbose z/zero-terminated ${GNU}`, P),
    operands: 'paths',
    prepare: obsoleteCount(/^-\d+[bkm]?[cbklmqvz]*$/),
  },
  tail: {
    table: roTable('tail', `c/bytes= f /follow=? F n/lines= /max-unchanged-stats= /pid= q/quiet/silent /retry s/sleep-interval= v/verbose z/zero-terminated ${GNU}`, P),
    operands: 'paths',
    prepare: obsoleteCount(/^-\d+[bcl]?f?$/),
  },
  wc: { table: roTable('wc', `c/bytes m/chars l/lines /files0-from=* L/max-line-length w/words ${GNU}`, P), operands: 'paths' },
  // stat, readlink and realpath read an entry's metadata, never a file's content.
  stat: { table: roTable('stat', `L/dereference f/file-system /cached= c/format= /printf= t/terse ${GNU}`, P), operands: 'paths', operandKind: () => 'metadata' },
  du: {
    table: roTable(
      'du',
      `0/null a/all /apparent-size B/block-size= b/bytes c/total D/dereference-args d/max-depth= /files0-from=* H h/human-readable /inodes k
       L/dereference! l/count-links m P/no-dereference S/separate-dirs /si s/summarize t/threshold= /time=? /time-style= X/exclude-from=< /exclude=
       x/one-file-system ${GNU}`,
      P,
    ),
    operands: 'paths',
    defaultPath: HERE,
  },
  cut: { table: roTable('cut', `b/bytes= c/characters= d/delimiter= f/fields= n /complement s/only-delimited /output-delimiter= z/zero-terminated ${GNU}`, P), operands: 'paths' },
  nl: {
    table: roTable(
      'nl',
      `b/body-numbering= d/section-delimiter= f/footer-numbering= h/header-numbering= i/line-increment= l/join-blank-lines= n/number-format= p/no-renumber
       s/number-separator= v/starting-line-number= w/number-width= ${GNU}`,
      P,
    ),
    operands: 'paths',
  },
  uniq: {
    table: roTable('uniq', `c/count d/repeated D /all-repeated=? f/skip-fields= /group=? i/ignore-case s/skip-chars= u/unique z/zero-terminated w/check-chars= 0123456789 ${GNU}`, P),
    // uniq INPUT OUTPUT: the second operand is written (its output, as a redirection would).
    operands: (a) => {
      const [input, output, ...more] = a.operands;
      if (more.length > 0) return null;
      const uses: FileUse[] = [];
      if (input && input.word.value !== '-') uses.push({ kind: 'read', value: input.word.value, word: input.word });
      if (output && output.word.value !== '-') uses.push({ kind: 'write', value: output.word.value, word: output.word, byRule: false });
      return uses;
    },
  },
  sort: {
    table: roTable(
      'sort',
      `b/ignore-leading-blanks d/dictionary-order f/ignore-case g/general-numeric-sort i/ignore-nonprinting M/month-sort h/human-numeric-sort n/numeric-sort
       R/random-sort /random-source=< r/reverse /sort= V/version-sort /batch-size= c /check=? C /compress-program=! /debug /files0-from=* k/key= m/merge
       o/output=> s/stable S/buffer-size= t/field-separator= T/temporary-directory=> /parallel= u/unique z/zero-terminated ${GNU}`,
      P,
    ),
    operands: 'paths',
  },
  tr: { table: roTable('tr', `cC/complement d/delete s/squeeze-repeats t/truncate-set1 ${GNU}`, P), operands: 'none' },
  comm: { table: roTable('comm', `1 2 3 /check-order /nocheck-order /output-delimiter= /total z/zero-terminated ${GNU}`, P), operands: 'paths' },
  paste: { table: roTable('paste', `d/delimiters= s/serial z/zero-terminated ${GNU}`, P), operands: 'paths' },
  md5sum: { table: SUMS, operands: 'paths' },
  sha1sum: { table: SUMS, operands: 'paths' },
  sha224sum: { table: SUMS, operands: 'paths' },
  sha256sum: { table: SUMS, operands: 'paths' },
  sha384sum: { table: SUMS, operands: 'paths' },
  sha512sum: { table: SUMS, operands: 'paths' },
  cmp: { table: roTable('cmp', 'b/print-bytes i/ignore-initial= l/verbose n/bytes= s/quiet/silent /help v/version', P), operands: 'paths' },
  diff: {
    table: roTable(
      'diff',
      `/normal q/brief s/report-identical-files c C= /context=? u U= /unified=? e/ed n/rcs y/side-by-side W/width= /left-column /suppress-common-lines
       p/show-c-function F/show-function-line= /label= t/expand-tabs T/initial-tab /tabsize= /suppress-blank-empty l/paginate! r/recursive /no-dereference
       N/new-file /unidirectional-new-file /ignore-file-name-case /no-ignore-file-name-case x/exclude= X/exclude-from=< S/starting-file= /from-file=< /to-file=<
       i/ignore-case E/ignore-tab-expansion Z/ignore-trailing-space b/ignore-space-change w/ignore-all-space B/ignore-blank-lines I/ignore-matching-lines=
       a/text /strip-trailing-cr D/ifdef= /old-group-format= /new-group-format= /unchanged-group-format= /changed-group-format= /line-format=
       /old-line-format= /new-line-format= /unchanged-line-format= d/minimal /horizon-lines= /speed-large-files /color=? /palette= 0123456789 /help v/version`,
      P,
    ),
    operands: 'paths',
    // diff -r reads everything below both folders, and follows links out of them unless told not to.
    operandKind: (a) => (hasOption(a, '-r') ? 'search' : 'read'),
    known: (a) => !hasOption(a, '-r') || hasOption(a, '--no-dereference'),
  },
  realpath: {
    table: roTable('realpath', `e/canonicalize-existing m/canonicalize-missing L/logical P/physical q/quiet /relative-to=< /relative-base=< s/strip/no-symlinks z/zero ${GNU}`, P),
    operands: 'paths',
    operandKind: () => 'metadata',
  },
  readlink: {
    table: roTable('readlink', `f/canonicalize e/canonicalize-existing m/canonicalize-missing n/no-newline q/quiet s/silent v/verbose z/zero ${GNU}`, P),
    operands: 'paths',
    operandKind: () => 'metadata',
  },
};
