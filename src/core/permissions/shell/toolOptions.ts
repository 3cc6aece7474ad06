import type { FileUse } from '../readOnly/types';
import { defHasName, isLiteral, optionArgWord, optionTable, parseOptions, type OptionDef } from './options';
import type { ShellWord } from './words';

/**
 * Build and test tools whose options make them run code from elsewhere or write where a rule for
 * the tool does not say (checked against GNU make 4.3's `--help`, go 1.21's `go help
 * build`/`testflag`, cargo 1.7x's `--help`, pytest 7's `--help`, prettier 3 and eslint 8's CLI
 * documentation). The tool itself is what a rule allows; these options are:
 * - inline code, allowed only by a rule that names the option, whose program meets the deny and
 *   ask rules too: `make -E/--eval`, `make SHELL=… / MAKEFLAGS=… / MAKEFILES=…`, `go -exec`,
 *   `go -toolexec`, `go vet -vettool`, `cargo --config` (a runner, rustc or linker is a program;
 *   a config file can name any), `pytest -p` and `-o/--override-ini`, `prettier --plugin`,
 *   `eslint --plugin/--rulesdir`;
 * - files: `make -f FILE`, `-I DIR`, `-C DIR`, `cargo --manifest-path FILE`, `pytest -c FILE`,
 *   `eslint -c FILE` are read (code that runs: outside the workspace they ask); `go build -o F`
 *   is written (what the build is for); `pytest --basetemp=DIR` empties DIR (a write of the
 *   whole tree that no rule for pytest covers);
 * - `make NAME=VALUE`: the value of a variable a recipe may run (`CC=…`) meets the deny rules.
 * Tools run through npx, pnpm exec/dlx, yarn (dlx) and bunx are found behind them.
 */
export interface ToolOptions {
  inlineAt?: number;
  /** Command lines the tool runs (their commands meet the deny and ask rules). */
  scripts: ShellWord[][];
  uses: FileUse[];
}

const o = (short: string | undefined, long: string | string[] | undefined, effect: string, arg: OptionDef<string>['arg'] = 'none'): OptionDef<string> => ({
  ...(short ? { short } : {}),
  ...(long ? { long } : {}),
  effect,
  arg,
});

const MAKE = optionTable(
  'make',
  [
    o('b', undefined, 'plain'), o('m', undefined, 'plain'), o('B', 'always-make', 'plain'), o('C', 'directory', 'read', 'required'), o('d', undefined, 'plain'),
    o(undefined, 'debug', 'plain', 'optional'), o('e', 'environment-overrides', 'plain'), o('E', 'eval', 'inline', 'required'),
    o('f', ['file', 'makefile'], 'read', 'required'), o('h', 'help', 'plain'), o('i', 'ignore-errors', 'plain'), o('I', 'include-dir', 'read', 'required'),
    o('j', 'jobs', 'plain', 'optional'), o('k', 'keep-going', 'plain'), o('l', ['load-average', 'max-load'], 'plain', 'optional'),
    o('L', 'check-symlink-times', 'plain'), o('n', ['just-print', 'dry-run', 'recon'], 'plain'), o('o', ['old-file', 'assume-old'], 'plain', 'required'),
    o('O', 'output-sync', 'plain', 'optional'), o('p', 'print-data-base', 'plain'), o('q', 'question', 'plain'), o('r', 'no-builtin-rules', 'plain'),
    o('R', 'no-builtin-variables', 'plain'), o('s', ['silent', 'quiet'], 'plain'), o(undefined, 'no-silent', 'plain'), o('S', ['no-keep-going', 'stop'], 'plain'),
    o('t', 'touch', 'plain'), o(undefined, 'trace', 'plain'), o('v', 'version', 'plain'), o('w', 'print-directory', 'plain'),
    o(undefined, 'no-print-directory', 'plain'), o('W', ['what-if', 'new-file', 'assume-new'], 'plain', 'required'), o(undefined, 'warn-undefined-variables', 'plain'),
    o(undefined, 'jobserver-auth', 'plain', 'required'), o(undefined, 'jobserver-style', 'plain', 'required'),
  ],
  { permute: true },
);

/** Variables that make reads as code or as more makefiles, whatever the Makefile says. */
const MAKE_CODE_VARIABLES = /^(SHELL|\.SHELLFLAGS|MAKEFLAGS|MFLAGS|MAKEFILES|MAKE|GNUMAKEFLAGS|\.RECIPEPREFIX)$/;

function makeOptions(words: readonly ShellWord[], from: number): ToolOptions | { unknown: string } {
  const out: ToolOptions = { scripts: [], uses: [] };
  const r = parseOptions(MAKE, words, from);
  if (!r.ok) return { unknown: r.reason };
  let dir: string | undefined;
  for (const x of r.args.options) {
    const w = optionArgWord(x);
    if (x.effect === 'inline') {
      out.inlineAt ??= x.at;
      if (w) out.scripts.push([w]);
      continue;
    }
    if (x.effect !== 'read' && x.effect !== 'dir') continue;
    if (!w || !isLiteral(w)) return { unknown: `make ${x.name} with a value known only at run time` };
    const v = x.value ?? '';
    if (defHasName(x.def, '-C')) dir = dir === undefined || v.startsWith('/') ? v : `${dir}/${v}`;
    out.uses.push({ kind: x.effect === 'dir' ? 'search' : 'read', value: x.effect === 'read' && dir !== undefined && !v.startsWith('/') ? `${dir}/${v}` : v, word: w });
  }
  for (const x of r.args.operands) {
    const m = /^([^=\s]+?)[:+?!]?=([^]*)$/.exec(x.word.value);
    if (!m) continue;
    if (MAKE_CODE_VARIABLES.test(m[1] ?? '')) out.inlineAt ??= x.at;
    // A value known only at run time cannot be checked against the deny rules; a literal one is.
    else if (m[2] && isLiteral(x.word)) out.scripts.push([{ ...x.word, value: m[2], fields: [m[2]] }]);
  }
  return out;
}

