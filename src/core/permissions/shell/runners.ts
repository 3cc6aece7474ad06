import { isDangerousVariable } from './variables';
import { isLiteral, optionArgWord, optionTable, parseOptions, type OptionDef, type OptionTable, type ParsedArgs } from './options';
import type { ShellWord } from './words';

/**
 * Programs that run the command named by their arguments but change how it runs (tracers,
 * fake environments, resource limits, sandboxes, session helpers): `strace rm -rf /`,
 * `xvfb-run npm test`, `parallel 'rm {}' ::: *`. Unlike wrappers (wrappers.ts), their own form
 * is what a rule allows (`Bash(xvfb-run npm test)`, `Bash(strace:*)`): they do something of their
 * own, so a rule for the inner command does not allow them, and a read-only inner command does
 * not make them read-only. But the command they run is checked against deny and ask rules, as
 * if it stood alone, so `Bash(rm:*)` denies `strace -f rm -rf /` in every mode.
 *
 * Each is parsed by its option table (checked against Debian 12 where installed: strace 6.1,
 * valgrind 3.19, fakeroot 1.31, util-linux 2.38 prlimit/script/setpriv/setarch, systemd 252
 * systemd-run/systemd-inhibit, openssh 9.2 ssh-agent, dbus 1.14 dbus-run-session; otherwise
 * from the upstream manual pages). Whatever a table does not cover — an unknown or ambiguous
 * option, a computed word among the program's own arguments, an option that runs something else
 * (`strace -o '|cmd'`, `systemd-run --host`, `parallel --ssh`) — is opaque: the command asks,
 * and a specific deny rule makes it ask in every mode. Pure; tables are built once.
 */

/** What an option of a runner does. */
type R =
  | 'plain' // changes nothing Keel checks
  | 'info' // prints something and runs no command
  | 'opaque' // runs something Keel cannot check, or elsewhere (a remote host, a container)
  | 'readFile' // reads the file its argument names
  | 'writeFile' // writes the file its argument names
  | 'writeAny' // writes files Keel cannot name from the argument (strace -ff -o F: F.<pid>)
  | 'chdir' // the command runs in the directory its argument names
  | 'here' // the command runs in the caller's directory (systemd-run -d)
  | 'setenv' // NAME=VALUE (or NAME) for the command's environment
  | 'script'; // the argument is a shell command line the program runs (script -c)

/** How one runner invocation runs its command. Indexes refer to the words given to `runner`. */
export interface Runner {
  /** Index of the command it runs (its deny forms are checked). */
  innerAt?: number;
  /** Shell command lines it runs (`script -c '…'`, `parallel`'s joined command). */
  scripts: ShellWord[][];
  /** The command runs in this directory (as written, relative to the current one). */
  chdir?: ShellWord;
  /** The command runs somewhere Keel does not know (systemd-run's service directory). */
  elsewhere?: boolean;
  /** More arguments are appended at run time (parallel). */
  openEnded?: boolean;
  /** Variables set for the command. */
  assigns: string[];
  opaque?: string;
  risky?: string;
  /** Files the runner itself reads or writes (strace -o, script's typescript). */
  reads: ShellWord[];
  writes: ShellWord[];
}

interface RunnerSpec {
  table: OptionTable<R>;
  /** Operands before the command: faketime's timestamp, setarch's architecture. */
  lead?: (w: ShellWord, words: readonly ShellWord[]) => boolean;
  /** Without a command it runs a shell, reading commands from its input (fakeroot, script). */
  shellWhenEmpty?: boolean;
  /** Its command runs in another directory unless an option says `here` (systemd-run). */
  elsewhere?: boolean;
  /** Extra checks on the parse; a string makes the call opaque with that reason. */
  check?: (a: ParsedArgs<R>, words: readonly ShellWord[]) => string | undefined;
  /** Shape of the command: `words` (default), `parallel`, `script` (script's own file operand). */
  shape?: 'words' | 'parallel' | 'script';
}

const o = (short: string | undefined, long: string | string[] | undefined, effect: R = 'plain', arg: OptionDef<R>['arg'] = 'none'): OptionDef<R> => ({
  ...(short ? { short } : {}),
  ...(long ? { long } : {}),
  effect,
  arg,
});
const HELP = o('h', 'help', 'info');
const VERSION_V = o('V', 'version', 'info');
const VERSION = o(undefined, 'version', 'info');
const noAbbrev = { abbreviations: false };

