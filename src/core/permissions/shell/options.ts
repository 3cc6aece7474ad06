import type { ShellWord } from './words';

/**
 * Command-line options as real programs parse them, driven by a per-program table: combined
 * short options (`-la`), attached arguments (`-o0`), GNU long options with `=value` and
 * unambiguous prefixes (`--unse` = `--unset`), optional arguments that only attach
 * (`-e[eof]`, `--eof[=eof]`), `--`, and the end of options at the first operand (wrappers) or
 * anywhere (GNU permutation). Tables are data built once; parsing is pure and never throws.
 */

/** `required`: attached or the next word; `optional`: only attached (`-xVAL`, `--name=VAL`). */
export type OptionArg = 'none' | 'required' | 'optional';

export interface OptionDef<E extends string> {
  /** One-letter names, without the dash (`'iu'` declares `-i` and `-u` alike). */
  short?: string;
  /** Long names, without the dashes. */
  long?: string | readonly string[];
  /** Default `none`. */
  arg?: OptionArg;
  /** What the option means to its caller (e.g. `safe`, `read`, `unsafe`). */
  effect: E;
}

export interface TableSettings<E extends string> {
  /** Long options may be abbreviated to an unambiguous prefix (GNU getopt_long). Default true. */
  abbreviations?: boolean;
  /** Options may follow operands (GNU permutation). Default false: the first operand ends them. */
  permute?: boolean;
  /** `--no-NAME` exists for every long NAME, with this effect (git's parse-options). */
  negation?: E;
  /** A word like `-5` or `-1.5` is an operand, not an option (seq). */
  numericOperands?: boolean;
  /**
   * Where a short option's argument comes from inside a cluster. `getopt` (default): the rest
   * of the word, else the next word. `next-word` (tree): always the next unused word, and the
   * cluster goes on.
   */
  clusterArgs?: 'getopt' | 'next-word';
}

export interface OptionTable<E extends string> {
  readonly program: string;
  readonly settings: Readonly<Required<Omit<TableSettings<E>, 'negation'>>> & { negation?: E };
  readonly shorts: ReadonlyMap<string, OptionDef<E>>;
  /** Long name → option (negations included). */
  readonly longs: ReadonlyMap<string, OptionDef<E>>;
  /** Every effect an option of this table can have. */
  readonly effects: ReadonlySet<E>;
}

/** Builds a table once (module scope); throws on a duplicate name, a programming error. */
export function optionTable<E extends string>(program: string, defs: readonly OptionDef<E>[], settings: TableSettings<E> = {}): OptionTable<E> {
  const shorts = new Map<string, OptionDef<E>>();
  const longs = new Map<string, OptionDef<E>>();
  const effects = new Set<E>();
  for (const d of defs) {
    effects.add(d.effect);
    for (const c of d.short ?? '') {
      if (shorts.has(c)) throw new Error(`${program}: -${c} declared twice`);
      shorts.set(c, d);
    }
    for (const l of typeof d.long === 'string' ? [d.long] : (d.long ?? [])) {
      if (longs.has(l)) throw new Error(`${program}: --${l} declared twice`);
      longs.set(l, d);
    }
  }
  if (settings.negation !== undefined) {
    const neg = settings.negation;
    effects.add(neg);
    for (const [l] of [...longs]) {
      const name = `no-${l}`;
      if (!longs.has(name)) longs.set(name, { long: name, effect: neg });
    }
  }
  return {
    program,
    settings: {
      abbreviations: settings.abbreviations ?? true,
      permute: settings.permute ?? false,
      numericOperands: settings.numericOperands ?? false,
      clusterArgs: settings.clusterArgs ?? 'getopt',
      ...(settings.negation !== undefined ? { negation: settings.negation } : {}),
    },
    shorts,
    longs,
    effects,
  };
}

/** One option found on the command line. */
export interface ParsedOption<E extends string> {
  def: OptionDef<E>;
  effect: E;
  /** As the program reports it: `-u` or `--unset` (the full name, even when abbreviated). */
  name: string;
  /** The argument, when the option has one. */
  value?: string;
  /** The word that held the argument (the option's own word when attached). */
  valueWord?: ShellWord;
  /** Index of the option's word. */
  at: number;
}

export interface Operand {
  word: ShellWord;
  at: number;
}

