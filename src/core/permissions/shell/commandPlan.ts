import { isAbsolute } from 'node:path';
import { liveFs, type FsView } from '../fsView';
import { isDangerousVariable, type FileTarget, type SimpleCommand } from './analyze';
import { directory } from './dirs';
import { execOptionAt } from './execOptions';
import { gitPlan } from './gitPlan';
import { toolOptions, type ToolOptions } from './toolOptions';
import type { FileUse } from '../readOnly/types';
import { programKey } from './program';
import { isLiteral } from './options';
import { runner, type Runner } from './runners';
import { unwrap, type Unwrapped } from './wrappers';
import { belowWord, type ShellWord } from './words';
import { findRoots } from '../readOnly/find';

/**
 * What must hold for one simple command to be allowed, after unwrapping wrappers
 * (`timeout`, `env`, `sudo`, `xargs`...) and finding inline code (`sh -c`, `python -c`, `eval`,
 * `find -exec`). Pure.
 */
export interface CommandForm {
  words: ShellWord[];
  /** More arguments are appended at run time (xargs, find -exec … +): exact rules cannot match. */
  openEnded: boolean;
  /** Index of the word that starts inline code (`-c`, `-e`, the awk program); a rule must name it. */
  inlineAt?: number;
  /**
   * Every directory it may run in (physical paths) when a wrapper changed directory (`env -C`,
   * `sudo -D`); null: unknown. Undefined: the plan's.
   */
  cwds?: readonly string[] | null;
  /** Variables assigned for it (`X=1 cmd`, `env X=1 cmd`). */
  assigns?: string[];
}

export interface CommandPlan {
  /** Any of these matching a deny (or ask) rule denies (or asks). */
  denyForms: CommandForm[];
  /** Every one of these must match an allow rule (or be a known read-only command). */
  allowForms: CommandForm[];
  /** Why no rule can allow this command, if so. */
  opaque: string[];
  /** Why the editor should show a modal (sudo, network tools). */
  risky: string[];
  /** Literal inner scripts to analyse with the same engine (sh -c '…', eval '…', here-docs). */
  scripts: InlineScript[];
  /**
   * Scripts a runner runs (`strace sh -c '…'`, `parallel 'cmd {}' ::: …`), whose commands a rule
   * for the runner already allows: checked against deny and ask rules (and for what cannot be
   * checked), their files counted as the runner's.
   */
  denyScripts: InlineScript[];
  /**
   * Commands a program Keel does not know may run from its arguments (`gdb --args rm -rf x`,
   * `npx rm -rf x`), with the program's name: a deny or ask rule matching one makes the call ask
   * (never allow), unless the program is a read-only command (bashCheck.ts).
   */
  suspectForms: { program: string; form: CommandForm }[];
  /** Every directory the command may run in (physical paths); null: unknown. */
  cwds: readonly string[] | null;
  /**
   * The command reads `find ROOT…`'s output (`find . -name x | xargs cmd`): arguments appended
   * at run time are files below these roots (bashCheck.ts adds them as `belowWord`s).
   */
  argsBelow?: string[];
  /**
   * Files its wrappers and runners read (`xargs -a F`) or write (`time -o F`, `flock F`,
   * `strace -o F`), as written from each possible directory (resolve them physically).
   */
  reads: FileTarget[];
  writes: FileTarget[];
  /**
   * Forms whose files are checked although no rule is needed for them: the command a runner runs
   * (`strace cp a .git/config`: cp's destination is a write, whichever rule allowed strace).
   */
  fileForms: CommandForm[];
  /** Why the command asks in every mode (it changes a protected place Keel cannot name as a file). */
  hardAsks: string[];
  /**
   * Files of a form (one of `allowForms` or `fileForms`) found by a planner of its own (gitPlan.ts,
   * toolOptions.ts), decided as the files of a modelled command are; `unknown` says why they
   * cannot all be known.
   */
  extras: { form: CommandForm; uses: FileUse[]; unknown?: string }[];
}

