import { unsafeSetting } from '../readOnly/gitConfig';
import { GIT_GLOBAL } from '../readOnly/git';
import type { FileUse } from '../readOnly/types';
import { isLiteral, parseOptions } from './options';
import type { ShellWord } from './words';

/**
 * git as a Bash rule allows it (`Bash(git rebase:*)`, `Bash(git commit:*)`): the programs its
 * sub-commands run and the files its options name, checked against git 2.39's option lists
 * (`git <cmd> -h`) and documentation. Read-only forms and what they read are readOnly/git.ts's.
 *
 * - **Runners** — running a program is what the form is for: `git bisect run CMD…`,
 *   `git rebase -x/--exec CMD`, `git submodule foreach CMD`, `git difftool -x/--extcmd CMD`,
 *   `git grep -O/--open-files-in-pager=CMD`. A rule for the sub-command allows them, and the
 *   command they run meets the deny and ask rules as if it stood alone (`Bash(rm:*)` denies
 *   `git bisect run rm -rf src`).
 * - **Inline code** — an option that makes an unrelated operation run a program:
 *   `git -c KEY=VALUE` or `git clone -c/--config KEY=VALUE` for a key that names a program or
 *   hooks (anything but keys that only change what is shown, gitConfig.ts), `--config-env`,
 *   `--exec-path=DIR`, `clone -u/--upload-pack`, `--upload-pack`, `--receive-pack`, `--exec`
 *   (fetch, pull, push, ls-remote, archive), `clone/init --template=DIR` (its hooks run). Only a
 *   rule that names the option allows it (`Bash(git -c:*)`), and a program it names is checked
 *   against the deny and ask rules too.
 * - **Files** — `commit -F/-t/--pathspec-from-file`, `tag/notes/merge -F`, `archive --add-file`,
 *   `format-patch --signature-file` read; `archive -o`, `format-patch -o DIR`, `clone`'s and
 *   `init`'s and `worktree add`'s folder write; `git config` setting a key that runs programs
 *   changes a protected place (it asks in every mode).
 * A computed word where one of these options could stand leaves the files unknown.
 */
export interface GitPlan {
  /** Index of a word that starts inline code (a rule must name it). */
  inlineAt?: number;
  /** Index of the command a runner runs (`git bisect run CMD`). */
  innerAt?: number;
  /** Shell command lines git runs. */
  scripts: ShellWord[][];
  uses: FileUse[];
  /** Why the files cannot be known, if so. */
  unknown?: string;
  /** Why it asks in every mode. */
  hardAsks: string[];
}

/** A command-line config key that only changes what is shown (no program, hooks or includes). */
function harmlessKey(key: string): boolean {
  const m = /^([^.]+)(?:\.(.*))?\.([^.]+)$/.exec(key);
  if (!m) return false;
  const [, section = '', sub, name = ''] = m;
  const entry = { section: section.toLowerCase(), key: name.toLowerCase(), ...(sub !== undefined ? { subsection: sub } : {}) };
  if (entry.section === 'alias' || (entry.section === 'core' && entry.key === 'hookspath')) return false;
  return unsafeSetting(entry) === null;
}

/** Keys whose value is a shell command line git runs (for the deny and ask rules to see it). */
const COMMAND_KEYS = new RegExp(
  `^(${[
    'core\\.(pager|editor|sshcommand|askpass|gitproxy|fsmonitor|alternaterefscommand)',
    'sequence\\.editor',
    'diff\\.external',
    'pager\\..+',
    'alias\\..+',
    'credential\\.(.+\\.)?helper',
    'gpg\\.(.+\\.)?program',
    'gpg\\.ssh\\.defaultkeycommand',
    '(diff|merge|difftool|mergetool|filter|browser|man)\\..+\\.(command|textconv|cmd|driver|clean|smudge|process|path)',
    'uploadpack\\.packobjectshook',
    'remote\\..+\\.(uploadpack|receivepack)',
  ].join('|')})$`,
  'i',
);

const lit = (w: ShellWord | undefined): w is ShellWord => !!w && isLiteral(w);
const word = (value: string, from: ShellWord): ShellWord => ({ ...from, value, fields: [value] });

/**
 * Long options by sub-command, as `[name, effect]`, matched from any unambiguous prefix of at
 * least three characters (parse-options): `read`/`write` name a file, `inline` a program (inline
 * code), `runner` a command line git runs, `value` any other option that takes a value.
 */