const STRACE = optionTable('strace', [
  o('A', 'output-append-mode'), o('b', 'detach-on', 'plain', 'required'), o('c', 'summary-only'), o('C', 'summary'), o('d', 'debug'),
  o('D', 'daemonize', 'plain', 'optional'), o('e', undefined, 'plain', 'required'), o('E', 'env', 'setenv', 'required'), o('f', 'follow-forks'),
  o('F', undefined), o(undefined, 'output-separately', 'writeAny'), HELP, o('i', 'instruction-pointer'), o('I', 'interruptible', 'plain', 'required'),
  o('k', 'stack-traces'), o('n', 'syscall-number'), o('o', 'output', 'writeFile', 'required'), o('O', 'summary-syscall-overhead', 'plain', 'required'),
  o('p', 'attach', 'plain', 'required'), o('P', 'trace-path', 'plain', 'required'), o('q', 'quiet', 'plain', 'optional'),
  o('r', 'relative-timestamps', 'plain', 'optional'), o('s', 'string-limit', 'plain', 'required'), o('S', 'summary-sort-by', 'plain', 'required'),
  o('t', 'absolute-timestamps', 'plain', 'optional'), o('T', 'syscall-times', 'plain', 'optional'), o('u', 'user', 'plain', 'required'),
  o('U', 'summary-columns', 'plain', 'required'), o('v', 'no-abbrev'), VERSION_V, o('w', 'summary-wall-clock'), o('x', 'strings-in-hex', 'plain', 'optional'),
  o('X', 'const-print-style', 'plain', 'required'), o('y', 'decode-fds', 'plain', 'optional'), o('Y', undefined), o(undefined, 'decode-pids', 'plain', 'required'),
  o('z', 'successful-only'), o('Z', 'failed-only'), o(undefined, 'seccomp-bpf'), o(undefined, 'tips', 'plain', 'optional'),
  o(undefined, ['trace', 'signal', 'status', 'abbrev', 'verbose', 'raw', 'read', 'write', 'kvm', 'inject', 'fault'], 'plain', 'required'),
]);

const LTRACE = optionTable('ltrace', [
  o('a', 'align', 'plain', 'required'), o('A', undefined, 'plain', 'required'), o('b', 'no-signals'), o('c', undefined), o('C', 'demangle'),
  o('D', 'debug', 'plain', 'required'), o('e', undefined, 'plain', 'required'), o('f', undefined), o('F', 'config', 'readFile', 'required'), HELP,
  o('i', undefined), o('l', 'library', 'plain', 'required'), o('L', undefined), o('n', 'indent', 'plain', 'required'), o('o', 'output', 'writeFile', 'required'),
  o('p', undefined, 'plain', 'required'), o('r', undefined), o('s', undefined, 'plain', 'required'), o('S', undefined), o('t', undefined), o('T', undefined),
  o('u', undefined, 'plain', 'required'), o('V', 'version', 'info'), o('w', 'where', 'plain', 'required'), o('x', undefined, 'plain', 'required'),
]);

const FAKEROOT = optionTable('fakeroot', [
  o('l', 'lib', 'opaque', 'required'), o('f', 'faked', 'opaque', 'required'), o('i', undefined, 'readFile', 'required'), o('s', undefined, 'writeFile', 'required'),
  o('u', 'unknown-is-real'), o('b', 'fd-base', 'plain', 'required'), HELP, o('v', 'version', 'info'),
]);

const NUMACTL = optionTable('numactl', [
  o('a', 'all'), o('i', 'interleave', 'plain', 'required'), o('p', 'preferred', 'plain', 'required'), o('P', 'preferred-many', 'plain', 'required'),
  o('m', 'membind', 'plain', 'required'), o('C', 'physcpubind', 'plain', 'required'), o('N', 'cpunodebind', 'plain', 'required'), o('l', 'localalloc'),
  o('b', 'balancing'), o('s', 'show', 'info'), o('H', 'hardware', 'info'), HELP,
]);

