import { COREUTILS } from './readOnly/coreutils';
import { FILE_TOOLS } from './readOnly/fileTools';
import { findVerdict } from './readOnly/find';
import { gitVerdict } from './readOnly/git';
import { SEARCH } from './readOnly/search';
import { VERSIONS, versionSpecOf } from './readOnly/versions';
import type { CommandVerdict, ReadOnlyContext, ReadOnlySpec } from './readOnly/types';
import type { CommandForm } from './shell/commandPlan';
import { defHasName, mayBeOption, optionArgWord, parseOptions } from './shell/options';
import type { ShellWord } from './shell/words';

export type { AccessKind, CommandVerdict, FileUse, ReadOnlyContext } from './readOnly/types';

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
  ...FILE_TOOLS,
  ...VERSIONS,
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

/** Is `name` a program whose files Keel models (none runs its arguments as a command)? */
export function isReadOnlyProgram(name: string): boolean {
  return (Object.hasOwn(SPECS, name) && !SPECS[name]?.onlyReadOnly) || name === 'git' || name === 'find';
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
  return !spec.table || (spec.table.effects.size === 1 && spec.table.effects.has('safe') && !spec.check && typeof spec.operands !== 'function');
}

/**
 * What Keel knows about the files of `form`: whether it only reads readable places, and whether
 * every file it opens was reported through `ctx.use` (then a Bash rule that allows it can vouch
 * for its program while the rules for files decide its files). Undefined: a program Keel does not
 * model (its files are not known; see docs/permissions.md). A form with inline code, arguments
 * added at run time (`xargs head`) or an assignment that is not harmless is never read-only; its
 * files are still reported (Read deny rules apply as they would alone). Never throws.
 */
export function examineCommand(form: CommandForm, ctx: ReadOnlyContext): CommandVerdict | undefined {
  const name = form.words[0];
  if (!name || name.dynamic || name.glob) return undefined;
  const given = braceFieldsAsWords(form.words);
  let v: CommandVerdict | undefined;
  if (name.value === 'git') v = gitVerdict(given, ctx);
  else if (name.value === 'find') v = findVerdict(given, ctx);
  else {
    const spec = Object.hasOwn(SPECS, name.value) ? SPECS[name.value] : versionSpecOf(name.value);
    v = spec ? examineSpec(spec, given, ctx) : undefined;
    if (spec?.onlyReadOnly && !v?.readOnly) v = undefined;
  }
  if (!v) return undefined;
  // Arguments appended at run time (xargs, find -exec … +) may name any file.
  if (form.openEnded) return { readOnly: false, complete: false };
  if (form.inlineAt !== undefined || form.assigns?.some((a) => !isHarmlessVariable(a))) return { ...v, readOnly: false };
  return v;
}

/** True when `form` is a read-only command whose every file may be read without asking. */
export function isReadOnlyCommand(form: CommandForm, ctx: ReadOnlyContext): boolean {
  return examineCommand(form, ctx)?.readOnly === true;
}

function examineSpec(spec: ReadOnlySpec, given: ShellWord[], ctx: ReadOnlyContext): CommandVerdict {
  const unknown: CommandVerdict = { readOnly: false, complete: false };
  if (!spec.table) return { readOnly: true, complete: true };
  const words = spec.prepare ? spec.prepare(given) : given;
  if (!words) return unknown;
  const safe = allSafe(spec);
  // A computed word may be any option and several words: fine when every option is harmless and
  // no operand is a file, or when it stands after the options of a program that stops at its
  // first operand and has no file operands (printf's arguments). A glob may expand to a file
  // named like an option (`-rf`): fine only when every option is harmless and none changes what
  // the operands mean.
  const globsOk = safe && spec.operands !== 'pattern-then-paths';
  const optionLike = (w: ShellWord): boolean => mayBeOption(w) && !(spec.folderGlobs && w.glob && w.value.endsWith('/') && !w.value.startsWith('-'));
  if (!globsOk && words.some((w) => w.glob && optionLike(w))) return unknown;
  const r = parseOptions(spec.table, words, 1, { uncertain: safe ? 'operand' : 'fail', mayBeOption: optionLike });
  if (!r.ok) return unknown;
  const a = r.args;
  if (!(safe && spec.operands === 'none')) {
    const computedOperandsOk = spec.operands === 'none' && !spec.table.settings.permute;
    // A computed value of a harmless option (`-n "$n"`, `--format="$f"`) is one word that cannot
    // turn into an option or a file.
    const values = new Set(a.options.filter((o) => o.effect === 'safe' && o.valueWord?.single).map((o) => o.valueWord));
    if (words.some((w, i) => w.dynamic && !(computedOperandsOk && i >= a.end) && !values.has(w))) return unknown;
  }
  let readOnly = true;
  let complete = true;
  for (const o of a.options) {
    const word = optionArgWord(o);
    switch (o.effect) {
      case 'safe':
      case 'target':
        break;
      case 'unsafe':
        readOnly = false;
        break;
      case 'opaque':
        readOnly = false;
        complete = false;
        break;
      case 'read':
      case 'readList':
      case 'write': {
        if (!word || word.dynamic) {
          complete = false;
          readOnly = false;
          break;
        }
        const values = o.effect === 'readList' ? (o.value ?? '').split(':').filter((p) => p !== '') : [o.value ?? ''];
        for (const value of values) {
          if (o.effect === 'write') {
            ctx.use({ kind: 'write', value, word, byRule: false });
            readOnly = false;
          } else if (value !== '-' && !ctx.use({ kind: 'read', value, word })) readOnly = false;
        }
        break;
      }
    }
  }
  if (spec.check && !spec.check(a, ctx)) readOnly = false;
  if (spec.known && !spec.known(a)) {
    readOnly = false;
    complete = false;
  }
  const ops = spec.operands;
  if (ops === 'none') return { readOnly, complete };
  if (typeof ops === 'function') {
    const uses = ops(a, ctx);
    if (uses === null) return { readOnly: false, complete: false };
    if (!Array.isArray(uses)) return { readOnly: false, complete: false, opaque: uses.opaque };
    for (const u of uses) if (!ctx.use(u)) readOnly = false;
    return { readOnly, complete };
  }
  let operands = a.operands;
  if (ops === 'pattern-then-paths' && !a.options.some((o) => (spec.patternOptions ?? []).some((p) => defHasName(o.def, p)))) operands = operands.slice(1);
  const kind = spec.operandKind?.(a) ?? 'read';
  let files = 0;
  for (const x of operands) {
    if (x.word.value === '-' && !x.word.glob) continue;
    if (!ctx.use({ kind, value: x.word.value, word: x.word })) readOnly = false;
    files++;
  }
  const fallback = files === 0 ? spec.defaultPath?.(a) : undefined;
  if (fallback !== undefined && !ctx.use({ kind: spec.defaultKind?.(a) ?? kind, value: fallback })) readOnly = false;
  return { readOnly, complete };
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