export interface ParsedArgs<E extends string> {
  options: ParsedOption<E>[];
  operands: Operand[];
  /**
   * Index of the first word that is not the program's own (the first operand when options stop
   * there, after a `--` too); `words.length` when there is none.
   */
  end: number;
}

export type ParseOutcome<E extends string> = { ok: true; args: ParsedArgs<E> } | { ok: false; reason: string; at: number };

export interface ParseSettings {
  /**
   * A word that may expand to an option (see `mayBeOption`) where an option could stand:
   * `fail` (default) stops with an error, `operand` counts it as an operand.
   */
  uncertain?: 'fail' | 'operand';
  /** Parse one option word (with its argument) and stop: `end` is the next index (nice). */
  once?: boolean;
  /** Replaces `mayBeOption` (a caller that knows better for its program). */
  mayBeOption?: (w: ShellWord) => boolean;
}

/** True when the word's value is known and it can expand only to itself. */
export function isLiteral(w: ShellWord): boolean {
  return !w.dynamic && !w.glob;
}

/**
 * Could bash turn this word into an option Keel cannot name? A computed word can; so can a glob
 * whose first character is a wildcard (`*` matches a file named `-rf`), or one that starts with
 * a dash before the option's name is complete (`-*`, `--pre*`). A glob like `--include=*.ts`
 * stays that one option whatever it matches.
 */
export function mayBeOption(w: ShellWord): boolean {
  if (w.dynamic && namedOption(w)) return false;
  if (w.dynamic) {
    const c = w.value[0];
    return c === undefined || c === '-' || c === '\u0000' || c === '*' || c === '?' || c === '[';
  }
  if (w.glob) return /^[*?[]/.test(w.value) || (w.value.startsWith('-') && !/^--[^=*?[]+=/.test(w.value));
  return false;
}

/**
 * A computed word that is one word at run time and spells out the option it is (`--author="$x"`,
 * `-n"$n"`): only the option's attached value is computed, so the option is known.
 */
export function namedOption(w: ShellWord): boolean {
  if (!w.dynamic || !w.single) return false;
  const v = w.value;
  const computed = v.indexOf('\u0000');
  if (v.startsWith('--')) {
    const eq = v.indexOf('=');
    return eq > 2 && (computed < 0 || computed > eq);
  }
  return v.length > 1 && v[1] !== '-' && computed !== 1;
}

/** Resolves `--name` (without dashes); abbreviations as getopt_long does. */
export function resolveLong<E extends string>(table: OptionTable<E>, name: string): { def: OptionDef<E>; full: string } | { error: string } {
  const exact = table.longs.get(name);
  if (exact) return { def: exact, full: name };
  if (!table.settings.abbreviations || name === '') return { error: `unknown option --${name}` };
  let found: { def: OptionDef<E>; full: string } | undefined;
  for (const [full, def] of table.longs) {
    if (!full.startsWith(name)) continue;
    if (found && found.def !== def) return { error: `ambiguous option --${name}` };
    found ??= { def, full };
  }
  return found ?? { error: `unknown option --${name}` };
}

function isNumeric(v: string): boolean {
  return /^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v);
}

/**
 * Parses `words[from…]` with `table`. Only static words are options; see `ParseSettings` for
 * words that may expand to one. Computed words elsewhere are reported as they are: a caller for
 * which word splitting matters rejects them itself. Never throws.
 */
export function parseOptions<E extends string>(table: OptionTable<E>, words: readonly ShellWord[], from: number, settings: ParseSettings = {}): ParseOutcome<E> {
  const uncertain = settings.uncertain ?? 'fail';
  const out: ParsedArgs<E> = { options: [], operands: [], end: words.length };
  const { permute, clusterArgs, numericOperands } = table.settings;
  let endOfOptions = false;
  let i = from;
  let first = true;
  while (i < words.length) {
    if (settings.once && !first) {
      out.end = i;
      return { ok: true, args: out };
    }
    first = false;
    const w = words[i] as ShellWord;
    if (endOfOptions) {
      out.operands.push({ word: w, at: i++ });
      continue;
    }
    if ((settings.mayBeOption ?? mayBeOption)(w)) {
      if (uncertain === 'fail') return { ok: false, reason: `${w.text} may expand to an option of ${table.program}`, at: i };
    }
    const v = w.value;
    // A glob that starts with a dash stays an option word (`--include=*.ts`): its name decides.
    const option = (!w.dynamic || namedOption(w)) && v.startsWith('-') && v.length > 1 && !(numericOperands && isNumeric(v));
    if (!option) {
      if (!permute) {
        out.end = i;
        for (; i < words.length; i++) out.operands.push({ word: words[i] as ShellWord, at: i });
        break;
      }
      out.operands.push({ word: w, at: i++ });
      continue;
    }
    if (v === '--') {
      endOfOptions = true;
      i++;
      if (!permute) out.end = i;
      continue;
    }
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const name = eq >= 0 ? v.slice(2, eq) : v.slice(2);
      const r = resolveLong(table, name);
      if ('error' in r) return { ok: false, reason: `${table.program}: ${r.error}`, at: i };
      const arg = r.def.arg ?? 'none';
      const opt: ParsedOption<E> = { def: r.def, effect: r.def.effect, name: `--${r.full}`, at: i };
      if (eq >= 0) {
        if (arg === 'none') return { ok: false, reason: `${table.program}: --${r.full} takes no argument`, at: i };
        opt.value = v.slice(eq + 1);
        opt.valueWord = w;
      } else if (arg === 'required') {
        const next = words[i + 1];
        if (!next) return { ok: false, reason: `${table.program}: --${r.full} needs an argument`, at: i };
        opt.value = next.value;
        opt.valueWord = next;
        i++;
      }
      out.options.push(opt);
      i++;
      continue;
    }
    // A cluster of short options.
    let next = i + 1;
    for (let j = 1; j < v.length; j++) {
      const c = v[j] as string;
      const def = table.shorts.get(c);
      if (!def) return { ok: false, reason: `${table.program}: unknown option -${c}`, at: i };
      const arg = def.arg ?? 'none';
      const opt: ParsedOption<E> = { def, effect: def.effect, name: `-${c}`, at: i };
      out.options.push(opt);
      if (arg === 'none') continue;
      const rest = v.slice(j + 1);
      if (clusterArgs === 'next-word' && arg === 'required') {
        const nw = words[next];
        if (!nw) return { ok: false, reason: `${table.program}: -${c} needs an argument`, at: i };
        opt.value = nw.value;
        opt.valueWord = nw;
        next++;
        continue;
      }
      if (rest !== '') {
        opt.value = rest;
        opt.valueWord = w;
      } else if (arg === 'required') {
        const nw = words[next];
        if (!nw) return { ok: false, reason: `${table.program}: -${c} needs an argument`, at: i };
        opt.value = nw.value;
        opt.valueWord = nw;
        next++;
      }
      break;
    }
    i = next;
  }
  return { ok: true, args: out };
}