type Effect = 'read' | 'write' | 'writeDir' | 'inline' | 'inlineConfig' | 'runner' | 'value';
const SUB_OPTIONS: Record<string, { short?: Record<string, Effect>; long: Record<string, Effect> }> = {
  commit: {
    short: { F: 'read', t: 'read', m: 'value', c: 'value', C: 'value' },
    long: {
      ...{ file: 'read', template: 'read', 'pathspec-from-file': 'read', message: 'value', author: 'value', date: 'value' },
      ...{ 'reedit-message': 'value', 'reuse-message': 'value', squash: 'value', fixup: 'value', trailer: 'value', cleanup: 'value' },
    },
  },
  tag: { short: { F: 'read', m: 'value', u: 'value' }, long: { file: 'read', message: 'value', 'local-user': 'value', cleanup: 'value' } },
  notes: { short: { F: 'read', m: 'value', C: 'value', c: 'value' }, long: { file: 'read', message: 'value' } },
  merge: { short: { F: 'read', m: 'value', s: 'value', X: 'value' }, long: { file: 'read', message: 'value', strategy: 'value', 'strategy-option': 'value', 'into-name': 'value' } },
  rebase: {
    short: { x: 'runner', s: 'value', X: 'value', C: 'value' },
    long: { exec: 'runner', onto: 'value', strategy: 'value', 'strategy-option': 'value', whitespace: 'value', empty: 'value' },
  },
  difftool: { short: { x: 'runner', t: 'value' }, long: { extcmd: 'runner', tool: 'value' } },
  grep: {
    short: { O: 'runner', e: 'value', f: 'read', m: 'value', A: 'value', B: 'value', C: 'value' },
    long: { 'open-files-in-pager': 'runner', 'max-depth': 'value', threads: 'value', context: 'value' },
  },
  clone: {
    short: { u: 'inline', c: 'inlineConfig', o: 'value', b: 'value', j: 'value' },
    long: {
      ...{ 'upload-pack': 'inline', template: 'inline', config: 'inlineConfig', 'separate-git-dir': 'writeDir', reference: 'value', 'reference-if-able': 'value' },
      ...{ origin: 'value', branch: 'value', depth: 'value', 'shallow-since': 'value', 'shallow-exclude': 'value', filter: 'value' },
      ...{ 'server-option': 'value', 'bundle-uri': 'value', jobs: 'value' },
    },
  },
  init: { short: { b: 'value' }, long: { template: 'inline', 'separate-git-dir': 'writeDir', 'initial-branch': 'value', 'object-format': 'value' } },
  fetch: { short: { j: 'value', o: 'value' }, long: { 'upload-pack': 'inline', exec: 'inline', depth: 'value', refmap: 'value' } },
  pull: { long: { 'upload-pack': 'inline', exec: 'inline', depth: 'value' } },
  'ls-remote': { short: { o: 'value' }, long: { 'upload-pack': 'inline', exec: 'inline', sort: 'value' } },
  push: { short: { o: 'value' }, long: { 'receive-pack': 'inline', exec: 'inline', repo: 'value', 'push-option': 'value' } },
  archive: { short: { o: 'write' }, long: { output: 'write', exec: 'inline', 'add-file': 'read', format: 'value', prefix: 'value', remote: 'value' } },
  'format-patch': {
    short: { o: 'writeDir', v: 'value' },
    long: { 'output-directory': 'writeDir', 'signature-file': 'read', suffix: 'value', 'subject-prefix': 'value', to: 'value', cc: 'value', signature: 'value' },
  },
};

/** The long option a `--prefix` means in `table` (parse-options: an unambiguous prefix), if any. */
function longOf(table: Record<string, Effect>, name: string): string | undefined {
  if (Object.hasOwn(table, name)) return name;
  if (name.length < 3) return undefined;
  const hits = Object.keys(table).filter((k) => k.startsWith(name));
  return hits.length === 1 ? hits[0] : undefined;
}

