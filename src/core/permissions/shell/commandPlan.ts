import { basename, isAbsolute, resolve } from 'node:path';
import { isDangerousVariable, type FileTarget, type SimpleCommand } from './analyze';
import { execOptionAt } from './execOptions';
import { isLiteral } from './options';
import { unwrap, type Unwrapped } from './wrappers';
import type { ShellWord } from './words';

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
  /** Where it runs when a wrapper changed directory (`env -C`); null: unknown. Default: the plan's. */
  cwd?: string | null;
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
  scripts: { source: string; cwd: string | null }[];
  /** Where the command runs (null: unknown after a computed `cd`). */
  cwd: string | null;
  /** Files its wrappers read (`xargs -a F`) or write (`time -o F`, `flock F`). */
  reads: FileTarget[];
  writes: FileTarget[];
}

const SYSTEM_DIRS = ['/bin/', '/usr/bin/', '/usr/local/bin/', '/sbin/', '/usr/sbin/', '/usr/local/sbin/'];
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox', 'rbash']);
const INTERPRETER_FLAGS: Record<string, string[]> = {
  python: ['-c'], node: ['-e', '--eval', '-p', '--print', '-pe'], nodejs: ['-e', '--eval', '-p', '--print'], deno: ['eval'], bun: ['-e', '--eval', '-p', '--print'],
  perl: ['-e', '-E'], ruby: ['-e'], php: ['-r'], lua: ['-e'], osascript: ['-e'], pwsh: ['-c', '-command', '-encodedcommand', '-ec'], powershell: ['-c', '-command', '-encodedcommand'],
  Rscript: ['-e'], R: ['-e'], tclsh: [], irb: [], julia: ['-e'], groovy: ['-e'], jshell: [],
};
const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);
const NETWORK_TOOLS = new Set(['curl', 'wget', 'nc', 'ncat', 'netcat', 'socat', 'ssh', 'scp', 'sftp', 'rsync', 'ftp', 'telnet', 'aria2c', 'http', 'https']);

function isOption(w: ShellWord | undefined): boolean {
  return !!w && !w.dynamic && w.value.startsWith('-') && w.value.length > 1;
}

/** The name a rule sees: `/usr/bin/git` is `git` (only for system directories). */
export function commandKey(name: string): { base: string; trusted: boolean } {
  if (!name.includes('/')) return { base: name, trusted: true };
  return { base: basename(name), trusted: SYSTEM_DIRS.some((d) => name.startsWith(d) && !name.slice(d.length).includes('/')) };
}

/** Normalised interpreter family: python3.12 → python. */
function family(base: string): string {
  const m = /^(python|perl|ruby|php|lua|node)[0-9.]*$/.exec(base);
  return m?.[1] ?? base;
}

/**
 * Plans one simple command (and its wrappers). `home` expands `~` in directories wrappers
 * change to (`env -C ~/x`); without it such a directory is unknown.
 */
export function planCommand(cmd: SimpleCommand, home?: string): CommandPlan {
  const plan: CommandPlan = { denyForms: [], allowForms: [], opaque: [], risky: [], scripts: [], cwd: cmd.cwd, reads: [], writes: [] };
  for (const a of cmd.assignments) if (isDangerousVariable(a)) plan.opaque.push(`sets ${a} for the command`);
  planWords(cmd.words, false, { cmd, plan, home }, 0, cmd.cwd, cmd.assignments);
  return plan;
}

interface PlanContext {
  cmd: SimpleCommand;
  plan: CommandPlan;
  home: string | undefined;
}

/** Where a literal path word points from `cwd`; null when unknowable. */
function resolveWord(w: ShellWord, cwd: string | null, home: string | undefined): string | null {
  if (!isLiteral(w)) return null;
  let v = w.value;
  if (v === '~' || v.startsWith('~/')) {
    if (home === undefined) return null;
    v = home + v.slice(1);
  } else if (v.startsWith('~')) return null;
  if (isAbsolute(v)) return resolve(v);
  return cwd === null ? null : resolve(cwd, v);
}

const ASSIGNMENT_WORD = /^([A-Za-z_][A-Za-z0-9_]*)\+?=/;

