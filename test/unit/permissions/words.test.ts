import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Parser } from 'web-tree-sitter';
import { expandBraces, MAX_FIELDS } from '../../../src/core/permissions/shell/braces';
import { loadBashParser } from '../../../src/core/permissions/shell/parser';
import { evalWord, type ShellWord } from '../../../src/core/permissions/shell/words';

/**
 * Words as bash passes them: brace expansion (quote-aware, sequences, nesting), tilde expansion,
 * NUL truncation in $'…'. The expectations come from bash itself: a differential test runs random
 * words through `bash -c 'printf "[%s]" WORD'` and compares.
 */
let parser: Parser;
beforeAll(async () => {
  parser = await loadBashParser();
});

const HOME = '/home/u';

/** The words of `printf '%s' WORD...`'s first argument word, evaluated by Keel. */
function word(src: string): ShellWord {
  const tree = parser.parse(`printf %s ${src}`);
  if (!tree) throw new Error('no tree');
  try {
    const cmd = tree.rootNode.namedChildren.find((n) => n?.type === 'command');
    const arg = cmd?.namedChildren[2];
    if (!arg) throw new Error(`no argument in ${src}`);
    return evalWord(arg, HOME);
  } finally {
    tree.delete();
  }
}

/** What bash passes for each of `srcs`, in one bash process (null where bash reports an error). */
function bashFieldsMany(srcs: string[]): (string[] | null)[] {
  const script = 'for w in "$@"; do if eval "printf \'[%s]\\n\' - $w" 2>/dev/null; then echo "<<end>>"; else echo "<<error>>"; fi; done';
  const r = spawnSync('bash', ['-c', script, 'bash', ...srcs], { encoding: 'utf8', env: { HOME, PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  const out: (string[] | null)[] = [];
  let cur: string[] = [];
  for (const line of r.stdout.split('\n')) {
    if (line === '<<end>>' || line === '<<error>>') {
      out.push(line === '<<end>>' ? cur.slice(1) : null);
      cur = [];
    } else if (/^\[.*\]$/.test(line)) cur.push(line.slice(1, -1));
  }
  return out;
}

/** What bash passes for `src` (null when bash reports an error). */
function bashFields(src: string): string[] | null {
  const r = spawnSync('bash', ['-c', `printf '[%s]\\n' - ${src}`], { encoding: 'utf8', env: { HOME, PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  if (r.status !== 0) return null;
  return [...r.stdout.matchAll(/^\[(.*)\]$/gm)].map((m) => m[1] as string).slice(1);
}

describe('brace expansion', () => {
  it.each([
    ["{/etc/passwd,'src/a.txt'}", ['/etc/passwd', 'src/a.txt']],
    ['{a,b}{1,2}', ['a1', 'a2', 'b1', 'b2']],
    ['x{a,b}y', ['xay', 'xby']],
    ['{a,{b,c}}', ['a', 'b', 'c']],
    ['{a{b,c}}', ['{ab}', '{ac}']],
    ['{a}{b,c}', ['{a}b', '{a}c']],
    ['{1..3}', ['1', '2', '3']],
    ['{3..1..2}', ['3', '1']],
    ['{01..03}', ['01', '02', '03']],
    ['{a..e..2}', ['a', 'c', 'e']],
    ['{-1..1}', ['-1', '0', '1']],
    ['{status,}', ['status']],
    ['{,}', []],
    ['""{a,}', ['a', '']],
    ["'{a,b}'", ['{a,b}']],
    ['"{a,b}"', ['{a,b}']],
    ['\\{a,b}', ['{a,b}']],
    ['{a,b\\}', ['{a,b}']],
    ['{a\\,b}', ['{a,b}']],
    ["{a,'b,c'}", ['a', 'b,c']],
    ['{a}', ['{a}']],
    ['x{}y', ['x{}y']],
    ['{1..a}', ['{1..a}']],
    ['{a..}', ['{a..}']],
  ])('%s gives what bash gives', (src, expected) => {
    const w = word(src);
    expect(w.fields).toEqual(expected);
    expect(bashFields(src)).toEqual(expected);
  });

  it('marks a word that expands as dynamic, so rules never match it literally', () => {
    expect(word('{a,b}').dynamic).toBe(true);
    expect(word("'{a,b}'").dynamic).toBe(false);
    expect(word('{a}').dynamic).toBe(false);
  });

  it('refuses (fields unknown) past the bound, without doing the work', () => {
    const big = word('{a,b}'.repeat(20));
    expect(big.fields).toBeUndefined();
    expect(big.dynamic).toBe(true);
    expect(word(`{1..${MAX_FIELDS + 1}}`).fields).toBeUndefined();
    expect(word(`{1..${MAX_FIELDS}}`).fields).toHaveLength(MAX_FIELDS);
    const t0 = performance.now();
    expect(expandBraces({ text: '{a,b}'.repeat(5000), tags: new Uint8Array(25_000) })).toBeNull();
    expect(performance.now() - t0).toBeLessThan(1000); // a loose sanity bound; the bench measures speed
  });

  it('matches bash on random words of braces, commas, dots, quotes and escapes', () => {
    const alphabet = ['{', '}', ',', 'a', 'b', '1', '2', '..', "'", '"', '\\', 'x'];
    let seed = 42;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const words: string[] = [];
    for (let k = 0; k < Number(process.env.BRACE_N ?? 400); k++) {
      let src = '';
      for (let i = 0, n = 3 + rnd(10); i < n; i++) src += alphabet[rnd(alphabet.length)];
      words.push(src);
    }
    const fromBash = bashFieldsMany(words);
    expect(fromBash).toHaveLength(words.length);
    let compared = 0;
    words.forEach((src, k) => {
      const expected = fromBash[k];
      if (expected === null || expected === undefined) return; // a syntax error (unbalanced quote): not a word
      const tree = parser.parse(`printf %s ${src}`);
      const ok = tree !== null && !tree.rootNode.hasError;
      tree?.delete();
      if (!ok) return;
      const w = word(src);
      if (w.fields === undefined) return; // unknown is always safe
      compared++;
      expect({ src, fields: w.fields }).toEqual({ src, fields: expected });
    });
    expect(compared).toBeGreaterThan(150);
  });
});

describe('tilde expansion', () => {
  it.each([
    ['~', [HOME]],
    ['~/x', [`${HOME}/x`]],
    ["'~'/x", ['~/x']],
    ['\\~/x', ['~/x']],
    ['x~/y', ['x~/y']],
    ['a=~/b', [`a=${HOME}/b`]],
    ['a=x:~/b', [`a=x:${HOME}/b`]],
    ['--opt=~/x', ['--opt=~/x']],
    ['{~,/tmp}/x', [`${HOME}/x`, '/tmp/x']],
  ])('%s gives %j', (src, expected) => {
    expect(word(src).fields).toEqual(expected);
    expect(bashFields(src)).toEqual(expected);
  });

  it.each(['~root/x', '~+/x', '~-/x', '~2'])('%s is unknown', (src) => {
    expect(word(src).fields).toBeUndefined();
  });
});

describe('NUL in $\'…\'', () => {
  it.each([
    ["$'ab\\x00cd'ef", 'abef'],
    ["$'/etc/passwd\\0/../x'", '/etc/passwd'],
    ["$'a\\u0000b'", 'a'],
    ["$'a\\U00000000b'", 'a'],
    ["$'a\\0001'", 'a'],
    ["$'a\\c@b'", 'a'],
    ["x$'\\x00'y", 'xy'],
  ])('%s is cut at the NUL as bash cuts it', (src, expected) => {
    const w = word(src);
    expect(w.fields).toEqual([expected]);
    expect(w.value).toBe(expected);
    expect(w.value).not.toContain('\u0000');
    expect(bashFields(src)).toEqual([expected]);
  });

  it('keeps U+0000 only as the marker of a part known at run time', () => {
    const w = word('a$HOME');
    expect(w.dynamic).toBe(true);
    expect(w.value).toBe('a\u0000');
    expect(w.fields).toBeUndefined();
  });
});

describe('computed words that stay one word, and process substitutions (issue 22)', () => {
  it('a substitution inside double quotes is one word of unknown value', () => {
    expect(word('"$(cat <<EOF\nx\nEOF\n)"')).toMatchObject({ dynamic: true, single: true });
    expect(word('--author="$x"')).toMatchObject({ dynamic: true, single: true });
    expect(word('"$x-$y"')).toMatchObject({ dynamic: true, single: true });
  });

  it('what may split into several words is not', () => {
    expect(word('$x').single).toBeUndefined();
    expect(word('"$@"').single).toBeUndefined();
    expect(word('"${a[@]}"').single).toBeUndefined();
    expect(word('"$x"*').single).toBeUndefined();
  });

  it('a process substitution standing alone is a pipe (/dev/fd/N), an operand that is no file', () => {
    expect(word('<(ls)')).toMatchObject({ value: '/dev/fd/63', dynamic: false, fields: ['/dev/fd/63'] });
    expect(word('>(cat)')).toMatchObject({ value: '/dev/fd/63', dynamic: false });
  });

  it('bash agrees: a process substitution is a /dev/fd path', () => {
    const r = spawnSync('bash', ['-c', 'printf "%s" <(true)'], { encoding: 'utf8' });
    expect(r.stdout).toMatch(/^\/dev\/fd\/\d+$/);
  });
});