/** A literal script to analyse; `cwd` null when it does not run in exactly one known directory. */
export interface InlineScript {
  source: string;
  cwd: string | null;
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'rbash']);
const INTERPRETER_FLAGS: Record<string, string[]> = {
  python: ['-c'], node: ['-e', '--eval', '-p', '--print', '-pe'], nodejs: ['-e', '--eval', '-p', '--print'], deno: ['eval'], bun: ['-e', '--eval', '-p', '--print'],
  perl: ['-e', '-E'], ruby: ['-e'], php: ['-r'], lua: ['-e'], osascript: ['-e'], pwsh: ['-c', '-command', '-encodedcommand', '-ec'], powershell: ['-c', '-command', '-encodedcommand'],
  Rscript: ['-e'], R: ['-e'], tclsh: [], irb: [], julia: ['-e'], groovy: ['-e'], jshell: [], expect: ['-c'], wish: [],
};
const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);
const NETWORK_TOOLS = new Set(['curl', 'wget', 'nc', 'ncat', 'netcat', 'socat', 'ssh', 'scp', 'sftp', 'rsync', 'ftp', 'telnet', 'aria2c', 'http', 'https']);

function isOption(w: ShellWord | undefined): boolean {
  return !!w && !w.dynamic && w.value.startsWith('-') && w.value.length > 1;
}

/**
 * Programs that run a command given in their arguments in a way Keel does not parse (debuggers,
 * profilers, terminal multiplexers, other roots): a rule for the program cannot allow what they
 * run, so they ask.
 */
const UNPARSED_RUNNERS = new Set(['gdb', 'lldb', 'perf', 'rr', 'heaptrack', 'hyperfine', 'tmux', 'screen', 'dtach', 'schroot', 'machinectl', 'doas', 'firejail-run']);

/**
 * Programs known not to run their arguments as a command (beyond what their checks cover); the
 * read-only commands are known too (bashCheck.ts skips them).
 */
const NOT_RUNNERS = new Set([
  'echo', 'printf', 'test', '[', 'true', 'false', ':', 'cd', 'pushd', 'popd', 'dirs', 'pwd', 'read', 'set', 'unset', 'shift', 'return', 'exit',
  'break', 'continue', 'wait', 'kill', 'trap', 'umask', 'ulimit', 'hash', 'type', 'alias', 'unalias', 'let', 'getopts', 'shopt', 'mkdir', 'touch',
  'cp', 'mv', 'ln', 'chmod', 'chown', 'rmdir', 'rm', 'tee', 'sed', 'git',
]);

/** Normalised interpreter family: python3.12 → python. */
function family(base: string): string {
  const m = /^(python|perl|ruby|php|lua|node)[0-9.]*$/.exec(base);
  return m?.[1] ?? base;
}

function emptyPlan(cwds: readonly string[] | null): CommandPlan {
  return { denyForms: [], allowForms: [], opaque: [], risky: [], scripts: [], denyScripts: [], suspectForms: [], cwds, reads: [], writes: [], fileForms: [], hardAsks: [], extras: [] };
}

/**
 * Plans one simple command (and its wrappers and runners). Directories a wrapper moves to
 * (`env -C dir`) are resolved physically on `fs` from each directory the command may run in.
 */
export function planCommand(cmd: SimpleCommand, fs: FsView = liveFs): CommandPlan {
  const plan = emptyPlan(cmd.cwds);
  for (const a of cmd.assignments) if (isDangerousVariable(a)) plan.opaque.push(`sets ${a} for the command`);
  planWords(cmd.words, false, { cmd, plan, fs }, 0, cmd.cwds, cmd.assignments);
  return plan;
}

interface PlanContext {
  cmd: SimpleCommand;
  plan: CommandPlan;
  fs: FsView;
}

/**
 * The files a wrapper's path word names, one per directory the command may run in, absolute but
 * not normalised (`src/link/../x` is resolved physically by the checks, as the kernel does).
 * The word's one field is used (tilde expanded as bash did); a computed word, a glob, several
 * fields or an unknown directory give an unknown file (null: it asks).
 */