const PRLIMIT_RESOURCES = ['core', 'data', 'nice', 'fsize', 'sigpending', 'memlock', 'rss', 'nofile', 'msgqueue', 'rtprio', 'stack', 'cpu', 'nproc', 'as', 'locks', 'rttime'];
const PRLIMIT = optionTable('prlimit', [
  o('p', 'pid', 'info', 'required'), o('o', 'output', 'plain', 'required'), o(undefined, 'noheadings'), o(undefined, 'raw'), o(undefined, 'verbose'), HELP, VERSION_V,
  // Resources take an optional attached limit (`-n=1024`, `--nofile=1024`); without one they print it.
  ...'cdefilmnqrstuvxy'.split('').map((c, i) => o(c, PRLIMIT_RESOURCES[i], 'plain', 'optional')),
]);

const XVFB_RUN = optionTable('xvfb-run', [
  o('a', 'auto-servernum'), o('d', 'auto-display'), o('e', 'error-file', 'writeFile', 'required'), o('f', 'auth-file', 'writeFile', 'required'), HELP,
  o('l', 'listen-tcp'), o('n', 'server-num', 'plain', 'required'), o('p', 'xauth-protocol', 'plain', 'required'), o('s', 'server-args', 'plain', 'required'),
  o('w', 'wait', 'plain', 'required'),
]);

const UNBUFFER = optionTable('unbuffer', [o('p', undefined)], noAbbrev);
const CHRONIC = optionTable('chronic', [o('e', undefined), o('v', undefined)], noAbbrev);
const IFNE = optionTable('ifne', [o('n', undefined)], noAbbrev);
const NOTHING = optionTable<R>('-', [], noAbbrev);

const SCRIPT = optionTable('script', [
  o('I', 'log-in', 'writeFile', 'required'), o('O', 'log-out', 'writeFile', 'required'), o('B', 'log-io', 'writeFile', 'required'), o('T', 'log-timing', 'writeFile', 'required'),
  o('t', 'timing', 'writeFile', 'optional'), o('m', 'logging-format', 'plain', 'required'), o('a', 'append'), o('c', 'command', 'script', 'required'),
  o('e', 'return'), o('f', 'flush'), o(undefined, 'force'), o('E', 'echo', 'plain', 'required'), o('o', 'output-limit', 'plain', 'required'), o('q', 'quiet'),
  HELP, VERSION_V,
], { permute: true });

const SETPRIV = optionTable('setpriv', [
  o('d', 'dump', 'info'),
  o(undefined, ['nnp', 'no-new-privs']),
  o(undefined, ['ambient-caps', 'inh-caps', 'bounding-set', 'securebits', 'pdeathsig', 'selinux-label', 'apparmor-profile'], 'plain', 'required'),
  o(undefined, ['ruid', 'euid', 'rgid', 'egid', 'reuid', 'regid', 'groups'], 'plain', 'required'), o(undefined, ['clear-groups', 'keep-groups', 'init-groups', 'reset-env']),
  HELP, VERSION_V,
]);

const SETARCH = optionTable('setarch', [
  o('B', '32bit'), o('F', 'fdpic-funcptrs'), o('I', 'short-inode'), o('L', 'addr-compat-layout'), o('R', 'addr-no-randomize'), o('S', 'whole-seconds'),
  o('T', 'sticky-timeouts'), o('X', 'read-implies-exec'), o('Z', 'mmap-page-zero'), o('3', '3gb'), o(undefined, '4gb'), o(undefined, 'uname-2.6'),
  o('v', 'verbose'), o(undefined, 'list', 'info'), HELP, VERSION_V,
]);

const SYSTEMD_RUN = optionTable('systemd-run', [
  HELP, VERSION, o(undefined, 'no-ask-password'), o(undefined, 'user'), o(undefined, 'system'), o('H', 'host', 'opaque', 'required'), o('M', 'machine', 'opaque', 'required'),
  o(undefined, 'scope', 'here'), o('u', 'unit', 'plain', 'required'), o('p', 'property', 'opaque', 'required'), o(undefined, 'description', 'plain', 'required'),
  o(undefined, 'slice', 'plain', 'required'), o(undefined, 'slice-inherit'), o(undefined, 'no-block'), o('r', 'remain-after-exit'), o(undefined, 'wait'),
  o(undefined, 'send-sighup'), o(undefined, 'service-type', 'plain', 'required'), o(undefined, ['uid', 'gid', 'nice'], 'plain', 'required'),
  o(undefined, 'working-directory', 'chdir', 'required'), o('d', 'same-dir', 'here'), o('E', 'setenv', 'setenv', 'required'), o('t', 'pty'), o('P', 'pipe'),
  o('q', 'quiet'), o('G', 'collect'), o('S', 'shell', 'opaque'),
  o(undefined, ['path-property', 'socket-property', 'timer-property'], 'opaque', 'required'),
  o(undefined, ['on-active', 'on-boot', 'on-startup', 'on-unit-active', 'on-unit-inactive', 'on-calendar'], 'plain', 'required'),
  o(undefined, ['on-timezone-change', 'on-clock-change']),
]);

