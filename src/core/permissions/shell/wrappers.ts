import { isDangerousVariable } from './analyze';
import { splitEnvString } from './envSplit';
import { isLiteral, optionArgWord, optionTable, parseOptions, type OptionDef, type OptionTable, type ParsedArgs } from './options';
import type { ShellWord } from './words';

/**
 * Programs that run another command (`timeout 5 cmd`, `env -u X cmd`, `xargs cmd`…), parsed by
 * their real option tables (checked against the programs on Debian 12: coreutils 9.1, util-linux
 * 2.38, findutils 4.9, procps-ng 4.0.2, GNU time 1.9, sudo 1.9.13, bash 5.2). Whatever a table does
 * not cover (an unknown or ambiguous option, a computed word among the wrapper's own arguments)
 * is opaque: the command asks. Pure; tables are built once.
 */

/** What an option of a wrapper does. */
type W =
  | 'plain' // changes nothing Keel checks
  | 'info' // prints something and runs no command (--help, --version, sudo -l)
  | 'target' // acts on existing processes instead of running a command (taskset -p)
  | 'chdir' // the command runs in another directory (env -C, sudo -D)
  | 'split' // env -S: the argument is split into more arguments
  | 'opaque' // runs something Keel cannot check (sudo -e, -s, -i, -R; doas -s)
  | 'readFile' // reads the file named by the argument (xargs -a)
  | 'writeFile' // writes the file named by the argument (time -o)
  | 'replace' // xargs -I/-i: the replacement string
  | 'exec' // watch -x: run the command directly, not through sh -c
  | 'slotVar' // xargs --process-slot-var: sets a variable for the command
  | 'hostOrHelp'; // sudo -h: help alone, a host with an attached argument

/** How one wrapper invocation runs its command. */
export interface Unwrapped {
  /** The words after splitting (`env -S` adds words); indexes below refer to these. */
  words: ShellWord[];
  /** Index of the command it runs; undefined when it runs none (then its own form must be allowed). */
  innerAt?: number;
  /** The wrapper's own form must be allowed too (sudo). */
  alsoSelf?: boolean;
  /** A script the wrapper runs with `sh -c` (watch, flock -c). */
  script?: ShellWord[];
  /** More arguments are appended at run time (xargs). */
  openEnded?: boolean;
  /** The command run when none is named (xargs runs `echo`). */
  defaultCommand?: string;
  /** Words holding this string are replaced at run time (xargs -I). */
  replace?: string;
  /** The directory the command runs in, as written (relative to the current one). */
  chdir?: ShellWord;
  /** Variables set for the command. */
  assigns: string[];
  /** Why the command cannot be checked, if so. */
  opaque?: string;
  risky?: string;
  /** Files the wrapper itself reads or writes (flock creates its lock file). */
  reads: ShellWord[];
  writes: ShellWord[];
}

const HELP: OptionDef<W> = { long: 'help', effect: 'info' };
const VERSION: OptionDef<W> = { long: 'version', effect: 'info' };
const UL_HELP: OptionDef<W> = { short: 'h', long: 'help', effect: 'info' };
const UL_VERSION: OptionDef<W> = { short: 'V', long: 'version', effect: 'info' };
const o = (short: string | undefined, long: string | string[] | undefined, effect: W = 'plain', arg: OptionDef<W>['arg'] = 'none'): OptionDef<W> => ({
  ...(short ? { short } : {}),
  ...(long ? { long } : {}),
  effect,
  arg,
});
const builtin = { abbreviations: false };