function wordTargets(w: ShellWord, cwds: readonly string[] | null): FileTarget[] {
  const unknown: FileTarget[] = [{ path: null, text: w.text }];
  if (!isLiteral(w) || w.fields?.length !== 1) return unknown;
  const v = w.fields[0] as string;
  if (v === '') return unknown;
  if (isAbsolute(v)) return [{ path: v, text: w.text }];
  if (cwds === null) return unknown;
  return cwds.map((d) => ({ path: `${d}/${v}`, text: w.text }));
}

/**
 * The directories a wrapper moves its command to (`env -C dir`), physically resolved from each
 * directory it may start in; from where `dir` is not a directory the wrapper fails and runs
 * nothing. Null when unknown (or when it is a directory from nowhere).
 */
function chdirTargets(w: ShellWord, cwds: readonly string[] | null, fs: FsView): string[] | null {
  const out = new Set<string>();
  for (const t of wordTargets(w, cwds)) {
    if (t.path === null) return null;
    const d = directory(t.path, fs);
    if (d !== null) out.add(d);
  }
  return out.size > 0 ? [...out] : null;
}

/** The one directory of `cwds`, for an inline script (analysed from one start); else null. */
function single(cwds: readonly string[] | null): string | null {
  return cwds?.length === 1 ? (cwds[0] as string) : null;
}

const ASSIGNMENT_WORD = /^([A-Za-z_][A-Za-z0-9_]*)\+?=/;

function planWords(words: ShellWord[], openEnded: boolean, ctx: PlanContext, depth: number, cwds: readonly string[] | null, assigns: string[]): void {
  const { cmd, plan } = ctx;
  const first = words[0];
  if (!first) return;
  if (depth > 8) {
    plan.opaque.push('too many nested wrappers');
    return;
  }
  if (first.dynamic || first.glob) {
    plan.opaque.push(`the command name ${first.text} is only known at run time`);
    plan.denyForms.push({ words, openEnded });
    return;
  }
  // An assignment in command position: after the `time` keyword or `!` bash still takes
  // `NAME=value` words as assignments for the command that follows.
  const assigned = ASSIGNMENT_WORD.exec(first.value);
  if (assigned?.[1]) {
    if (isDangerousVariable(assigned[1])) plan.opaque.push(`sets ${assigned[1]} for the command`);
    return planWords(words.slice(1), openEnded, ctx, depth + 1, cwds, [...assigns, assigned[1]]);
  }
  const key = programKey(first.value, cwds, ctx.fs);
  const { base, trusted } = key;
  const named = (n: string): ShellWord[] => [{ ...first, value: n }, ...words.slice(1)];
  const self: CommandForm = { words: trusted ? named(key.ruleName) : words, openEnded, assigns, ...(cwds !== ctx.plan.cwds ? { cwds } : {}) };
  plan.denyForms.push({ words, openEnded });
  for (const n of new Set([key.ruleName, ...key.aliases])) if (n !== first.value) plan.denyForms.push({ words: named(n), openEnded });
  if (!trusted) {
    // A program in the workspace (or one that does not resolve) is not the system program of
    // the same name: only a rule naming it as written allows it, and it may run its arguments.
    plan.allowForms.push(self);
    return suspects(first.value, words, openEnded, plan);
  }
  const rest = words.slice(1);
  const fam = family(base);
  if (NETWORK_TOOLS.has(base)) plan.risky.push(`${base} uses the network`);

  const w = unwrap(base, words);
  if (w) return planWrapper(w, self, openEnded, ctx, depth, cwds, assigns);
  const r = runner(base, words);
  if (r) return planRunner(r, words, self, openEnded, ctx, depth, cwds, assigns);
  switch (base) {
    case 'su':
    case 'runuser':
    case 'chroot':
    case 'unshare':
    case 'nsenter':
    case 'flatpak-spawn':
    case 'pkexec':
    case 'run0':
    case 'sg':
    case 'bwrap':
      plan.risky.push(`${base} runs with another identity or root`);
      plan.opaque.push(`${base} runs commands that cannot be checked`);
      return;
    case 'eval':
      return shellScript(rest, single(cwds), plan.scripts, plan);
    case 'declare':
    case 'typeset':
    case 'export':
    case 'local':
    case 'readonly':
      // Reached through a wrapper or an assignment prefix (`time declare -x LD_PRELOAD=…`,
      // `FOO=1 export PATH=…`), where the parser does not see a declaration: the builtin still
      // sets (and exports) what it names for every later command.
      for (const a of rest) {
        if (a.dynamic) return void plan.opaque.push(`${base} with arguments known only at run time (${a.text})`);
        const m = /^([A-Za-z_][A-Za-z0-9_]*)(\+?=|$)/.exec(a.value);
        if (m?.[1] && isDangerousVariable(m[1])) plan.opaque.push(`sets ${m[1]}, which changes what later commands run`);
      }
      break;
    case 'find':
      return planFind(words, self, ctx, depth, cwds, assigns);
    case 'git':
      return planGit(words, self, ctx, depth, cwds, assigns);
    default:
      break;
  }
  const tool = toolOptions(base, words);
  if (tool) return planTool(base, tool, words, self, openEnded, plan, cwds);
  if (SHELLS.has(base)) return planShell(words, self, cmd, plan, single(cwds));
  if (AWKS.has(base)) {
    let i = 1;
    let file = false;
    for (; i < words.length && isOption(words[i]); i++) {
      if (/^(-f|--file)$/.test(words[i]?.value ?? '')) file = true;
      if (/^(-f|-v|-F|--file|--assign|--field-separator)$/.test(words[i]?.value ?? '')) i++;
    }
    plan.allowForms.push(file ? self : { ...self, inlineAt: Math.min(i, words.length - 1) });
    return;
  }
  const flags = INTERPRETER_FLAGS[fam];
  if (flags) {
    const at = words.findIndex((w, k) => k > 0 && !w.dynamic && flags.some((f) => w.value === f || (f.length === 2 && w.value.startsWith(f) && !w.value.startsWith('--'))));
    const firstArg = words.findIndex((w, k) => k > 0 && !isOption(w));
    if (at > 0 && (firstArg < 0 || at < firstArg)) return void plan.allowForms.push({ ...self, inlineAt: at });
    if (firstArg < 0 && (cmd.piped || cmd.stdin) && !words.some((w) => /^(-m|--version|-V|--help|-h)$/.test(w.value))) {
      return void plan.opaque.push(`${base} runs code from its input`);
    }
    plan.allowForms.push(self);
    return;
  }
  const at = execOptionAt(base, words);
  if (at > 0) return void plan.allowForms.push({ ...self, inlineAt: at });
  if (UNPARSED_RUNNERS.has(base)) {
    plan.risky.push(`${base} runs a command Keel does not parse`);
    plan.opaque.push(`${base} runs a command Keel cannot see into`);
    return;
  }
  plan.allowForms.push(self);
  if (!NOT_RUNNERS.has(base)) suspects(base, words, openEnded, plan);
}

