import { defHasName, hasOption, type ParsedArgs } from '../shell/options';
import { roTable } from './table';
import type { ReadOnlySpec, RO } from './types';

/**
 * Read-only search and inspection tools: grep 3.8, ripgrep 13, file 5.44, tree 2.1. Options that
 * run programs (`rg --pre`, `rg -z`, `file -z`), write files Keel cannot name (`file -C`,
 * `tree -R`) or follow links out of the tree while recursing (`grep -R`, `rg -L`, `tree -l`) are
 * unsafe; `tree -o FILE` writes FILE; options naming files they read (`grep -f`,
 * `rg --ignore-file`, `file -m`, `tree --hintro`) are path-checked. A recursive grep and rg read
 * everything below their folders (a search). find has its own grammar (find.ts).
 */
const GREP = roTable(
  'grep',
  `E/extended-regexp F/fixed-strings G/basic-regexp P/perl-regexp e/regexp= f/file=< i/ignore-case y /no-ignore-case w/word-regexp x/line-regexp
   z/null-data s/no-messages v/invert-match V/version /help m/max-count= b/byte-offset n/line-number /line-buffered H/with-filename h/no-filename
   /label= o/only-matching q/quiet/silent /binary-files= a/text I d/directories= D/devices= r/recursive R/dereference-recursive! /include= /exclude=
   /exclude-from=< /exclude-dir= L/files-without-match l/files-with-matches c/count T/initial-tab Z/null B/before-context= A/after-context= C/context=
   /group-separator= /no-group-separator /color/colour=? U/binary 0123456789`,
  { permute: true },
);

const recursive = (a: ParsedArgs<RO>): boolean => hasOption(a, '-r', '-R') || a.options.some((o) => defHasName(o.def, '-d') && o.value === 'recurse');

const grep: ReadOnlySpec = {
  table: GREP,
  operands: 'pattern-then-paths',
  patternOptions: ['-e', '-f'],
  // grep -r reads everything below a folder operand; without a file it searches the working directory.
  operandKind: (a) => (recursive(a) ? 'search' : 'read'),
  defaultPath: (a) => (recursive(a) ? '.' : undefined),
};

const RG = roTable(
  'rg',
  `A/after-context= /auto-hybrid-regex B/before-context= /binary /block-buffered b/byte-offset s/case-sensitive /color= /colors= /column C/context=
   /context-separator= c/count /count-matches /crlf /debug /trace /dfa-size-limit= E/encoding= /engine= /field-context-separator= /field-match-separator=
   f/file=< /files l/files-with-matches /files-without-match F/fixed-strings L/follow! g/glob= /glob-case-insensitive h/help /heading ./hidden /iglob=
   i/ignore-case /ignore-file=< /ignore-file-case-insensitive /include-zero v/invert-match /json /line-buffered n/line-number x/line-regexp
   M/max-columns= /max-columns-preview m/max-count= /max-depth= /max-filesize= /mmap U/multiline /multiline-dotall /no-config I/no-filename
   /no-heading /no-ignore /no-ignore-dot /no-ignore-exclude /no-ignore-files /no-ignore-global /no-ignore-messages /no-ignore-parent /no-ignore-vcs
   N/no-line-number /no-messages /no-mmap /no-pcre2-unicode /no-require-git /no-unicode 0/null /null-data /one-file-system o/only-matching /passthru
   /path-separator= P/pcre2 /pcre2-version /pre=! /pre-glob=! p/pretty q/quiet /regex-size-limit= e/regexp= r/replace= z/search-zip! S/smart-case
   /sort= /sortr= /stats a/text j/threads= /trim t/type= /type-add= /type-clear= /type-list T/type-not= u/unrestricted V/version /vimgrep
   H/with-filename w/word-regexp /no-hidden /no-follow /no-text /no-search-zip /no-pre /no-context-separator /no-column /no-crlf /no-multiline
   /no-multiline-dotall /no-fixed-strings /no-glob-case-insensitive /no-stats /no-trim /no-auto-hybrid-regex /no-pcre2 /no-one-file-system
   /no-encoding /no-binary /no-ignore-file-case-insensitive /no-max-columns-preview /no-json /no-sort-files /sort-files /no-line-buffered
   /no-block-buffered`,
  { permute: true, abbreviations: false },
);

const rg: ReadOnlySpec = {
  table: RG,
  operands: 'pattern-then-paths',
  patternOptions: ['-e', '-f', '--files', '--type-list'],
  // ripgrep reads everything below a folder (ignore files are no protection: -uu, a .ignore).
  // `--files` and `--type-list` print names only.
  operandKind: (a) => (hasOption(a, '--files', '--type-list') ? 'read' : 'search'),
  defaultPath: () => '.',
};

const FILE = roTable(
  'file',
  `b/brief C/compile! c/checking-printout d E e/exclude= /exclude-quiet= /extension F/separator= f/files-from=! h/no-dereference i/mime /apple /mime-type
   /mime-encoding k/keep-going l/list L/dereference m/magic-file=<: N/no-pad n/no-buffer 0/print0 p/preserve-date! P/parameter= r/raw s/special-files
   S/no-sandbox! v/version z/uncompress! Z/uncompress-noreport! /help`,
  { permute: true },
);

// tree parses its own way: no abbreviations, and an argument is always the next word, even
// inside a cluster (`-Lo 2 out` is -L 2 -o out).
const TREE = roTable(
  'tree',
  `a d l! f x L= R! P= I= /gitignore /gitfile=< /ignore-case /matchdirs /metafirst /prune /info /infofile=< /noreport /charset= /filelimit= o=> q N Q p u g
   s h /si /du D /timefmt= F /inodes /device v t c U r /dirsfirst /filesfirst /sort= i A S n C X J H= T= /nolinks /hintro=< /houtro=< /fromfile /fflinks
   /version /help`,
  { permute: true, abbreviations: false, clusterArgs: 'next-word' },
);

export const SEARCH: Record<string, ReadOnlySpec> = {
  grep,
  egrep: grep,
  fgrep: grep,
  rg,
  file: { table: FILE, operands: 'paths' },
  tree: { table: TREE, operands: 'paths', defaultPath: (a) => (hasOption(a, '--fromfile') ? undefined : '.') },
};