/**
 * An option's argument as a word of its own: the next word (`-C dir`), or the rest of the
 * option's word (`-Cdir`, `--chdir=dir`). An attached argument is exactly what the program gets:
 * bash expanded a tilde or braces only at the start of the whole word (`-o~/x` names `./~/x`),
 * so its one field is its value.
 */
export function optionArgWord<E extends string>(x: ParsedOption<E>): ShellWord | undefined {
  const w = x.valueWord;
  if (!w) return undefined;
  const value = x.value ?? '';
  if (w.value === value) return w;
  const arg: ShellWord = { value, dynamic: w.dynamic, glob: w.glob, text: w.text };
  if (w.fields) arg.fields = [value];
  return arg;
}

/** The options of a parse with one of `effects`. */
export function optionsWith<E extends string>(args: ParsedArgs<E>, ...effects: E[]): ParsedOption<E>[] {
  return args.options.filter((o) => effects.includes(o.effect));
}

/** True when an option known by one of these names (`-p`, `--pid`) was given, however it was written. */
export function hasOption<E extends string>(args: ParsedArgs<E>, ...names: string[]): boolean {
  return args.options.some((o) => names.some((n) => defHasName(o.def, n)));
}

/** Does `def` answer to `name` (`-p` or `--pid`)? */
export function defHasName<E extends string>(def: OptionDef<E>, name: string): boolean {
  if (/^-[^-]$/.test(name)) return (def.short ?? '').includes(name.slice(1));
  if (!name.startsWith('--')) return false;
  const l = name.slice(2);
  return typeof def.long === 'string' ? def.long === l : (def.long ?? []).includes(l);
}