const T = {
  timeout: optionTable('timeout', [
    o(undefined, 'preserve-status'),
    o(undefined, 'foreground'),
    o('k', 'kill-after', 'plain', 'required'),
    o('s', 'signal', 'plain', 'required'),
    o('v', 'verbose'),
    HELP,
    VERSION,
  ]),
  nice: optionTable('nice', [o('n', 'adjustment', 'plain', 'required'), HELP, VERSION]),
  nohup: optionTable('nohup', [HELP, VERSION]),
  stdbuf: optionTable('stdbuf', [o('i', 'input', 'plain', 'required'), o('o', 'output', 'plain', 'required'), o('e', 'error', 'plain', 'required'), HELP, VERSION]),
  setsid: optionTable('setsid', [o('c', 'ctty'), o('f', 'fork'), o('w', 'wait'), UL_HELP, UL_VERSION]),
  taskset: optionTable('taskset', [o('a', 'all-tasks'), o('p', 'pid', 'target'), o('c', 'cpu-list'), UL_HELP, UL_VERSION]),
  chrt: optionTable('chrt', [
    o('b', 'batch'), o('d', 'deadline'), o('f', 'fifo'), o('i', 'idle'), o('o', 'other'), o('r', 'rr'), o('R', 'reset-on-fork'),
    o('T', 'sched-runtime', 'plain', 'required'), o('P', 'sched-period', 'plain', 'required'), o('D', 'sched-deadline', 'plain', 'required'),
    o('a', 'all-tasks'), o('m', 'max', 'info'), o('p', 'pid', 'target'), o('v', 'verbose'), UL_HELP, UL_VERSION,
  ]),
  ionice: optionTable('ionice', [
    o('c', 'class', 'plain', 'required'), o('n', 'classdata', 'plain', 'required'), o('p', 'pid', 'target', 'required'), o('P', 'pgid', 'target', 'required'),
    o('t', 'ignore'), o('u', 'uid', 'target', 'required'), UL_HELP, UL_VERSION,
  ]),
  time: optionTable('time', [
    o('a', 'append'),
    o('f', 'format', 'plain', 'required'),
    o('o', 'output', 'writeFile', 'required'),
    o('p', 'portability'),
    o('q', 'quiet'),
    o('v', 'verbose'),
    UL_HELP,
    UL_VERSION,
  ]),
  exec: optionTable('exec', [o('c', undefined), o('l', undefined), o('a', undefined, 'plain', 'required'), HELP], builtin),
  command: optionTable('command', [o('p', undefined), o('v', undefined, 'info'), o('V', undefined, 'info'), HELP], builtin),
  builtin: optionTable('builtin', [HELP], builtin),
  env: optionTable('env', [
    o('i', 'ignore-environment'), o('0', 'null'), o('u', 'unset', 'plain', 'required'), o('C', 'chdir', 'chdir', 'required'), o('S', 'split-string', 'split', 'required'),
    o(undefined, 'block-signal', 'plain', 'optional'), o(undefined, 'default-signal', 'plain', 'optional'), o(undefined, 'ignore-signal', 'plain', 'optional'),
    o(undefined, 'list-signal-handling'), o('v', 'debug'), HELP, VERSION,
  ]),
  sudo: optionTable('sudo', [
    o('A', 'askpass'), o('b', 'background'), o('B', 'bell'), o('C', 'close-from', 'plain', 'required'), o('D', 'chdir', 'chdir', 'required'), o('E', undefined),
    o(undefined, 'preserve-env', 'plain', 'optional'), o('e', 'edit', 'opaque'), o('g', 'group', 'plain', 'required'), o('H', 'set-home'),
    o('h', undefined, 'hostOrHelp', 'optional'), o(undefined, 'help', 'info'), o(undefined, 'host', 'plain', 'required'), o('i', 'login', 'opaque'),
    o('K', 'remove-timestamp', 'info'), o('k', 'reset-timestamp'), o('l', 'list', 'info'), o('n', 'non-interactive'), o('P', 'preserve-groups'),
    o('p', 'prompt', 'plain', 'required'), o('R', 'chroot', 'opaque', 'required'), o('r', 'role', 'plain', 'required'), o('S', 'stdin'), o('s', 'shell', 'opaque'),
    o('t', 'type', 'plain', 'required'), o('T', 'command-timeout', 'plain', 'required'), o('U', 'other-user', 'plain', 'required'), o('u', 'user', 'plain', 'required'),
    o('V', 'version', 'info'), o('v', 'validate', 'info'),
  ]),
  doas: optionTable('doas', [o('C', undefined, 'info', 'required'), o('L', undefined, 'info'), o('n', undefined), o('s', undefined, 'opaque'), o('u', undefined, 'plain', 'required')], builtin),
  xargs: optionTable('xargs', [
    o('0', 'null'), o('a', 'arg-file', 'readFile', 'required'), o('d', 'delimiter', 'plain', 'required'), o('E', undefined, 'plain', 'required'), o('e', 'eof', 'plain', 'optional'),
    o('I', undefined, 'replace', 'required'), o('i', 'replace', 'replace', 'optional'), o('L', undefined, 'plain', 'required'), o('l', 'max-lines', 'plain', 'optional'),
    o('n', 'max-args', 'plain', 'required'), o('o', 'open-tty'), o('P', 'max-procs', 'plain', 'required'), o('p', 'interactive'),
    o(undefined, 'process-slot-var', 'slotVar', 'required'), o('r', 'no-run-if-empty'), o('s', 'max-chars', 'plain', 'required'), o(undefined, 'show-limits'),
    o('t', 'verbose'), o('x', 'exit'), HELP, VERSION,
  ]),
  watch: optionTable('watch', [
    o('b', 'beep'), o('c', 'color'), o('d', 'differences', 'plain', 'optional'), o('e', 'errexit'), o('g', 'chgexit'), o('q', 'equexit', 'plain', 'required'),
    o('n', 'interval', 'plain', 'required'), o('p', 'precise'), o('t', 'no-title'), o('w', 'no-wrap'), o('x', 'exec', 'exec'), o('h', 'help', 'info'), o('v', 'version', 'info'),
  ]),
  flock: optionTable('flock', [
    o('s', 'shared'), o('x', 'exclusive'), o('e', undefined), o('u', 'unlock'), o('n', ['nonblock', 'nb']), o('w', ['timeout', 'wait'], 'plain', 'required'),
    o('E', 'conflict-exit-code', 'plain', 'required'), o('o', 'close'), o('F', 'no-fork'), o(undefined, 'verbose'), UL_HELP, UL_VERSION,
  ]),
} satisfies Record<string, OptionTable<W>>;