const SYSTEMD_INHIBIT = optionTable('systemd-inhibit', [
  HELP, VERSION, o(undefined, 'no-pager'), o(undefined, 'no-legend'), o(undefined, ['what', 'who', 'why', 'mode'], 'plain', 'required'), o(undefined, 'list', 'info'),
]);

const DBUS_RUN_SESSION = optionTable(
  'dbus-run-session',
  [o(undefined, 'dbus-daemon', 'opaque', 'required'), o(undefined, 'config-file', 'readFile', 'required'), o(undefined, 'help', 'info'), VERSION],
  noAbbrev,
);

const SSH_AGENT = optionTable('ssh-agent', [
  o('c', undefined), o('s', undefined), o('D', undefined), o('d', undefined), o('a', undefined, 'writeFile', 'required'), o('E', undefined, 'plain', 'required'),
  o('O', undefined, 'plain', 'required'), o('P', undefined, 'opaque', 'required'), o('t', undefined, 'plain', 'required'), o('k', undefined, 'info'),
], noAbbrev);

const FAKETIME = optionTable(
  'faketime',
  [
    ...[o('m', undefined), o('f', undefined), o(undefined, 'exclude-monotonic'), o('p', undefined, 'info', 'required')],
    ...[o(undefined, 'date-prog', 'opaque', 'required'), o('h', 'help', 'info'), VERSION],
  ],
  noAbbrev,
);

const TORSOCKS = optionTable('torsocks', [
  o('u', 'user', 'plain', 'required'), o('p', 'pass', 'plain', 'required'), o('a', 'address', 'plain', 'required'), o('P', 'port', 'plain', 'required'),
  o('i', 'isolate'), o('d', 'debug'), o('q', 'quiet'), o(undefined, 'shell', 'opaque'), HELP, o(undefined, 'version', 'info'),
]);

const PROXYCHAINS = optionTable('proxychains', [o('q', undefined), o('f', undefined, 'readFile', 'required')], noAbbrev);

const TRICKLE = optionTable('trickle', [
  o('h', undefined, 'info'), o('v', undefined), o('V', undefined, 'info'), o('s', undefined), o('d', undefined, 'plain', 'required'), o('u', undefined, 'plain', 'required'),
  o('w', undefined, 'plain', 'required'), o('t', undefined, 'plain', 'required'), o('l', undefined, 'plain', 'required'), o('n', undefined, 'opaque', 'required'),
], noAbbrev);

const ENTR = optionTable(
  'entr',
  [o('a', undefined), o('c', undefined), o('d', undefined), o('n', undefined), o('p', undefined), o('r', undefined), o('s', undefined, 'script'), o('z', undefined)],
  noAbbrev,
);

const BUSYBOX = optionTable('busybox', [o(undefined, 'help', 'info'), o(undefined, 'list', 'info'), o(undefined, 'list-full', 'info'), o(undefined, 'install', 'opaque')], noAbbrev);

