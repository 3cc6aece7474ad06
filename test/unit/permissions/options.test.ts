import { describe, expect, it } from 'vitest';
import { splitEnvString } from '../../../src/core/permissions/shell/envSplit';
import { defHasName, mayBeOption, optionTable, parseOptions, resolveLong, type ParseOutcome } from '../../../src/core/permissions/shell/options';
import type { ShellWord } from '../../../src/core/permissions/shell/words';

/** Static words, as bash would pass them. */
const w = (...values: string[]): ShellWord[] => values.map((value) => ({ value, dynamic: false, glob: false, text: value }));
const dyn = (text: string): ShellWord => ({ value: '\u0000', dynamic: true, glob: false, text });
const glob = (value: string): ShellWord => ({ value, dynamic: false, glob: true, text: value });

type E = 'plain' | 'bad';
// env's real table (coreutils 9.1).
const ENV = optionTable<E>('env', [
  { short: 'i', long: 'ignore-environment', effect: 'plain' },
  { short: '0', long: 'null', effect: 'plain' },
  { short: 'u', long: 'unset', arg: 'required', effect: 'plain' },
  { short: 'C', long: 'chdir', arg: 'required', effect: 'plain' },
  { short: 'S', long: 'split-string', arg: 'required', effect: 'bad' },
  { long: 'block-signal', arg: 'optional', effect: 'plain' },
  { long: 'default-signal', arg: 'optional', effect: 'plain' },
  { short: 'v', long: 'debug', effect: 'plain' },
  { long: 'help', effect: 'plain' },
]);
// xargs' optional, attached-only arguments.
const XARGS = optionTable<E>('xargs', [
  { short: 'e', long: 'eof', arg: 'optional', effect: 'plain' },
  { short: 'i', long: 'replace', arg: 'optional', effect: 'plain' },
  { short: 'l', long: 'max-lines', arg: 'optional', effect: 'plain' },
  { short: 'n', long: 'max-args', arg: 'required', effect: 'plain' },
  { short: 'r', long: 'no-run-if-empty', effect: 'plain' },
]);

function ok<T extends string>(r: ParseOutcome<T>) {
  if (!r.ok) throw new Error(`expected a parse, got: ${r.reason}`);
  return r.args;
}
const summary = (r: ParseOutcome<E>) => {
  const a = ok(r);
  return { options: a.options.map((o) => (o.value === undefined ? o.name : `${o.name}=${o.value}`)), operands: a.operands.map((x) => x.word.value), end: a.end };
};

describe('parseOptions: short options', () => {
  it('splits a cluster and gives a required argument the next word (-iu ls = -i -u ls)', () => {
    expect(summary(parseOptions(ENV, w('env', '-iu', 'ls', 'rm', '-rf', 'src'), 1))).toEqual({ options: ['-i', '-u=ls'], operands: ['rm', '-rf', 'src'], end: 3 });
  });
  it('takes an attached argument from the rest of the word (-uHOME, -C/tmp)', () => {
    expect(summary(parseOptions(ENV, w('env', '-uHOME', '-C/tmp', 'ls'), 1)).options).toEqual(['-u=HOME', '-C=/tmp']);
  });
  it('gives an attached argument the rest of a cluster, quotes included (-iS\'rm -rf src\')', () => {
    expect(summary(parseOptions(ENV, w('env', "-iSrm -rf src", 'ls'), 1)).options).toEqual(['-i', '-S=rm -rf src']);
  });
  it('gives an optional argument only what is attached: -e alone has none, the next word is the command', () => {
    expect(summary(parseOptions(XARGS, w('xargs', '-e', 'rm', 'ls'), 1))).toEqual({ options: ['-e'], operands: ['rm', 'ls'], end: 2 });
    expect(summary(parseOptions(XARGS, w('xargs', '-eEOF', 'ls'), 1)).options).toEqual(['-e=EOF']);
    expect(summary(parseOptions(XARGS, w('xargs', '-ri{}', 'ls'), 1)).options).toEqual(['-r', '-i={}']);
  });
  it('fails on an unknown short option anywhere in a cluster', () => {
    const r = parseOptions(ENV, w('env', '-iq', 'ls'), 1);
    expect(r.ok).toBe(false);
  });
  it('fails when a required argument is missing', () => {
    expect(parseOptions(ENV, w('env', '-u'), 1).ok).toBe(false);
    expect(parseOptions(ENV, w('env', '--unset'), 1).ok).toBe(false);
  });
  it('takes the next word as a required argument even when it looks like an option', () => {
    expect(summary(parseOptions(ENV, w('env', '-u', '-i', 'ls'), 1)).options).toEqual(['-u=-i']);
  });
});

