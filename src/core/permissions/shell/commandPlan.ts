import { basename } from 'node:path';
import { isDangerousVariable, type SimpleCommand } from './analyze';
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
/** Option flags that make a command run another program it names. */
const EXEC_OPTIONS: Record<string, RegExp> = {
  git: /^(-c|--config-env(=.*)?|--exec-path(=.*)?|--upload-pack(=.*)?|--receive-pack(=.*)?|--exec(=.*)?)$/,
  rg: /^(--pre(=.*)?|--pre-glob(=.*)?)$/,
  tar: /^(--to-command(=.*)?|--use-compress-program(=.*)?|-I|--checkpoint-action(=.*)?|--info-script(=.*)?|-F|--new-volume-script(=.*)?)$/,
  rsync: /^(-e|--rsh(=.*)?|--rsync-path(=.*)?)$/,
  sort: /^(--compress-program(=.*)?)$/,
  man: /^(-P|--pager(=.*)?|-H.*|--html(=.*)?)$/,
  zip: /^(-TT|--unzip-command(=.*)?|-T)$/,
  ssh: /^(-o.*|-F)$/,
};

function isOption(w: ShellWord | undefined): boolean {
  return !!w && !w.dynamic && w.value.startsWith('-') && w.value.length > 1;
}

/** The name a rule sees: `/usr/bin/git` is `git` (only for system directories). */
function commandKey(name: string): { base: string; trusted: boolean } {
  if (!name.includes('/')) return { base: name, trusted: true };
  return { base: basename(name), trusted: SYSTEM_DIRS.some((d) => name.startsWith(d) && !name.slice(d.length).includes('/')) };
}

/** Normalised interpreter family: python3.12 → python. */
function family(base: string): string {
  const m = /^(python|perl|ruby|php|lua|node)[0-9.]*$/.exec(base);
  return m?.[1] ?? base;
}

/** Plans one simple command (and its wrappers). `depth` bounds unwrapping. */
export function planCommand(cmd: SimpleCommand): CommandPlan {
  const plan: CommandPlan = { denyForms: [], allowForms: [], opaque: [], risky: [], scripts: [], cwd: cmd.cwd };
  for (const a of cmd.assignments) if (isDangerousVariable(a)) plan.opaque.push(`sets ${a} for the command`);
  planWords(cmd.words, false, cmd, plan, 0);
  return plan;
}