/** GNU parallel 20221122 (Getopt::Long, bundling, abbreviations); the command ends at `:::`. */
const PARALLEL = optionTable('parallel', [
  o('j', ['jobs', 'max-procs'], 'plain', 'required'),
  o('P', undefined, 'plain', 'required'),
  o('k', 'keep-order'),
  o(undefined, ['bar', 'progress', 'eta', 'will-cite', 'no-notice', 'dry-run', 'line-buffer', 'lb', 'group', 'tag', 'shuf', 'xargs', 'trim', 'plus', 'pipe']),
  o(undefined, ['fg', 'bg', 'semaphore', 'halt-on-error']),
  o('u', 'ungroup'), o('v', 'verbose'), o('t', undefined), o('n', 'max-args', 'plain', 'required'), o('N', undefined, 'plain', 'required'), o('L', 'max-lines', 'plain', 'required'),
  o('l', undefined, 'plain', 'optional'), o('X', undefined), o('m', undefined), o('I', undefined, 'plain', 'required'), o('0', 'null'), o('d', 'delimiter', 'plain', 'required'),
  o('E', undefined, 'plain', 'required'),
  o('a', 'arg-file', 'readFile', 'required'),
  o(undefined, ['arg-sep', 'arg-file-sep', 'colsep', 'tagstring', 'halt', 'timeout', 'retries', 'delay', 'load', 'memfree', 'nice', 'block'], 'plain', 'required'),
  o(undefined, ['recstart', 'recend', 'header'], 'plain', 'required'),
  // Temporary files go there; the (de)compressors are programs parallel runs on its output.
  o(undefined, 'tmpdir', 'writeAny', 'required'),
  o(undefined, ['compress-program', 'decompress-program'], 'opaque', 'required'),
  o('C', undefined, 'plain', 'required'), o('q', 'quote'), o('r', 'no-run-if-empty'), o('s', 'max-chars', 'plain', 'required'), o(undefined, 'joblog', 'writeFile', 'required'),
  o(undefined, ['results', 'res', 'files'], 'writeAny', 'optional'),
  o('S', ['sshlogin', 'slf', 'sshloginfile', 'ssh', 'basefile', 'transfer', 'return', 'cleanup', 'env', 'shebang', 'shebang-wrap', 'tmux', 'wd', 'workdir'], 'opaque', 'required'),
  o(undefined, ['resume', 'resume-failed']), o(undefined, 'version', 'info'), o(undefined, 'help', 'info'), o(undefined, 'citation', 'info'),
]);

/** Options that run programs are opaque; the rest of parallel's long options are not in the table (ask). */
function parallelCheck(a: ParsedArgs<R>): string | undefined {
  const compress = a.options.find((x) => x.name === '--compress-program' || x.name === '--decompress-program');
  return compress ? `parallel ${compress.name} runs a program Keel cannot check` : undefined;
}

const SPECS: Record<string, RunnerSpec> = {
  strace: { table: STRACE },
  ltrace: { table: LTRACE },
  fakeroot: { table: FAKEROOT, shellWhenEmpty: true },
  'fakeroot-sysv': { table: FAKEROOT, shellWhenEmpty: true },
  'fakeroot-tcp': { table: FAKEROOT, shellWhenEmpty: true },
  numactl: { table: NUMACTL },
  prlimit: { table: PRLIMIT },
  'xvfb-run': { table: XVFB_RUN },
  unbuffer: { table: UNBUFFER },
  chronic: { table: CHRONIC },
  ifne: { table: IFNE },
  catchsegv: { table: NOTHING },
  eatmydata: { table: NOTHING },
  nocache: { table: NOTHING },
  script: { table: SCRIPT, shellWhenEmpty: true, shape: 'script' },
  setpriv: { table: SETPRIV },
  setarch: { table: SETARCH, shellWhenEmpty: true, lead: (w) => !w.value.startsWith('-') },
  linux32: { table: SETARCH, shellWhenEmpty: true },
  linux64: { table: SETARCH, shellWhenEmpty: true },
  i386: { table: SETARCH, shellWhenEmpty: true },
  x86_64: { table: SETARCH, shellWhenEmpty: true },
  'systemd-run': { table: SYSTEMD_RUN, elsewhere: true },
  'systemd-inhibit': { table: SYSTEMD_INHIBIT },
  'dbus-run-session': { table: DBUS_RUN_SESSION },
  'ssh-agent': { table: SSH_AGENT },
  faketime: { table: FAKETIME, lead: () => true },
  torsocks: { table: TORSOCKS },
  proxychains: { table: PROXYCHAINS },
  proxychains4: { table: PROXYCHAINS },
  trickle: { table: TRICKLE },
  entr: { table: ENTR },
  busybox: { table: BUSYBOX },
  toybox: { table: BUSYBOX },
  parallel: { table: PARALLEL, shape: 'parallel', check: parallelCheck },
};

/** Runners whose options are all single words (`--name=value`), parsed by `singleWordOption`. */
const SINGLE_WORD = new Set(['valgrind', 'firejail']);

