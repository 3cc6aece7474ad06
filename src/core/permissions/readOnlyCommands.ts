import type { CommandForm } from './shell/commandPlan';

/**
 * Commands Keel runs without a rule because they only read (like Claude Code's built-in
 * read-only set): in default mode inside the workspace, and in plan mode. Every path argument
 * must be static and inside the allowed roots; options that write or run programs disqualify.
 */
type Spec = { paths: boolean; forbid?: RegExp; maxArgs?: number };

const SPECS: Record<string, Spec> = {
  echo: { paths: false }, printf: { paths: false, forbid: /^-v/ }, true: { paths: false }, false: { paths: false }, ':': { paths: false },
  pwd: { paths: false }, whoami: { paths: false }, id: { paths: false }, uname: { paths: false }, nproc: { paths: false },
  date: { paths: false, forbid: /^(-s|--set)/ }, which: { paths: false }, type: { paths: false }, basename: { paths: false }, dirname: { paths: false },
  seq: { paths: false }, sleep: { paths: false }, test: { paths: false }, '[': { paths: false }, cd: { paths: false }, printenv: { paths: false }, env: { paths: false, maxArgs: 0 },
  command: { paths: false }, hostname: { paths: false, maxArgs: 0 },
  ls: { paths: true }, cat: { paths: true }, head: { paths: true }, tail: { paths: true }, wc: { paths: true }, stat: { paths: true },
  file: { paths: true, forbid: /^(-C|--compile)/ }, du: { paths: true }, tree: { paths: true, forbid: /^(-o|-R)/ }, realpath: { paths: true }, readlink: { paths: true },
  diff: { paths: true, forbid: /^(--to-file|--from-file)/ }, cmp: { paths: true }, grep: { paths: true }, egrep: { paths: true }, fgrep: { paths: true },
  rg: { paths: true, forbid: /^(--pre|--pre-glob|-z|--search-zip)/ }, sort: { paths: true, forbid: /^(-o|--output|--compress-program|-T|--temporary-directory)/ },
  uniq: { paths: true, maxArgs: 1 }, cut: { paths: true }, nl: { paths: true }, md5sum: { paths: true }, sha256sum: { paths: true },
  find: { paths: true, forbid: /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/ },
};
const GIT_READ = new Set(['status', 'diff', 'log', 'show', 'rev-parse', 'ls-files', 'blame', 'branch', 'remote', 'describe', 'shortlog']);
const GIT_FORBID = /^(--output|--no-index|--ext-diff|-D|-d|-m|-M|-c|-C|--delete|--move|--copy|--set-upstream-to|-u|--unset-upstream|--edit-description|add|remove|rm|rename|set-url|set-head|prune|update)(=.*)?$/;

/**
 * True when `form` is a read-only command whose path arguments pass `pathOk`. A form with
 * inline code, extra run-time arguments or computed words is never read-only.
 */
export function isReadOnlyCommand(form: CommandForm, pathOk: (value: string) => boolean): boolean {
  if (form.openEnded || form.inlineAt !== undefined) return false;
  const [name, ...args] = form.words;
  if (!name || name.dynamic) return false;
  if (name.value === 'git') {
    const sub = args[0];
    if (!sub || sub.dynamic || !GIT_READ.has(sub.value)) return false;
    return args.slice(1).every((a) => !a.dynamic && !GIT_FORBID.test(a.value) && (a.value.startsWith('-') || !/^(\/|~|\.\.)/.test(a.value) || pathOk(a.value)));
  }
  const spec = SPECS[name.value];
  if (!spec) return false;
  if (spec.maxArgs !== undefined && args.length > spec.maxArgs) return false;
  let endOfOptions = false;
  for (const a of args) {
    if (!endOfOptions && a.value === '--') {
      endOfOptions = true;
      continue;
    }
    const option = !endOfOptions && a.value.startsWith('-') && a.value.length > 1;
    if (option && !a.dynamic && spec.forbid?.test(a.value)) return false;
    if (!spec.paths) continue;
    if (a.dynamic || a.glob) {
      // A glob goes to pathOk whole (it checks every match); a brace word is one path per field,
      // unless a field could be read as an option.
      const values = a.fields ?? (a.dynamic ? null : [a.value]);
      if (values === null || values.some((v) => v.startsWith('-') || !pathOk(v))) return false;
      continue;
    }
    if (option) {
      const eq = a.value.indexOf('=');
      if (eq > 0 && !pathOk(a.value.slice(eq + 1))) return false;
      continue;
    }
    if (!pathOk(a.value)) return false;
  }
  return true;
}