/**
 * Every later literal word that could name a program starts a command a program Keel does not
 * know may run (`gdb --args rm -rf x`, `npx rm -rf x`): deny and ask rules are checked on it.
 */
function suspects(program: string, words: ShellWord[], openEnded: boolean, plan: CommandPlan): void {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.dynamic || w.value === '' || w.value.startsWith('-')) continue;
    plan.suspectForms.push({ program, form: { words: words.slice(i), openEnded } });
  }
}

/** Applies what a wrapper does: its inner command, script, files and directory. */
function planWrapper(w: Unwrapped, self: CommandForm, openEnded: boolean, ctx: PlanContext, depth: number, cwds: readonly string[] | null, assigns: string[]): void {
  const { plan } = ctx;
  if (w.risky) plan.risky.push(w.risky);
  for (const r of w.reads) plan.reads.push(...wordTargets(r, cwds));
  for (const x of w.writes) plan.writes.push(...wordTargets(x, cwds));
  if (w.opaque) {
    plan.opaque.push(w.opaque);
    return;
  }
  const innerCwds = w.chdir ? chdirTargets(w.chdir, cwds, ctx.fs) : cwds;
  const innerAssigns = w.assigns.length > 0 ? [...assigns, ...w.assigns] : assigns;
  if (w.alsoSelf || (w.innerAt === undefined && !w.script && !w.defaultCommand)) plan.allowForms.push(self);
  const open = openEnded || !!w.openEnded;
  if (w.script) return shellScript(w.script, single(innerCwds), plan.scripts, plan);
  if (w.defaultCommand) return planWords([{ value: w.defaultCommand, dynamic: false, glob: false, text: w.defaultCommand, fields: [w.defaultCommand] }], open, ctx, depth + 1, innerCwds, innerAssigns);
  if (w.innerAt === undefined) return;
  let inner = w.words.slice(w.innerAt);
  const r = w.replace;
  if (r !== undefined && r !== '') inner = inner.map((x) => (x.value === r && isLiteral(x) ? { ...x, dynamic: true, fromInput: true } : x.value.includes(r) ? { ...x, dynamic: true } : x));
  planWords(inner, open, ctx, depth + 1, innerCwds, innerAssigns);
}

