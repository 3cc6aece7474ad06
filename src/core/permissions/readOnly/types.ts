import type { OptionTable, ParsedArgs } from '../shell/options';
import type { ShellWord } from '../shell/words';

/**
 * What an option of a read-only command does: `safe` changes only what is printed, `read`
 * reads the file its argument names, `readList` reads each file of a colon-separated list
 * (`file -m a:b`), `unsafe` writes, runs a program, follows links out of the tree or reads
 * files Keel cannot name. Anything not in a command's table is unknown: not read-only.
 */
export type RO = 'safe' | 'read' | 'readList' | 'unsafe';

/** What the engine lends to the read-only check. */
export interface ReadOnlyContext {
  /** True when the command may read this path (as written, relative to `cwd`) without asking. */
  pathOk(value: string, word?: ShellWord): boolean;
  /** Where the command runs; null when unknown. */
  cwd: string | null;
  home: string;
}

/** How one read-only command is checked. Built once, at module load. */
export interface ReadOnlySpec {
  /** Undefined: any arguments are harmless (echo, test). */
  table?: OptionTable<RO>;
  /**
   * `none`: operands are not files (date's format, seq's numbers). `paths`: every operand is a
   * file read (`-` is stdin). `pattern-then-paths`: the first operand is a pattern unless a
   * pattern option was given (grep -e/-f).
   */
  operands: 'none' | 'paths' | 'pattern-then-paths';
  /** Options after which no operand is a pattern (grep: -e, -f, --regexp, --file). */
  patternOptions?: readonly string[];
  /** The file read when no operand names one (`.` for ls, du, find). */
  defaultPath?: (a: ParsedArgs<RO>) => string | undefined;
  /** Any further condition on the parse: a combination that writes, an operand that sets. */
  check?: (a: ParsedArgs<RO>, ctx: ReadOnlyContext) => boolean;
  /**
   * Rewrites the words before parsing (head/tail's obsolete `-5` in first place), or returns
   * null when they cannot be read-only.
   */
  prepare?: (words: ShellWord[]) => ShellWord[] | null;
}