/** Plans `git …` (words[0] is git); see above. Never throws. */
export function gitPlan(words: readonly ShellWord[]): GitPlan {
  const out: GitPlan = { scripts: [], uses: [], hardAsks: [] };
  const inline = (at: number): void => {
    out.inlineAt ??= at;
  };
  const g = parseOptions(GIT_GLOBAL, words, 1);
  if (!g.ok) {
    const at = words.findIndex((w, k) => k > 0 && (w.dynamic || /^(-c|--config-env(=.*)?|--exec-path=.*)$/.test(w.value)));
    if (at > 0) inline(at);
    out.unknown = `git's own options could not be read (${g.reason})`;
    return out;
  }
  let dir: string | undefined;
  for (const o of g.args.options) {
    if (o.name === '-c') {
      const kv = o.value ?? '';
      const eq = kv.indexOf('=');
      const key = eq < 0 ? kv : kv.slice(0, eq);
      if (!o.valueWord || !isLiteral(o.valueWord) || !harmlessKey(key)) inline(o.at);
      if (eq >= 0 && o.valueWord && COMMAND_KEYS.test(key)) out.scripts.push([word(kv.slice(eq + 1).replace(/^!/, ''), o.valueWord)]);
    } else if (o.name === '--config-env' || (o.name === '--exec-path' && o.value !== undefined)) inline(o.at);
    else if (o.name === '-C') dir = o.valueWord && isLiteral(o.valueWord) ? (dir === undefined || (o.value ?? '').startsWith('/') ? o.value : `${dir}/${o.value}`) : undefined;
  }
  const at = g.args.end;
  const subWord = words[at];
  if (!lit(subWord)) return out;
  const sub = subWord.value;
  const rel = (v: string): string => (dir === undefined || v.startsWith('/') ? v : `${dir}/${v}`);
  const rest = words.slice(at + 1);
  switch (sub) {
    case 'bisect':
      if (lit(rest[0]) && rest[0].value === 'run') {
        if (rest.length < 2) return out;
        out.innerAt = at + 2;
      }
      return out;
    case 'submodule': {
      let i = 0;
      while (lit(rest[i]) && /^(--quiet|-q|--cached)$/.test(rest[i]?.value ?? '')) i++;
      if (!lit(rest[i]) || rest[i]?.value !== 'foreach') return out;
      i++;
      while (lit(rest[i]) && /^(--recursive|-q|--quiet)$/.test(rest[i]?.value ?? '')) i++;
      const cmd = rest.slice(i);
      if (cmd.length > 0) out.scripts.push(cmd);
      return out;
    }
    case 'config':
      configPlan(rest, rel, out);
      return out;
    case 'worktree':
      if (lit(rest[0]) && (rest[0].value === 'add' || rest[0].value === 'move')) {
        const paths = rest.slice(1).filter((w) => !w.value.startsWith('-'));
        const target = rest[0].value === 'add' ? paths[0] : paths[1];
        if (target) out.uses.push({ kind: 'write', value: rel(target.value), word: target, byRule: true });
        if (rest.some((w) => w.dynamic)) out.unknown = 'git worktree with words known only at run time';
      }
      return out;
    default:
      break;
  }
  const spec = SUB_OPTIONS[sub];
  if (!spec) return out;
  let dashDash = false;
  const operands: ShellWord[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as ShellWord;
    const abs = at + 1 + i;
    if (dashDash) {
      operands.push(w);
      continue;
    }
    if (!w.dynamic && w.value === '--') {
      dashDash = true;
      continue;
    }
    if (w.dynamic && !(w.single && w.value.startsWith('-') && w.value.length > 1 && w.value[1] !== '\u0000')) {
      // A computed word may be any option of the table.
      out.unknown = `git ${sub} with a word known only at run time (${w.text}) where an option could stand`;
      operands.push(w);
      continue;
    }
    let effect: Effect | undefined;
    let value: string | undefined;
    let valueWord: ShellWord | undefined;
    if (w.value.startsWith('--')) {
      const eq = w.value.indexOf('=');
      const name = longOf(spec.long, w.value.slice(2, eq < 0 ? undefined : eq));
      if (name === undefined) continue;
      effect = spec.long[name];
      if (eq >= 0) {
        value = w.value.slice(eq + 1);
        valueWord = w;
      } else if (effect === 'runner' && sub === 'grep') value = undefined;
      else {
        valueWord = rest[++i];
        value = valueWord?.value;
      }
    } else if (w.value.startsWith('-') && w.value.length > 1) {
      // A cluster: the first letter that takes a value takes the rest of the word or the next one.
      for (let k = 1; k < w.value.length; k++) {
        const e = spec.short?.[w.value[k] as string];
        if (!e) continue;
        effect = e;
        const attached = w.value.slice(k + 1);
        if (attached !== '') {
          value = attached;
          valueWord = w;
        } else if (!(e === 'runner' && sub === 'grep')) {
          valueWord = rest[++i];
          value = valueWord?.value;
        }
        break;
      }
      if (effect === undefined) continue;
    } else {
      operands.push(w);
      continue;
    }
    if (valueWord && !isLiteral(valueWord) && !valueWord.single) out.unknown = `git ${sub} ${w.text} with a value known only at run time`;
    const known = valueWord !== undefined && isLiteral(valueWord) && value !== undefined;
    switch (effect) {
      case 'read':
        if (!known) out.unknown ??= `git ${sub} reads a file named only at run time`;
        else if (value !== '-') out.uses.push({ kind: 'read', value: rel(value as string), word: valueWord as ShellWord });
        break;
      case 'write':
        if (!known) out.unknown ??= `git ${sub} writes a file named only at run time`;
        else out.uses.push({ kind: 'write', value: rel(value as string), word: valueWord as ShellWord, byRule: true });
        break;
      case 'writeDir':
        if (!known) out.unknown ??= `git ${sub} writes below a folder named only at run time`;
        else out.uses.push({ kind: 'write', value: rel(`${value as string}/0001.patch`), byRule: true });
        break;
      case 'inline':
        inline(abs);
        if (valueWord && value !== undefined) out.scripts.push([word(value, valueWord)]);
        break;
      case 'inlineConfig': {
        const eq = (value ?? '').indexOf('=');
        const key = eq < 0 ? (value ?? '') : (value ?? '').slice(0, eq);
        if (!known || !harmlessKey(key)) inline(abs);
        if (known && eq >= 0 && COMMAND_KEYS.test(key)) out.scripts.push([word((value as string).slice(eq + 1).replace(/^!/, ''), valueWord as ShellWord)]);
        break;
      }
      case 'runner':
        if (valueWord && value !== undefined) out.scripts.push([word(value, valueWord)]);
        break;
      default:
        break;
    }
  }
  // Where clone and init make the new repository.
  if (sub === 'clone' && operands.length >= 1) {
    const target = operands[1] ?? operands[0];
    const name = operands[1] ? target?.value : humanish(operands[0]?.value ?? '');
    if (target && name !== undefined && !target.dynamic) out.uses.push({ kind: 'write', value: rel(name), word: target, byRule: true });
  } else if (sub === 'init' && operands[0] && !operands[0].dynamic) out.uses.push({ kind: 'write', value: rel(operands[0].value), word: operands[0], byRule: true });
  return out;
}