describe('parseOptions: long options', () => {
  it('resolves an unambiguous prefix to the full option (--unse = --unset)', () => {
    expect(summary(parseOptions(ENV, w('env', '--unse', 'ls', 'rm', '-rf', 'src'), 1))).toEqual({ options: ['--unset=ls'], operands: ['rm', '-rf', 'src'], end: 3 });
    expect(summary(parseOptions(ENV, w('env', '--spl=rm -rf src', 'ls'), 1)).options).toEqual(['--split-string=rm -rf src']);
  });
  it('fails on an ambiguous prefix and on an unknown name', () => {
    expect(parseOptions(ENV, w('env', '--d', 'ls'), 1)).toMatchObject({ ok: false, reason: expect.stringContaining('ambiguous') });
    expect(parseOptions(ENV, w('env', '--nope', 'ls'), 1)).toMatchObject({ ok: false, reason: expect.stringContaining('unknown') });
  });
  it('prefers an exact name over a longer one it prefixes', () => {
    const t = optionTable<E>('t', [{ long: 'color', effect: 'plain' }, { long: 'colors', arg: 'required', effect: 'bad' }]);
    expect(resolveLong(t, 'color')).toMatchObject({ full: 'color' });
    expect(resolveLong(t, 'colo')).toMatchObject({ error: expect.stringContaining('ambiguous') });
  });
  it('does not count aliases of one option as ambiguous (--nb / --nonblock)', () => {
    const t = optionTable<E>('flock', [{ short: 'n', long: ['nonblock', 'nb'], effect: 'plain' }]);
    expect(resolveLong(t, 'n')).toMatchObject({ full: 'nonblock' });
  });
  it('refuses abbreviations where the program does (rg, tree, git globals)', () => {
    const t = optionTable<E>('rg', [{ long: 'fixed-strings', effect: 'plain' }], { abbreviations: false });
    expect(parseOptions(t, w('rg', '--fixed-str', 'x'), 1).ok).toBe(false);
  });
  it('takes --opt=value and --opt value for a required argument, only --opt=value for an optional one', () => {
    expect(summary(parseOptions(ENV, w('env', '--chdir=/a', '--chdir', '/b', 'ls'), 1)).options).toEqual(['--chdir=/a', '--chdir=/b']);
    expect(summary(parseOptions(ENV, w('env', '--block-signal', 'PIPE', 'ls'), 1))).toEqual({ options: ['--block-signal'], operands: ['PIPE', 'ls'], end: 2 });
    expect(summary(parseOptions(XARGS, w('xargs', '--max-lines', 'echo'), 1)).operands).toEqual(['echo']);
  });
  it('fails on a value given to an option without argument', () => {
    expect(parseOptions(ENV, w('env', '--null=1', 'ls'), 1).ok).toBe(false);
  });
  it('adds --no-X for every long option when the program has negations (git)', () => {
    const t = optionTable<E>('git diff', [{ long: 'ext-diff', effect: 'bad' }], { negation: 'plain' });
    expect(ok(parseOptions(t, w('diff', '--no-ext-diff'), 1)).options[0]?.effect).toBe('plain');
    expect(ok(parseOptions(t, w('diff', '--ext'), 1)).options[0]?.effect).toBe('bad');
  });
});