/**
 * Scans `words` from `from` for long (`--name`, `--name=v`, `-name`, `-name=v` for go's flag
 * package) and short options, returning each hit's value word and index.
 */
type Found = 'inline' | 'read' | 'write' | 'tree' | 'runner';

function scan(words: readonly ShellWord[], from: number, names: Record<string, Found>, shorts: Record<string, Found> = {}, goFlags = false): ToolOptions | { unknown: string } {
  const out: ToolOptions = { scripts: [], uses: [] };
  for (let i = from; i < words.length; i++) {
    const w = words[i] as ShellWord;
    if (w.value === '--' && isLiteral(w)) break;
    if (w.dynamic && !w.single) return { unknown: `${w.text} may be any option` };
    const m = /^(--?)([A-Za-z][\w.-]*)(=([^]*))?$/.exec(w.value);
    if (!m) continue;
    const [, dashes, name = '', eq, attached] = m;
    let effect = dashes === '--' || goFlags ? names[name] : undefined;
    let value = eq !== undefined ? attached : undefined;
    if (!effect && dashes === '-' && !goFlags) {
      effect = shorts[name[0] as string];
      if (effect && name.length > 1) value = w.value.slice(2);
    }
    if (!effect) continue;
    let valueWord: ShellWord = w;
    if (value === undefined) {
      const next = words[i + 1];
      if (!next) return { unknown: `${w.text} without its value` };
      valueWord = next;
      value = next.value;
      i++;
    }
    if (!isLiteral(valueWord) && !(valueWord.single && effect === 'inline')) return { unknown: `${w.text} with a value known only at run time` };
    const vw: ShellWord = { ...valueWord, value, fields: [value] };
    if (effect === 'inline' || effect === 'runner') {
      if (effect === 'inline') out.inlineAt ??= i - (valueWord === w ? 0 : 1);
      out.scripts.push([vw]);
    } else if (effect === 'read') out.uses.push({ kind: 'read', value, word: vw });
    else if (effect === 'write') out.uses.push({ kind: 'write', value, word: vw, byRule: true });
    else out.uses.push({ kind: 'writeTree', value, word: vw, byRule: false });
  }
  return out;
}

/** cargo --config KEY=VALUE or PATH: inline code either way (a key can name a program; a file can hold any). */
function cargoOptions(words: readonly ShellWord[], from: number): ToolOptions | { unknown: string } {
  const r = scan(words, from, { config: 'inline', 'manifest-path': 'read' }, { C: 'read' });
  if ('unknown' in r) return r;
  // The program in `target.X.runner='…'` (or rustc, linker…) is what would run.
  r.scripts = r.scripts.map((s) => s.map((w) => ({ ...w, value: w.value.replace(/^[^=]*=\s*/, '').replace(/^['"]|['"]$/g, '') })));
  return r;
}

/** Where a tool behind a package runner starts (`npx prettier`, `pnpm exec eslint`, `yarn dlx x`). */
function behindRunner(words: readonly ShellWord[]): number {
  const first = words[0]?.value;
  let i = 1;
  if (first === 'pnpm' || first === 'yarn') {
    if (words[1]?.value === 'exec' || words[1]?.value === 'dlx') i = 2;
  } else if (first !== 'npx' && first !== 'bunx') return 0;
  while (i < words.length && (words[i]?.value.startsWith('-') ?? false)) i++;
  return i;
}

/** The options of a tool that run code or name files (see above), or undefined when `base` has none. */
export function toolOptions(base: string, words: readonly ShellWord[]): ToolOptions | { unknown: string } | undefined {
  const at = base === 'npx' || base === 'bunx' || base === 'pnpm' || base === 'yarn' ? behindRunner(words) : 0;
  const name = at > 0 ? words[at]?.value.replace(/@[^/]*$/, '') : base;
  const from = at + 1;
  switch (name) {
    case 'make':
    case 'gmake':
      return makeOptions(words, from);
    case 'go':
      return scan(words, from, { exec: 'inline', toolexec: 'inline', vettool: 'inline', o: 'write', modfile: 'read', overlay: 'read', pgo: 'read', C: 'read' }, {}, true);
    case 'cargo':
      return cargoOptions(words, from);
    case 'pytest':
    case 'py.test':
      return scan(words, from, { basetemp: 'tree', 'config-file': 'read', 'override-ini': 'inline', rootdir: 'read', confcutdir: 'read' }, { p: 'inline', c: 'read', o: 'inline' });
    case 'prettier':
      return scan(words, from, { plugin: 'inline', 'plugin-search-dir': 'inline', config: 'read', 'ignore-path': 'read' });
    case 'eslint':
      return scan(words, from, { plugin: 'inline', rulesdir: 'inline', 'resolve-plugins-relative-to': 'inline', config: 'read', 'ignore-path': 'read' }, { c: 'read' });
    default:
      break;
  }
  // `python -m pytest …`: the same options, two words further.
  if (/^python[0-9.]*$/.test(base) && words[1]?.value === '-m' && words[2]?.value === 'pytest') {
    const r = toolOptions('pytest', words.slice(2));
    if (r && !('unknown' in r) && r.inlineAt !== undefined) r.inlineAt += 2;
    return r;
  }
  return undefined;
}