function planWords(words: ShellWord[], openEnded: boolean, cmd: SimpleCommand, plan: CommandPlan, depth: number): void {
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
  const { base, trusted } = commandKey(first.value);
  const normalized: ShellWord[] = [{ ...first, value: base }, ...words.slice(1)];
  const self: CommandForm = { words: trusted ? normalized : words, openEnded };
  plan.denyForms.push({ words, openEnded });
  if (first.value !== base) plan.denyForms.push({ words: normalized, openEnded });
  const inner = (from: number, open = openEnded): void => planWords(words.slice(from), open, cmd, plan, depth + 1);
  const rest = words.slice(1);
  const fam = family(base);
  if (NETWORK_TOOLS.has(base)) plan.risky.push(`${base} uses the network`);

  switch (base) {
    case 'timeout': {
      let i = 1;
      for (; i < words.length && isOption(words[i]); i++) if (/^(-s|-k|--signal|--kill-after)$/.test(words[i]?.value ?? '')) i++;
      return words[i + 1] ? inner(i + 1) : void plan.allowForms.push(self);
    }
    case 'nice':
    case 'ionice':
    case 'stdbuf':
    case 'chrt':
    case 'taskset': {
      let i = 1;
      for (; i < words.length && isOption(words[i]); i++) if (/^(-n|-c|-p|-i|-o|-e|--adjustment|--class|--classdata)$/.test(words[i]?.value ?? '')) i++;
      if ((base === 'chrt' || base === 'taskset') && words[i]) i++;
      return words[i] ? inner(i) : void plan.allowForms.push(self);
    }
    case 'nohup':
    case 'time':
    case 'coproc':
    case 'builtin':
    case 'setsid':
    case 'exec':
    case 'command': {
      let i = 1;
      while (isOption(words[i])) {
        if ((base === 'command' && /^-[vV]+$/.test(words[i]?.value ?? '')) || (base === 'exec' && words[i]?.value === '-a')) {
          if (base === 'command') return void plan.allowForms.push(self);
          i++;
        }
        i++;
      }
      return words[i] ? inner(i) : void plan.allowForms.push(self);
    }
    case 'env': {
      let i = 1;
      for (; i < words.length; i++) {
        const w = words[i] as ShellWord;
        if (w.dynamic) return void plan.opaque.push('env with arguments known only at run time');
        if (/^(-S|--split-string)/.test(w.value)) return void plan.opaque.push('env -S splits a string into a command');
        if (/^(-u|-C|--unset|--chdir)$/.test(w.value)) {
          i++;
          continue;
        }
        if (isOption(w)) continue;
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w.value);
        if (m?.[1]) {
          if (isDangerousVariable(m[1])) plan.opaque.push(`sets ${m[1]} for the command`);
          continue;
        }
        break;
      }
      return words[i] ? inner(i) : void plan.allowForms.push(self);
    }
    case 'sudo':
    case 'doas': {
      plan.risky.push(`${base} runs with raised privileges`);
      let i = 1;
      for (; i < words.length && isOption(words[i]); i++) if (/^(-u|-g|-C|-D|-h|-p|-r|-t|-U|-T|--user|--group)$/.test(words[i]?.value ?? '')) i++;
      plan.allowForms.push(self);
      return words[i] ? inner(i) : undefined;
    }
    case 'su':
    case 'runuser':
    case 'chroot':
    case 'unshare':
    case 'nsenter':
    case 'flatpak-spawn':
      plan.risky.push(`${base} runs with another identity or root`);
      plan.opaque.push(`${base} runs commands that cannot be checked`);
      return;
    case 'xargs': {
      let i = 1;
      let replace: string | undefined;
      for (; i < words.length && isOption(words[i]); i++) {
        const v = words[i]?.value ?? '';
        if (/^(-i|--replace)$/.test(v) || /^(-i|--replace=)/.test(v)) replace = v.replace(/^(-i|--replace=?)/, '') || '{}';
        if (v.startsWith('-I')) replace = v.slice(2) || words[i + 1]?.value || '{}';
        if (/^(-a|-d|-E|-e|-I|-L|-l|-n|-P|-s|--arg-file|--delimiter|--max-args|--max-procs)$/.test(v)) i++;
      }
      if (words[i] && replace !== undefined) {
        const r = replace;
        return planWords(words.slice(i).map((w) => (w.value.includes(r) ? { ...w, dynamic: true } : w)), true, cmd, plan, depth + 1);
      }
      if (words[i]) return inner(i, true);
      return planWords([{ value: 'echo', dynamic: false, glob: false, text: 'echo' }], true, cmd, plan, depth + 1);
    }
    case 'watch': {
      let i = 1;
      for (; i < words.length && isOption(words[i]); i++) if (/^(-n|-d|--interval|-g)$/.test(words[i]?.value ?? '')) i++;
      return shellScript(words.slice(i), cmd, plan);
    }
    case 'eval':
      return shellScript(rest, cmd, plan);
    case 'find':
      return planFind(words, self, cmd, plan, depth);
    default:
      break;
  }
  if (SHELLS.has(base)) return planShell(words, self, cmd, plan);
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
  const exec = EXEC_OPTIONS[base];
  if (exec) {
    const at = words.findIndex((w, k) => k > 0 && (w.dynamic || exec.test(w.value)));
    if (at > 0) return void plan.allowForms.push({ ...self, inlineAt: at });
  }
  plan.allowForms.push(self);
}

/** `sh -c '…'`, `bash script.sh`, or a shell reading its input. */
function planShell(words: ShellWord[], self: CommandForm, cmd: SimpleCommand, plan: CommandPlan): void {
  let i = 1;
  let inline = false;
  for (; i < words.length && (isOption(words[i]) || words[i]?.value.startsWith('+')); i++) {
    const v = words[i]?.value ?? '';
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(v)) inline = true;
    if (/^(-o|\+o|-O|\+O|--rcfile|--init-file)$/.test(v)) i++;
  }
  if (inline) return shellScript(words.slice(i, i + 1), cmd, plan);
  if (words[i]) return void plan.allowForms.push(self);
  if (cmd.stdin && !cmd.piped) return shellScript([{ value: cmd.stdin.text, dynamic: !cmd.stdin.literal, glob: false, text: cmd.stdin.text }], cmd, plan);
  if (!cmd.piped && !cmd.stdin) return void plan.allowForms.push(self);
  plan.opaque.push('a shell reading commands from its input (for example piped into it) cannot be checked');
}

function shellScript(words: ShellWord[], cmd: SimpleCommand, plan: CommandPlan): void {
  if (words.length === 0) return void plan.opaque.push('an inline script without a body');
  if (words.some((w) => w.dynamic)) return void plan.opaque.push('an inline script built at run time cannot be checked');
  plan.scripts.push({ source: words.map((w) => w.value).join(' '), cwd: cmd.cwd });
}

/** find: its own arguments form one command; each -exec/-ok body is checked as a command. */
function planFind(words: ShellWord[], self: CommandForm, cmd: SimpleCommand, plan: CommandPlan, depth: number): void {
  const own: ShellWord[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (!w.dynamic && /^-(exec|execdir|ok|okdir)$/.test(w.value)) {
      let j = i + 1;
      while (j < words.length && !/^[;+]$/.test(words[j]?.value ?? '')) j++;
      const body = words.slice(i + 1, j).map((b) => (b.value.includes('{}') ? { ...b, dynamic: true } : b));
      if (body.length === 0) plan.opaque.push('find -exec without a command');
      else planWords(body, true, cmd, plan, depth + 1);
      i = j;
      continue;
    }
    own.push(w);
  }
  plan.allowForms.push({ ...self, words: self.words.slice(0, 1).concat(own.slice(1)) });
}
