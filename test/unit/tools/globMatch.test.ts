import { describe, expect, it } from 'vitest';
import { createGlobMatcher } from '../../../src/core/tools/globMatch';

const cases: Array<[pattern: string, path: string, expected: boolean]> = [
  ['*.ts', 'a.ts', true],
  ['*.ts', 'src/deep/a.ts', true],
  ['*.ts', 'a.tsx', false],
  ['**/*.ts', 'a.ts', true],
  ['**/*.ts', 'src/deep/a.ts', true],
  ['src/*.ts', 'src/a.ts', true],
  ['src/*.ts', 'src/deep/a.ts', false],
  ['src/**/*.ts', 'src/a.ts', true],
  ['src/**/*.ts', 'src/x/y/a.ts', true],
  ['src/**/*.ts', 'lib/src/a.ts', false],
  ['src/**', 'src/x/y.md', true],
  ['./src/*.ts', 'src/a.ts', true],
  ['/src/*.ts', 'src/a.ts', true],
  ['*.{ts,tsx}', 'src/a.tsx', true],
  ['*.{ts,tsx}', 'src/a.js', false],
  ['{src,test}/**/*.{ts,js}', 'test/u/a.js', true],
  ['{src,test}/**/*.{ts,js}', 'lib/a.js', false],
  ['file?.txt', 'file1.txt', true],
  ['file?.txt', 'file10.txt', false],
  ['[ab].txt', 'b.txt', true],
  ['[!ab].txt', 'b.txt', false],
  ['[!ab].txt', 'c.txt', true],
  ['a+b(1).txt', 'a+b(1).txt', true],
  ['\\*.txt', '*.txt', true],
  ['\\*.txt', 'x.txt', false],
  ['*.{ts', 'a.ts', true],
];

describe('createGlobMatcher', () => {
  it.each(cases)('%s against %s is %s', (pattern, p, expected) => {
    expect(createGlobMatcher(pattern)(p)).toBe(expected);
  });
});
