import type { OptionTable, ParsedArgs } from '../shell/options';
import type { ShellWord } from '../shell/words';

/**
 * What an option of a known command does: `safe` changes only what is printed, `read` reads the
 * file its argument names, `readList` reads each file of a colon-separated list (`file -m a:b`),
 * `write` writes the file its argument names as a side output (`sort -o F`: like a redirection,
 * a Bash rule for the program does not cover it), `target` is read by the command's own operand
 * function (`cp -t DIR`), `unsafe` does something else that is not reading (runs a program,
 * changes the system), `opaque` reads or writes files Keel cannot name (`--files0-from`,
 * `grep -R` following links out of the tree, `tree -R`). Anything not in a command's table is
 * unknown.
 */
export type RO = 'safe' | 'read' | 'readList' | 'write' | 'target' | 'unsafe' | 'opaque';

/**
 * What a command does to one file. `read`: its content (a folder's: its names); `search`: the
 * content of everything below a folder; `metadata`: the entry itself (stat, `ls -d`), not
 * following a last link; `entry`: a symlink as `metadata`, anything else as `read` (`ls -l`
 * does not follow a link it is given); `write`:
 * creates, changes or removes it; `writeTree`: the same for it and everything below it (`rm -r`,
 * `mv DIR`, `cp -r SRC DEST` with `from` naming the tree whose names land below it);
 * `writeBelow`: writes files Keel cannot name below a folder (an archive extracted there).
 */
export type AccessKind = 'read' | 'search' | 'metadata' | 'entry' | 'write' | 'writeTree' | 'writeBelow';

/** One file a command opens, as its word says it (relative to the command's directory). */
export interface FileUse {
  kind: AccessKind;
  value: string;
  word?: ShellWord;
  /** For `writeTree`: the folder (as written) whose entries are copied or moved below `value`. */
  from?: string;
  /**
   * For a write: `value` names the source (glob allowed) and what is written is
   * `into/basename(source)` for each file the source names (cp SOURCE... DIR); with `writeTree`,
   * each source is also the tree whose names land there.
   */
  into?: string;
  /**
   * `rules`: only Read deny and ask rules apply, not the workspace boundary (git may show any
   * tracked file of a repository whose top is above the workspace; the command's own rule
   * allowed that).
   */
  scope?: 'rules';
  /**
   * For a write: the command exists to make it (cp's destination, touch's file, `sed -i`'s file),
   * so a Bash rule for the command covers it inside the workspace. Otherwise (an output named by
   * an option, `sed`'s `w` command, pytest's `--basetemp`) it is like a redirection: an Edit rule
   * or acceptEdits must cover it.
   */
  byRule?: boolean;
}

/** What the engine lends to the command checks. */
export interface ReadOnlyContext {
  /**
   * Reports a file the command opens; returns true when that use keeps the command read-only
   * without asking (a read or search of a readable place, metadata). Every use is reported, so
   * rules apply to the files of a command a Bash rule allowed too.
   */
  use(u: FileUse): boolean;
  /** True when `value` (as `use` takes it) names something that exists now. */
  exists(value: string): boolean;
  /** Where the command runs; null when unknown. */
  cwd: string | null;
  home: string;
}

/**
 * What an operand function finds: the files used; null when they cannot be known (the command's
 * files are then incomplete); `opaque` when the command does something Keel cannot check at all
 * (sed's `e`: it asks, as an unparsed inline script would).
 */
export type OperandUses = FileUse[] | null | { opaque: string };

/** What Keel knows about one command's files. */
export interface CommandVerdict {
  /** It only reads, and every file it reads may be read without asking. */
  readOnly: boolean;
  /**
   * Every file it opens was reported through `use`. False when an option is unknown, a word is
   * computed where a file or an option could stand, or the form is one Keel does not model:
   * a Bash rule for it then cannot vouch for its files (it asks).
   */
  complete: boolean;
  /** Why no rule can allow it (it runs something Keel cannot check), if so. */
  opaque?: string;
}

/** How one known command is checked. Built once, at module load. */
export interface ReadOnlySpec {
  /** Undefined: any arguments are harmless (echo, test). */
  table?: OptionTable<RO>;
  /**
   * `none`: operands are not files (date's format, seq's numbers). `paths`: every operand is a
   * file read (`-` is stdin). `pattern-then-paths`: the first operand is a pattern unless a
   * pattern option was given (grep -e/-f). A function: the command's own reading of its
   * operands and `target` options (cp's sources and destination).
   */
  operands: 'none' | 'paths' | 'pattern-then-paths' | ((a: ParsedArgs<RO>, ctx: ReadOnlyContext) => OperandUses);
  /**
   * A glob ending in a slash (`ls -d *` with a slash after the star) expands to folder names
   * ending in a slash, which can only become an option cluster whose last letter takes "/" as
   * its value: harmless for this program (ls).
   */
  folderGlobs?: boolean;
  /**
   * Only its read-only form is modelled (`node --version`): any other use of the program is a
   * program Keel does not model (its files are not known, and a rule for it decides).
   */
  onlyReadOnly?: boolean;
  /** False when this parse opens files Keel cannot name (`diff -r` following links). */
  known?: (a: ParsedArgs<RO>) => boolean;
  /** Options after which no operand is a pattern (grep: -e, -f, --regexp, --file). */
  patternOptions?: readonly string[];
  /** The file read when no operand names one (`.` for ls, du, find). */
  defaultPath?: (a: ParsedArgs<RO>) => string | undefined;
  /** How the default path is read (default `read`; `search` for grep -r, rg, du). */
  defaultKind?: (a: ParsedArgs<RO>) => AccessKind;
  /** How an operand is read (default `read`): `search` for a recursive reader, `metadata` for stat. */
  operandKind?: (a: ParsedArgs<RO>) => AccessKind;
  /**
   * Any further condition for read-only: a combination that writes or runs, an operand that
   * sets. False makes the command not read-only; its files are still reported.
   */
  check?: (a: ParsedArgs<RO>, ctx: ReadOnlyContext) => boolean;
  /**
   * Rewrites the words before parsing (head/tail's obsolete `-5` in first place), or returns
   * null when they cannot be read-only.
   */
  prepare?: (words: ShellWord[]) => ShellWord[] | null;
}