function planWords(words: ShellWord[], openEnded: boolean, ctx: PlanContext, depth: number, cwd: string | null, assigns: string[]): void {
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
    return planWords(words.slice(1), openEnded, ctx, depth + 1, cwd, [...assigns, assigned[1]]);
  }
  const { base, trusted } = commandKey(first.value);
  const normalized: ShellWord[] = [{ ...first, value: base }, ...words.slice(1)];
  const self: CommandForm = { words: trusted ? normalized : words, openEnded, cwd, assigns };
  plan.denyForms.push({ words, openEnded });
  if (first.value !== base) plan.denyForms.push({ words: normalized, openEnded });
  const rest = words.slice(1);
  const fam = family(base);
  if (NETWORK_TOOLS.has(base)) plan.risky.push(`${base} uses the network`);

  const w = unwrap(base, words);
  if (w) return planWrapper(w, self, openEnded, ctx, depth, cwd, assigns);
  switch (base) {
    case 'su':
    case 'runuser':
    case 'chroot':
    case 'unshare':
    case 'nsenter':
    case 'flatpak-spawn':
      plan.risky.push(`${base} runs with another identity or root`);
      plan.opaque.push(`${base} runs commands that cannot be checked`);
      return;
    case 'eval':
      return shellScript(rest, cwd, plan);
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
      return planFind(words, self, ctx, depth, cwd, assigns);
    default:
      break;
  }
  if (SHELLS.has(base)) return planShell(words, self, cmd, plan, cwd);
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
  plan.allowForms.push(self);
}

/** Applies what a wrapper does: its inner command, script, files and directory. */
function planWrapper(w: Unwrapped, self: CommandForm, openEnded: boolean, ctx: PlanContext, depth: number, cwd: string | null, assigns: string[]): void {
  const { plan } = ctx;
  if (w.risky) plan.risky.push(w.risky);
  for (const r of w.reads) plan.reads.push({ path: resolveWord(r, cwd, ctx.home), text: r.text });
  for (const x of w.writes) plan.writes.push({ path: resolveWord(x, cwd, ctx.home), text: x.text });
  if (w.opaque) {
    plan.opaque.push(w.opaque);
    return;
  }
  const innerCwd = w.chdir ? resolveWord(w.chdir, cwd, ctx.home) : cwd;
  const innerAssigns = w.assigns.length > 0 ? [...assigns, ...w.assigns] : assigns;
  if (w.alsoSelf || (w.innerAt === undefined && !w.script && !w.defaultCommand)) plan.allowForms.push(self);
  const open = openEnded || !!w.openEnded;
  if (w.script) return shellScript(w.script, innerCwd, plan);
  if (w.defaultCommand) return planWords([{ value: w.defaultCommand, dynamic: false, glob: false, text: w.defaultCommand }], open, ctx, depth + 1, innerCwd, innerAssigns);
  if (w.innerAt === undefined) return;
  let inner = w.words.slice(w.innerAt);
  const r = w.replace;
  if (r !== undefined && r !== '') inner = inner.map((x) => (x.value.includes(r) ? { ...x, dynamic: true } : x));
  planWords(inner, open, ctx, depth + 1, innerCwd, innerAssigns);
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
  if (inline) return shellScript(words.slice(i, i + 1), cwd, plan);
  if (words[i]) return void plan.allowForms.push(self);
  if (cmd.stdin && !cmd.piped) return shellScript([{ value: cmd.stdin.text, dynamic: !cmd.stdin.literal, glob: false, text: cmd.stdin.text }], cwd, plan);
  if (!cmd.piped && !cmd.stdin) return void plan.allowForms.push(self);
  plan.opaque.push('a shell reading commands from its input (for example piped into it) cannot be checked');
}

function shellScript(words: ShellWord[], cwd: string | null, plan: CommandPlan): void {
  if (words.length === 0) return void plan.opaque.push('an inline script without a body');
  if (words.some((w) => w.dynamic)) return void plan.opaque.push('an inline script built at run time cannot be checked');
  plan.scripts.push({ source: words.map((w) => w.value).join(' '), cwd });
}

/** find: its own arguments form one command; each -exec/-ok body is checked as a command. */
function planFind(words: ShellWord[], self: CommandForm, ctx: PlanContext, depth: number, cwd: string | null, assigns: string[]): void {
  const { plan } = ctx;
  const own: ShellWord[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (!w.dynamic && /^-(exec|execdir|ok|okdir)$/.test(w.value)) {
      let j = i + 1;
      while (j < words.length && !/^[;+]$/.test(words[j]?.value ?? '')) j++;
      const body = words.slice(i + 1, j).map((b) => (b.value.includes('{}') ? { ...b, dynamic: true } : b));
      if (body.length === 0) plan.opaque.push('find -exec without a command');
      else planWords(body, true, ctx, depth + 1, cwd, assigns);
      i = j;
      continue;
    }
    own.push(w);
  }
  plan.allowForms.push({ ...self, words: self.words.slice(0, 1).concat(own.slice(1)) });
}
