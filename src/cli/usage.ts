import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorMessage } from '../shared/domain/errors';

/**
 * Command lines a person got wrong. Every `keel` command reports one the same way: one line on
 * stderr, `keel <command>: <what is wrong> (see keel <command> --help)`, and exit status 2.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** `--help` or `-h` was given: the command prints its help on stdout and exits 0. */
export class HelpRequested extends Error {
  override readonly name = 'HelpRequested';
}

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/**
 * Node's parseArgs (strict), with messages for people instead of Node's. Throws HelpRequested
 * when `--help`/`-h` appears among the options (it wins over any other problem), UsageError for:
 * an unknown option, a string option without a value (or followed by another option), a value
 * given to a boolean option, a non-`multiple` option given twice, and a positional argument
 * when `positionals` is false. Everything after `--` is positional.
 */
export function parseCommandLine<O extends OptionSpecs, P extends boolean>(argv: string[], options: O, positionals: P) {
  const all: OptionSpecs = { ...options, help: { type: 'boolean', short: 'h' } };
  const { tokens } = parseArgs({ args: argv, options: all, strict: false, allowPositionals: true, tokens: true });
  const optionTokens = tokens.filter((t) => t.kind === 'option');
  if (optionTokens.some((t) => t.name === 'help')) throw new HelpRequested();
  const seen = new Set<string>();
  // A negative number is a value (`--workers -1`), judged by the option's own check: written
  // inline for the strict parse below, which would otherwise call it ambiguous.
  const args = [...argv];
  const joined = new Set<number>();
  for (const t of optionTokens) {
    const spec = all[t.name];
    if (!spec) throw new UsageError(`unknown option ${t.rawName}`);
    if (spec.type === 'string' && t.value !== undefined && !t.inlineValue && NEGATIVE_NUMBER.test(t.value)) {
      args[t.index] = `${t.rawName}=${t.value}`;
      joined.add(t.index + 1);
    } else if (spec.type === 'string' && (t.value === undefined || (!t.inlineValue && t.value.startsWith('-') && t.value !== '-'))) throw new UsageError(`${t.rawName} needs a value`);
    if (spec.type === 'boolean' && t.inlineValue) throw new UsageError(`${t.rawName} takes no value`);
    if (!spec.multiple && seen.has(t.name)) throw new UsageError(`${t.rawName} is given more than once`);
    seen.add(t.name);
  }
  const extra = tokens.find((t) => t.kind === 'positional');
  if (!positionals && extra) throw new UsageError(`unexpected argument "${extra.value}"`);
  try {
    return parseArgs({ args: args.filter((_, i) => !joined.has(i)), options, strict: true, allowPositionals: positionals });
  } catch (err) {
    // Not expected after the checks above; still a usage problem, never a crash.
    throw new UsageError(errorMessage(err));
  }
}

const NEGATIVE_NUMBER = /^-\d+(\.\d+)?$/;

/**
 * A path the person named with `option`: resolved from the current folder (never from the
 * workspace or anywhere else), and it must be there — a missing file or folder is a usage error,
 * never skipped (a `--settings` file that is not read would decide as if it said nothing).
 * `kind` is what the option needs; `'any'` only asks that something exists. Returns the absolute path.
 */
export function existingPath(option: string, value: string, kind: 'file' | 'folder' | 'any', cwd: string = process.cwd()): string {
  const path = resolve(cwd, value);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new UsageError(`${option} ${value}: no such ${kind === 'any' ? 'file or folder' : kind}${path !== value ? ` (${path})` : ''}`);
    // Something is there that this user cannot look at: the command that opens it says why.
    return path;
  }
  if (kind === 'file' && isDirectory) throw new UsageError(`${option} ${value}: is a folder, not a file`);
  if (kind === 'folder' && !isDirectory) throw new UsageError(`${option} ${value}: is not a folder`);
  return path;
}

/** Prints a usage error as its one line (prefix `keel <command>`) and returns the exit status 2. */
export function reportUsage(command: string, err: UsageError, write: (line: string) => void = (s) => process.stderr.write(s)): 2 {
  write(`keel ${command}: ${err.message} (see keel ${command} --help)\n`);
  return 2;
}