/**
 * Applies what a runner does (runners.ts): its own form is what must be allowed; the command
 * and scripts it runs are planned as well, but only their deny forms, what cannot be checked,
 * their scripts (as deny-only scripts) and their files are kept.
 */
function planRunner(r: Runner, words: ShellWord[], self: CommandForm, openEnded: boolean, ctx: PlanContext, depth: number, cwds: readonly string[] | null, assigns: string[]): void {
  const { plan } = ctx;
  if (r.risky) plan.risky.push(r.risky);
  for (const x of r.reads) plan.reads.push(...wordTargets(x, cwds));
  for (const x of r.writes) plan.writes.push(...wordTargets(x, cwds));
  if (r.opaque) return void plan.opaque.push(r.opaque);
  plan.allowForms.push(self);
  const innerCwds = r.elsewhere ? null : r.chdir ? chdirTargets(r.chdir, cwds, ctx.fs) : cwds;
  for (const s of r.scripts) shellScript(s, single(innerCwds), plan.denyScripts, plan);
  if (r.innerAt === undefined) return;
  const inner = emptyPlan(innerCwds);
  planWords(words.slice(r.innerAt), openEnded || !!r.openEnded, { ...ctx, plan: inner }, depth + 1, innerCwds, [...assigns, ...r.assigns]);
  foldInner(plan, inner);
}

/**
 * Folds the plan of a runner's (or git's) inner command into the outer plan: everything it reads,
 * writes, risks or asks is the outer command's too; its allow forms count as file forms and its
 * scripts as deny scripts (checked against deny and ask rules, never allowed by the outer rule).
 */
function foldInner(plan: CommandPlan, inner: CommandPlan): void {
  plan.denyForms.push(...inner.denyForms);
  plan.opaque.push(...inner.opaque);
  plan.risky.push(...inner.risky);
  plan.denyScripts.push(...inner.scripts, ...inner.denyScripts);
  plan.suspectForms.push(...inner.suspectForms);
  plan.reads.push(...inner.reads);
  plan.writes.push(...inner.writes);
  plan.fileForms.push(...inner.allowForms, ...inner.fileForms);
  plan.hardAsks.push(...inner.hardAsks);
  plan.extras.push(...inner.extras);
}

/**
 * git (gitPlan.ts): its own form is what a rule allows (naming the option for inline code); the
 * commands and scripts it runs are checked against deny and ask rules, as a runner's are; the
 * files its options name are the form's.
 */
function planGit(words: ShellWord[], self: CommandForm, ctx: PlanContext, depth: number, cwds: readonly string[] | null, assigns: string[]): void {
  const { plan } = ctx;
  const g = gitPlan(words);
  const form: CommandForm = g.inlineAt !== undefined ? { ...self, inlineAt: g.inlineAt } : self;
  plan.allowForms.push(form);
  plan.hardAsks.push(...g.hardAsks);
  if (g.uses.length > 0 || g.unknown) plan.extras.push({ form, uses: g.uses, ...(g.unknown ? { unknown: g.unknown } : {}) });
  for (const s of g.scripts) shellScript(s, single(cwds), plan.denyScripts, plan);
  if (g.innerAt === undefined) return;
  const inner = emptyPlan(cwds);
  planWords(words.slice(g.innerAt), self.openEnded, { ...ctx, plan: inner }, depth + 1, cwds, assigns);
  foldInner(plan, inner);
}