const NETWORK_RUNNERS = new Set(['torsocks', 'proxychains', 'proxychains4', 'trickle']);

/** The runners Keel knows (by command name after `/usr/bin/` is dropped). */
export const RUNNERS: ReadonlySet<string> = new Set([...Object.keys(SPECS), ...SINGLE_WORD]);

const empty = (): Runner => ({ scripts: [], assigns: [], reads: [], writes: [] });
const opaque = (reason: string): Runner => ({ ...empty(), opaque: reason });

/**
 * How `words` (a runner named `name`, words[0] being the runner) runs its command, or undefined
 * when `name` is not a runner. Never throws.
 */
export function runner(name: string, words: readonly ShellWord[]): Runner | undefined {
  if (SINGLE_WORD.has(name)) return singleWordRunner(name, words);
  const spec = Object.hasOwn(SPECS, name) ? SPECS[name] : undefined;
  if (!spec) return undefined;
  const r = parseOptions(spec.table, words, 1);
  if (!r.ok) return opaque(r.reason);
  const a = r.args;
  const out = empty();
  if (NETWORK_RUNNERS.has(name)) out.risky = `${name} sends the command's traffic through a proxy`;
  for (let k = 1; k < a.end; k++) {
    const w = words[k] as ShellWord;
    if (!isLiteral(w)) return opaque(`${name} with arguments known only at run time (${w.text})`);
  }
  if (a.options.some((x) => x.effect === 'info')) return out;
  const bad = a.options.find((x) => x.effect === 'opaque');
  if (bad) return opaque(`${name} ${bad.name} runs something Keel cannot check`);
  const why = spec.check?.(a, words);
  if (why) return opaque(why);
  let here = !spec.elsewhere;
  const separately = a.options.some((x) => x.effect === 'writeAny' || (name === 'strace' && /^-f?ff$/.test(words[x.at]?.value ?? '')));
  for (const x of a.options) {
    const arg = optionArgWord(x);
    switch (x.effect) {
      case 'here':
        here = true;
        break;
      case 'chdir':
        if (arg) out.chdir = arg;
        here = true;
        break;
      case 'readFile':
        if (arg) out.reads.push(arg);
        break;
      case 'writeFile':
        if (!arg) break;
        // strace -o '|cmd' and '!cmd' pipe the trace to a shell command.
        if (name === 'strace' && /^[|!]/.test(arg.value)) return opaque(`strace ${x.name} ${arg.text} runs a command through a shell`);
        // With -ff, strace writes FILE.<pid>: names Keel cannot know.
        out.writes.push(separately ? { ...arg, dynamic: true } : arg);
        break;
      case 'writeAny':
        out.writes.push({ value: '', dynamic: true, glob: false, text: x.name });
        break;
      case 'setenv': {
        const m = /^([^=]+)/.exec(x.value ?? '');
        if (!m?.[1]) break;
        if (isDangerousVariable(m[1])) return opaque(`${name} sets ${m[1]} for the command`);
        out.assigns.push(m[1]);
        break;
      }
      case 'script':
        if (arg) out.scripts.push([arg]);
        break;
      default:
        break;
    }
  }
  if (!here) out.elsewhere = true;
  const ops = a.operands;
  let first = 0;
  while (first < ops.length && spec.lead?.((ops[first] as { word: ShellWord }).word, words)) first++;
  const command = ops[first];
  const shape = spec.shape ?? 'words';
  if (shape === 'script') {
    // script [options] [file]: the operand is the typescript it writes (default ./typescript).
    const logs = a.options.some((x) => x.effect === 'writeFile' && x.name !== '--timing' && x.name !== '-t');
    if (command) out.writes.push(command.word);
    else if (!logs) out.writes.push({ value: 'typescript', dynamic: false, glob: false, text: 'typescript', fields: ['typescript'] });
    if (out.scripts.length === 0) return opaque(`${name} without -c runs a shell that reads commands from its input`);
    return out;
  }
  if (out.scripts.length > 0 && !command) return out;
  if (!command) return spec.shellWhenEmpty ? opaque(`${name} without a command runs a shell that reads commands from its input`) : out;
  if (first > 0 && ops.slice(0, first).some((x) => !isLiteral(x.word))) return opaque(`${name} with arguments known only at run time`);
  if (shape === 'parallel') return parallelCommand(out, words, command.at);
  return { ...out, innerAt: command.at };
}

