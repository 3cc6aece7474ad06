import { COREUTILS } from './readOnly/coreutils';
import { findIsReadOnly } from './readOnly/find';
import { gitIsReadOnly } from './readOnly/git';
import { SEARCH } from './readOnly/search';
import type { ReadOnlyContext, ReadOnlySpec, RO } from './readOnly/types';
import type { CommandForm } from './shell/commandPlan';
import { defHasName, mayBeOption, parseOptions } from './shell/options';
import type { ShellWord } from './shell/words';

export type { ReadOnlyContext } from './readOnly/types';

/**
 * Commands Keel runs without a rule because they only read (like Claude Code's built-in
 * read-only set): in default mode when every file they read is inside the allowed roots, and in
 * plan mode. An allowlist of flags per command: a command qualifies only when every option it
 * carries is in its table and known not to write, run a program or read files Keel cannot
 * check (abbreviations resolved as the program resolves them), every file it reads passes
 * `pathOk`, and every variable assigned for it is harmless. Unknown → not read-only (ask).
 */
const SPECS: Record<string, ReadOnlySpec> = {
  ...COREUTILS,
  ...SEARCH,
  echo: { operands: 'none' },
  true: { operands: 'none' },
  false: { operands: 'none' },
  ':': { operands: 'none' },
  test: { operands: 'none' },
  '[': { operands: 'none' },
};

/**
 * Variables that may be assigned in front of a read-only command: they change how output looks,
 * never what runs or which files are read. Everything else (RIPGREP_CONFIG_PATH, GIT_*, PAGER,
 * LESSOPEN, MAGIC, TZDIR, LD_*, POSIXLY_CORRECT, …) makes the command not read-only.
 */
const HARMLESS_ENV = new RegExp(
  `^(${[
    ...['LANG', 'LANGUAGE', 'LC_[A-Z]+', 'TZ', 'NO_COLOR', 'FORCE_COLOR', 'CLICOLOR', 'CLICOLOR_FORCE', 'TERM', 'COLUMNS', 'LINES'],
    ...['LS_COLORS', 'GREP_COLOR', 'GREP_COLORS', 'TIME_STYLE', 'QUOTING_STYLE', 'BLOCK_SIZE', 'DU_BLOCK_SIZE', 'LS_BLOCK_SIZE', 'TABSIZE'],
  ].join('|')})$`,
);

/** Is `name` a program the read-only allowlist knows (none runs its arguments as a command)? */
export function isReadOnlyProgram(name: string): boolean {
  return Object.hasOwn(SPECS, name);
}

/** True when assigning `name` for a read-only command cannot change what it runs or reads. */
export function isHarmlessVariable(name: string): boolean {
  return HARMLESS_ENV.test(name);
}

/**
 * True when no option of the table does more than change the output, whatever their
 * combination: then a word that may expand to options (`$x`, `*`) cannot make it write or read.
 */
function allSafe(spec: ReadOnlySpec): boolean {
  return !spec.table || (spec.table.effects.size === 1 && spec.table.effects.has('safe') && !spec.check);
}

/**
 * True when `form` is a read-only command whose files pass `ctx.pathOk`. A form with inline
 * code, run-time arguments or an unknown option is never read-only. Never throws.
 */
export function isReadOnlyCommand(form: CommandForm, ctx: ReadOnlyContext): boolean {
  // A form with arguments added at run time (`xargs head F`) or inline code is never read-only,
  // but its files still go through `pathOk` (whose Read deny rules apply as they would alone).
  if (form.inlineAt !== undefined) return false;
  return readOnlyForm(form, ctx) && !form.openEnded;
}

function readOnlyForm(form: CommandForm, ctx: ReadOnlyContext): boolean {
  if (form.assigns?.some((a) => !isHarmlessVariable(a))) return false;
  const name = form.words[0];
  if (!name || name.dynamic || name.glob) return false;
  const given = braceFieldsAsWords(form.words);
  if (name.value === 'git') return gitIsReadOnly(given, ctx);
  if (name.value === 'find') return findIsReadOnly(given, ctx);
  const spec = Object.hasOwn(SPECS, name.value) ? SPECS[name.value] : undefined;
  if (!spec) return false;
  if (!spec.table) return true;
  const words = spec.prepare ? spec.prepare(given) : given;
  if (!words) return false;
  const safe = allSafe(spec);
  // A computed word may be any option and several words: fine when every option is harmless and
  // no operand is a file, or when it stands after the options of a program that stops at its
  // first operand and has no file operands (printf's arguments). A glob may expand to a file
  // named like an option (`-rf`): fine only when every option is harmless and none changes what
  // the operands mean.
  const globsOk = safe && spec.operands !== 'pattern-then-paths';
  if (!globsOk && words.some((w) => w.glob && mayBeOption(w))) return false;
  const r = parseOptions(spec.table, words, 1, { uncertain: safe ? 'operand' : 'fail' });
  if (!r.ok) return false;
  const a = r.args;
  if (!(safe && spec.operands === 'none')) {
    const computedOperandsOk = spec.operands === 'none' && !spec.table.settings.permute;
    if (words.some((w, i) => w.dynamic && !(computedOperandsOk && i >= a.end))) return false;
  }
  for (const o of a.options) if (!optionOk(o.effect, o.value, o.valueWord, ctx)) return false;
  if (spec.check && !spec.check(a, ctx)) return false;
  let operands = a.operands;
  if (spec.operands === 'none') return true;
  if (spec.operands === 'pattern-then-paths' && !a.options.some((o) => (spec.patternOptions ?? []).some((p) => defHasName(o.def, p)))) operands = operands.slice(1);
  let files = 0;
  for (const x of operands) {
    if (x.word.value === '-' && !x.word.glob) continue;
    if (!ctx.pathOk(x.word.value, x.word)) return false;
    files++;
  }
  const fallback = files === 0 ? spec.defaultPath?.(a) : undefined;
  return fallback === undefined || ctx.pathOk(fallback);
}

/**
 * The words the program really receives: a brace expansion (`{a,b}`, `~/{x,y}`) is several
 * words once bash has expanded it, each checked on its own (as an option, a pattern or a file).
 * Only words whose every field is known are split; a field keeps the word's glob flag (a quoted
 * `*` in one field then counts as a glob: more checks, never fewer). Computed words stay as they
 * are (never read-only where it matters).
 */
function braceFieldsAsWords(words: readonly ShellWord[]): ShellWord[] {
  if (!words.some((w) => w.dynamic && w.fields)) return words.slice();
  const out: ShellWord[] = [];
  for (const w of words) {
    if (!w.dynamic || !w.fields) out.push(w);
    else for (const f of w.fields) out.push({ value: f, dynamic: false, glob: w.glob, text: w.text, fields: [f] });
  }
  return out;
}

function optionOk(effect: RO, value: string | undefined, word: ShellWord | undefined, ctx: ReadOnlyContext): boolean {
  switch (effect) {
    case 'safe':
      return true;
    case 'unsafe':
      return false;
    case 'read':
      return !!word && !word.dynamic && (value === '-' || ctx.pathOk(value ?? ''));
    case 'readList':
      return !!word && !word.dynamic && (value ?? '').split(':').every((p) => p === '' || ctx.pathOk(p));
  }
}