/** The wrappers Keel unwraps (by command name after `/usr/bin/` is dropped). */
export const WRAPPERS: ReadonlySet<string> = new Set([...Object.keys(T), 'coproc']);

const base = (words: ShellWord[]): Unwrapped => ({ words, assigns: [], reads: [], writes: [] });
const opaque = (words: ShellWord[], reason: string): Unwrapped => ({ ...base(words), opaque: reason });

/** Parses the wrapper's own options; an unknown option or a computed word among them is opaque. */
function own(table: OptionTable<W>, words: ShellWord[]): ParsedArgs<W> | string {
  const r = parseOptions(table, words, 1);
  if (!r.ok) return r.reason;
  for (let k = 1; k < r.args.end; k++) {
    const w = words[k] as ShellWord;
    if (!isLiteral(w)) return `${table.program} with arguments known only at run time (${w.text})`;
  }
  return r.args;
}

const has = (a: ParsedArgs<W>, e: W): boolean => a.options.some((x) => x.effect === e);

/**
 * How `words` (a wrapper named `name`, words[0] being the wrapper) runs its command, or undefined
 * when `name` is not a wrapper. Never throws.
 */
export function unwrap(name: string, words: ShellWord[]): Unwrapped | undefined {
  const u = unwrapWords(name, words);
  if (!u || u.opaque || u.innerAt === undefined) return u;
  // A computed word before the command (`timeout 5$x cmd`) may split into more words and move
  // where the command starts.
  const computed = u.words.slice(1, u.innerAt).find((w) => !isLiteral(w));
  return computed ? opaque(u.words, `${name} with arguments known only at run time (${computed.text})`) : u;
}

function unwrapWords(name: string, words: ShellWord[]): Unwrapped | undefined {
  switch (name) {
    case 'env':
      return unwrapEnv(words);
    case 'nice':
      return unwrapNice(words);
    case 'coproc':
      return { ...base(words), innerAt: 1 };
    default:
      break;
  }
  const table = Object.hasOwn(T, name) ? (T as Record<string, OptionTable<W>>)[name] : undefined;
  if (!table) return undefined;
  const a = own(table, words);
  if (typeof a === 'string') return opaque(words, a);
  const out = base(words);
  const ops = a.operands;
  const firstOp = ops[0];
  const self = (): Unwrapped => out;
  if (has(a, 'info') || a.options.some((x) => x.effect === 'hostOrHelp' && x.value === undefined)) return self();
  if (has(a, 'opaque')) return opaque(words, `${name} ${a.options.find((x) => x.effect === 'opaque')?.name ?? ''} runs something Keel cannot check`);
  if (has(a, 'target')) return self();
  for (const x of a.options) {
    const arg = optionArgWord(x);
    if (!arg) continue;
    if (x.effect === 'chdir') out.chdir = arg;
    if (x.effect === 'writeFile') out.writes.push(arg);
    if (x.effect === 'readFile') out.reads.push(arg);
  }
  switch (name) {
    case 'timeout':
      // DURATION, then the command.
      if (ops.length < 2) return self();
      return { ...out, innerAt: (ops[1] as { at: number }).at };
    case 'taskset':
    case 'chrt': {
      // The mask / cpu list (taskset) or the priority (chrt) comes first, then the command.
      if (ops.length < 2) return self();
      if (name === 'chrt' && !/^\d+$/.test(firstOp?.word.value ?? '')) return opaque(words, `chrt priority ${firstOp?.word.text ?? ''} is not a number`);
      return { ...out, innerAt: (ops[1] as { at: number }).at };
    }
    case 'sudo':
    case 'doas':
      out.risky = `${name} runs with raised privileges`;
      if (!firstOp) return self();
      return withAssignments({ ...out, alsoSelf: true }, firstOp.at);
    case 'xargs':
      return unwrapXargs(out, a);
    case 'watch':
      if (!firstOp) return self();
      if (has(a, 'exec')) return { ...out, innerAt: firstOp.at };
      return { ...out, script: ops.map((x) => x.word) };
    case 'flock':
      return unwrapFlock(out, a);
    default:
      return firstOp ? { ...out, innerAt: firstOp.at } : self();
  }
}