/**
 * GNU parallel: the words up to `:::`, `::::`, `:::+` or `::::+` are joined into a command line
 * that a shell runs once per input (the inputs appended, or put where `{}` stands). Without
 * them, the inputs are whole command lines: opaque.
 */
function parallelCommand(out: Runner, words: readonly ShellWord[], at: number): Runner {
  let end = at;
  while (end < words.length && !/^::::?\+?$/.test(words[end]?.value ?? '')) end++;
  const command = words.slice(at, end);
  if (command.length === 0) return opaque('parallel runs its inputs as commands');
  if (command.some((w) => !isLiteral(w))) return opaque('parallel with a command known only at run time');
  const line = command.map((w) => w.value).join(' ');
  return { ...out, openEnded: true, scripts: [...out.scripts, [{ value: line, dynamic: false, glob: false, text: line, fields: [line] }]] };
}

/** firejail options that only confine the command (no value, or a value that is not a path). */
const FIREJAIL_PLAIN = new Set([
  'noprofile', 'quiet', 'private', 'private-tmp', 'private-dev', 'private-cache', 'nonewprivs', 'noroot', 'seccomp', 'caps', 'caps.drop', 'caps.keep',
  'nosound', 'novideo', 'no3d', 'nogroups', 'nodvd', 'notv', 'nou2f', 'noinput', 'nodbus', 'net', 'protocol', 'memory-deny-write-execute', 'ipc-namespace',
  'disable-mnt', 'machine-id', 'hostname', 'rlimit-as', 'rlimit-cpu', 'rlimit-fsize', 'rlimit-nofile', 'rlimit-nproc', 'rlimit-sigpending', 'timeout',
  'cpu', 'nice', 'deterministic-exit-code', 'deterministic-shutdown', 'restrict-namespaces', 'seccomp.drop', 'seccomp.keep',
]);

/**
 * valgrind and firejail take every option as one word (`--tool=memcheck`, `--net=none`, `-q`):
 * the command is the first word without a dash, so where it starts is never in doubt. valgrind's
 * options change how the program is watched; those that write name a file (`--log-file=F`,
 * every `--*-file`), and those that reach a socket, a server or another program, or load a tool
 * from a path, are opaque. firejail's are read from a list of options that only confine
 * (`FIREJAIL_PLAIN`); `--output=F` writes F; any other is opaque.
 */
function singleWordRunner(name: string, words: readonly ShellWord[]): Runner {
  const out = empty();
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (!isLiteral(w)) return opaque(`${name} with arguments known only at run time (${w.text})`);
    if (w.value === '--') {
      i++;
      break;
    }
    if (!w.value.startsWith('-') || w.value === '-') break;
    const m = /^--?([A-Za-z0-9][A-Za-z0-9._-]*)(?:=([^]*))?$/.exec(w.value);
    const opt = m?.[1];
    if (!m || !opt) return opaque(`${name}: cannot read option ${w.text}`);
    const value = m[2];
    if (opt === 'help' || opt === 'version' || w.value === '-h') return out;
    // %p, %q{VAR}: valgrind puts the pid or a variable in the name.
    const file = (): ShellWord => ({ value: value ?? '', dynamic: value === undefined || value.includes('%'), glob: false, text: w.text, fields: [value ?? ''] });
    if (name === 'valgrind') {
      if (/-file$/.test(opt)) out.writes.push(file());
      else if (/socket|server|-fd$|^db-|^vgdb-prefix$/.test(opt) || (opt === 'tool' && (value ?? '').includes('/'))) return opaque(`valgrind --${opt} reaches something Keel cannot check`);
      continue;
    }
    if (opt === 'output' || opt === 'output-stderr') out.writes.push(file());
    else if (!FIREJAIL_PLAIN.has(opt)) return opaque(`firejail --${opt} is not an option Keel knows to only confine the command`);
  }
  const command = words[i];
  if (!command) return name === 'firejail' ? opaque('firejail without a command runs a shell that reads commands from its input') : out;
  // firejail may start the command in another directory (its private home).
  return { ...out, innerAt: i, ...(name === 'firejail' ? { elsewhere: true } : {}) };
}