/** The folder `git clone URL` makes: the last part of the URL without `.git` (clone.c's guess). */
function humanish(url: string): string | undefined {
  const m = /([^/:\\]+?)(?:\.git)?\/*$/.exec(url.replace(/\/\.git\/*$/, ''));
  return m?.[1];
}

/**
 * `git config`: setting a key (NAME VALUE, --add, --replace-all) that is not one of the keys
 * that only change what is shown writes a protected place (.git/config: hooks and programs
 * run from it), which asks in every mode; `--file F` names the file read or written.
 */
function configPlan(rest: readonly ShellWord[], rel: (v: string) => string, out: GitPlan): void {
  if (rest.some((w) => w.dynamic)) {
    out.unknown = 'git config with words known only at run time';
    return;
  }
  const values = rest.map((w) => w.value);
  const reading = values.some((v) => /^(--get|--get-all|--get-regexp|--get-urlmatch|--get-color|--get-colorbool|-l|--list)$/.test(v));
  const writes = values.some((v) => /^(--add|--replace-all|--unset|--unset-all|--rename-section|--remove-section|-e|--edit)$/.test(v));
  const file = values.findIndex((v) => v === '-f' || v === '--file' || v.startsWith('--file='));
  const operands: string[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string;
    if (/^(-f|--file|-t|--type|--blob|--default)$/.test(v)) {
      i++;
      continue;
    }
    if (!v.startsWith('-')) operands.push(v);
  }
  if (file >= 0) {
    const v = values[file] as string;
    const path = v.startsWith('--file=') ? v.slice(7) : values[file + 1];
    if (path !== undefined) {
      out.uses.push({ kind: 'read', value: rel(path) });
      if (!reading && (writes || operands.length >= 2)) out.uses.push({ kind: 'write', value: rel(path), byRule: true });
    }
  }
  if (reading || (!writes && operands.length < 2)) return;
  const key = operands[0] ?? '';
  if (values.includes('-e') || values.includes('--edit') || values.some((v) => /^--(rename|remove)-section$/.test(v)) || !harmlessKey(key)) {
    out.hardAsks.push(`git config changes ${key || 'the configuration'}, a setting that can make git run programs`);
  }
}