/**
 * A build or test tool (toolOptions.ts): its own form is what a rule allows (naming the option
 * for inline code), the programs its options name meet the deny and ask rules, and the files
 * they name are the form's.
 */
function planTool(base: string, t: ToolOptions | { unknown: string }, words: ShellWord[], self: CommandForm, openEnded: boolean, plan: CommandPlan, cwds: readonly string[] | null): void {
  if ('unknown' in t) {
    plan.allowForms.push(self);
    plan.extras.push({ form: self, uses: [], unknown: t.unknown });
  } else {
    const form: CommandForm = t.inlineAt !== undefined ? { ...self, inlineAt: t.inlineAt } : self;
    plan.allowForms.push(form);
    if (t.uses.length > 0) plan.extras.push({ form, uses: t.uses });
    for (const s of t.scripts) shellScript(s, single(cwds), plan.denyScripts, plan);
  }
  if (!NOT_RUNNERS.has(base)) suspects(base, words, openEnded, plan);
}

/** `sh -c '…'`, `bash script.sh`, or a shell reading its input. */
function planShell(words: ShellWord[], self: CommandForm, cmd: SimpleCommand, plan: CommandPlan, cwd: string | null): void {
  let i = 1;
  let inline = false;
  for (; i < words.length && (isOption(words[i]) || words[i]?.value.startsWith('+')); i++) {
    const v = words[i]?.value ?? '';
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(v)) inline = true;
    if (/^(-o|\+o|-O|\+O|--rcfile|--init-file)$/.test(v)) i++;
  }
  if (inline) return shellScript(words.slice(i, i + 1), cwd, plan.scripts, plan);
  if (words[i]) return void plan.allowForms.push(self);
  if (cmd.stdin && !cmd.piped) return shellScript([{ value: cmd.stdin.text, dynamic: !cmd.stdin.literal, glob: false, text: cmd.stdin.text }], cwd, plan.scripts, plan);
  if (!cmd.piped && !cmd.stdin) return void plan.allowForms.push(self);
  plan.opaque.push('a shell reading commands from its input (for example piped into it) cannot be checked');
}

/** Queues a literal script into `into` (plan.scripts or plan.denyScripts); a computed one is opaque. */
function shellScript(words: ShellWord[], cwd: string | null, into: InlineScript[], plan: CommandPlan): void {
  if (words.length === 0) return void plan.opaque.push('an inline script without a body');
  if (words.some((w) => w.dynamic)) return void plan.opaque.push('an inline script built at run time cannot be checked');
  into.push({ source: words.map((w) => w.value).join(' '), cwd });
}

/**
 * find: its own arguments form one command; each -exec/-ok body is checked as a command. A `{}`
 * standing alone hands it the files found: every file below find's starting points (a word
 * that stands for them, `belowWord`), when those are known; otherwise it is computed.
 */
function planFind(words: ShellWord[], self: CommandForm, ctx: PlanContext, depth: number, cwds: readonly string[] | null, assigns: string[]): void {
  const { plan } = ctx;
  const own: ShellWord[] = [];
  const roots = findRoots(words, false);
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (!w.dynamic && /^-(exec|execdir|ok|okdir)$/.test(w.value)) {
      let j = i + 1;
      while (j < words.length && !/^[;+]$/.test(words[j]?.value ?? '')) j++;
      // -execdir runs from each found file's folder: relative paths in the body are unknown.
      const known = roots !== null && w.value !== '-execdir' && w.value !== '-okdir';
      const body = words.slice(i + 1, j).flatMap((b) => (b.value === '{}' && known && isLiteral(b) ? roots.map(belowWord) : b.value.includes('{}') ? [{ ...b, dynamic: true }] : [b]));
      if (body.length === 0) plan.opaque.push('find -exec without a command');
      else planWords(body, !known, ctx, depth + 1, known ? cwds : cwds, assigns);
      i = j;
      continue;
    }
    own.push(w);
  }
  plan.allowForms.push({ ...self, words: self.words.slice(0, 1).concat(own.slice(1)) });
}