/** `NAME=VALUE` words before the command (env, sudo) set variables for it. */
function withAssignments(out: Unwrapped, from: number): Unwrapped {
  let i = from;
  for (; i < out.words.length; i++) {
    const w = out.words[i] as ShellWord;
    const m = /^([^=]+)=/.exec(w.value);
    if (!m?.[1] || w.value.startsWith('-')) break;
    if (!isLiteral(w)) return opaque(out.words, `a variable set from a value known only at run time (${w.text})`);
    if (isDangerousVariable(m[1])) return { ...out, opaque: `sets ${m[1]} for the command` };
    out.assigns.push(m[1]);
  }
  return i < out.words.length ? { ...out, innerAt: i } : { ...out, innerAt: undefined, alsoSelf: undefined };
}

/**
 * env: options one at a time, because `-S STRING` is split into more arguments that env parses
 * again (options included); then `-`, NAME=VALUE words, then the command.
 */
function unwrapEnv(input: ShellWord[]): Unwrapped {
  let words = input;
  const out = base(words);
  let i = 1;
  let rounds = 0;
  while (i < words.length) {
    const w = words[i] as ShellWord;
    if (!isLiteral(w)) return opaque(words, `env with arguments known only at run time (${w.text})`);
    if (!w.value.startsWith('-') || w.value === '-') break;
    if (++rounds > 64) return opaque(words, 'env with too many split strings');
    const r = parseOptions(T.env, words, i, { once: true });
    if (!r.ok) return opaque(words, r.reason);
    const next = r.args.end;
    for (const x of r.args.options) {
      if (x.effect === 'info') return { ...base(words) };
      if (x.valueWord && !isLiteral(x.valueWord)) return opaque(words, `env ${x.name} with a value known only at run time`);
      if (x.effect === 'chdir') out.chdir = optionArgWord(x);
      if (x.effect === 'split') {
        const parts = splitEnvString(x.value ?? '');
        if (parts === null) return opaque(words, `env ${x.name} with a string env cannot split`);
        words = [...words.slice(0, next), ...parts, ...words.slice(next)];
      }
    }
    i = next;
    if (words[i - 1]?.value === '--' && r.args.options.length === 0) break;
  }
  out.words = words;
  if (words[i]?.value === '-' && isLiteral(words[i] as ShellWord)) i++;
  return withAssignments(out, i);
}

/** nice: `-N`, `--N`, `-+N` are adjustments (coreutils nice.c), checked before each option. */
function unwrapNice(words: ShellWord[]): Unwrapped {
  let i = 1;
  while (i < words.length) {
    const w = words[i] as ShellWord;
    if (!isLiteral(w)) return opaque(words, `nice with arguments known only at run time (${w.text})`);
    const v = w.value;
    if (/^-[-+]?\d/.test(v)) {
      i++;
      continue;
    }
    if (!v.startsWith('-') || v === '-') break;
    const r = parseOptions(T.nice, words, i, { once: true });
    if (!r.ok) return opaque(words, r.reason);
    if (r.args.options.some((x) => x.effect === 'info')) return base(words);
    if (r.args.options.some((x) => x.valueWord && !isLiteral(x.valueWord))) return opaque(words, 'nice with an adjustment known only at run time');
    const wasDashDash = v === '--';
    i = r.args.end;
    if (wasDashDash) break;
  }
  return i < words.length ? { ...base(words), innerAt: i } : base(words);
}

function unwrapXargs(out: Unwrapped, a: ParsedArgs<W>): Unwrapped {
  let replace: string | undefined;
  for (const x of a.options) {
    if (x.effect === 'replace') replace = x.value ?? '{}';
    if (x.effect === 'slotVar') {
      const v = x.value ?? '';
      if (isDangerousVariable(v)) return { ...out, opaque: `xargs sets ${v} for the command` };
      out.assigns.push(v);
    }
  }
  const first = a.operands[0];
  if (!first) return { ...out, openEnded: true, defaultCommand: 'echo' };
  return { ...out, innerAt: first.at, openEnded: true, ...(replace !== undefined ? { replace } : {}) };
}

/** flock FILE CMD…, flock FILE -c CMD, flock FD. The lock file is created if missing: a write. */
function unwrapFlock(out: Unwrapped, a: ParsedArgs<W>): Unwrapped {
  const [file, second, third] = a.operands;
  if (!file || !second) return out;
  out.writes.push(file.word);
  if (isLiteral(second.word) && (second.word.value === '-c' || second.word.value === '--command')) {
    if (a.operands.length !== 3 || !third) return out;
    return { ...out, script: [third.word] };
  }
  return { ...out, innerAt: second.at };
}