describe('parseOptions: operands and the end of options', () => {
  it('stops at the first operand unless the program permutes', () => {
    expect(summary(parseOptions(ENV, w('env', 'ls', '-i'), 1))).toEqual({ options: [], operands: ['ls', '-i'], end: 1 });
    const ls = optionTable<E>('ls', [{ short: 'l', effect: 'plain' }], { permute: true });
    expect(summary(parseOptions(ls, w('ls', 'src', '-l'), 1))).toEqual({ options: ['-l'], operands: ['src'], end: 3 });
  });
  it('treats -- as the end of options and a lone - as an operand', () => {
    expect(summary(parseOptions(ENV, w('env', '-i', '--', '-u', 'x'), 1))).toEqual({ options: ['-i'], operands: ['-u', 'x'], end: 3 });
    expect(summary(parseOptions(ENV, w('env', '-', 'ls'), 1))).toEqual({ options: [], operands: ['-', 'ls'], end: 1 });
  });
  it('reads negative numbers as operands where the program does (seq)', () => {
    const seq = optionTable<E>('seq', [{ short: 'w', effect: 'plain' }], { numericOperands: true, permute: true });
    expect(summary(parseOptions(seq, w('seq', '-5', '-w', '-1.5'), 1))).toEqual({ options: ['-w'], operands: ['-5', '-1.5'], end: 4 });
  });
  it("parses tree's clusters: each argument is the next unused word (-Lo 2 out)", () => {
    const tree = optionTable<E>('tree', [
      { short: 'L', arg: 'required', effect: 'plain' },
      { short: 'o', arg: 'required', effect: 'bad' },
    ], { permute: true, clusterArgs: 'next-word' });
    expect(summary(parseOptions(tree, w('tree', '-Lo', '2', 'out', 'src'), 1))).toEqual({ options: ['-L=2', '-o=out'], operands: ['src'], end: 5 });
  });
  it('parses one option word at a time when asked (nice)', () => {
    const nice = optionTable<E>('nice', [{ short: 'n', arg: 'required', effect: 'plain' }]);
    expect(ok(parseOptions(nice, w('nice', '-n', '5', '-10', 'ls'), 1, { once: true })).end).toBe(3);
  });
});

describe('parseOptions: words known only at run time', () => {
  it('fails on a computed word where an option could stand, or counts it as an operand', () => {
    const words = [...w('env'), dyn('$X'), ...w('ls')];
    expect(parseOptions(ENV, words, 1).ok).toBe(false);
    expect(summary(parseOptions(ENV, words, 1, { uncertain: 'operand' })).operands).toEqual(['\u0000', 'ls']);
  });
  it('knows which words may expand to an option', () => {
    expect(mayBeOption(dyn('$X'))).toBe(true);
    expect(mayBeOption({ value: 'src/\u0000', dynamic: true, glob: false, text: 'src/$X' })).toBe(false);
    expect(mayBeOption(glob('*'))).toBe(true);
    expect(mayBeOption(glob('src/*.ts'))).toBe(false);
    expect(mayBeOption(w('-rf')[0] as ShellWord)).toBe(false);
    expect(mayBeOption(glob('--include=*.ts'))).toBe(false);
    expect(mayBeOption(glob('--pre*'))).toBe(true);
    expect(mayBeOption(glob('-*'))).toBe(true);
  });
  it('names options by every alias', () => {
    const def = { short: 'u', long: ['unset'], effect: 'plain' as const };
    expect(defHasName(def, '-u')).toBe(true);
    expect(defHasName(def, '--unset')).toBe(true);
    expect(defHasName(def, '--uns')).toBe(false);
  });
  it('rejects a table that declares a name twice (a programming error)', () => {
    expect(() => optionTable<E>('x', [{ short: 'a', effect: 'plain' }, { short: 'a', effect: 'plain' }])).toThrow(/twice/);
  });
});

describe('splitEnvString (env -S)', () => {
  const split = (s: string) => splitEnvString(s)?.map((x) => (x.dynamic ? `<${x.value}>` : x.value)) ?? null;
  it('splits on blanks and keeps quoted blanks', () => {
    expect(split('rm -rf src')).toEqual(['rm', '-rf', 'src']);
    expect(split(`sh -c 'rm -rf src'`)).toEqual(['sh', '-c', 'rm -rf src']);
    expect(split(`printf "%s\\n" a`)).toEqual(['printf', '%s\n', 'a']);
  });
  it('handles its escapes: \\_ separates outside double quotes, \\c ends, # starts a comment', () => {
    expect(split('rm\\_-rf\\_src')).toEqual(['rm', '-rf', 'src']);
    expect(split('"a\\_b"')).toEqual(['a b']);
    expect(split('ls \\c rm -rf src')).toEqual(['ls']);
    expect(split('ls #rm -rf src')).toEqual(['ls']);
    expect(split('ls a#b')).toEqual(['ls', 'a#b']);
    expect(split(`'a\\'b' 'c\\d'`)).toEqual(["a'b", 'c\\d']);
    expect(split(`'' x`)).toEqual(['', 'x']);
  });
  it('marks ${NAME} as computed and refuses what env refuses', () => {
    expect(split('${CMD} -rf src')).toEqual(['<\u0000>', '-rf', 'src']);
    expect(split('$CMD')).toBeNull();
    expect(split('a\\qb')).toBeNull();
    expect(split("'open")).toBeNull();
    expect(split('"a\\cb"')).toBeNull();
  });
});
