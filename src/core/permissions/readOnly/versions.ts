import type { ParsedArgs } from '../shell/options';
import { roTable } from './table';
import type { ReadOnlySpec, RO } from './types';

/**
 * Asking a toolchain for its version (`node --version`, `python3 -V`, `go version`): read-only,
 * and only that exact form — any other option or operand runs code. The letters are each
 * program's documented version flag (node -v, python -V, perl -v, php -v); ruby's -v also turns
 * on verbose mode for a script, so only its --version counts.
 */
const alone = (a: ParsedArgs<RO>): boolean => a.options.length === 1 && a.operands.length === 0;
const spec = (table: string): ReadOnlySpec => ({ table: roTable('version', table, { abbreviations: false }), operands: 'none', check: alone, onlyReadOnly: true });

const LONG_ONLY = spec('/version');

export const VERSIONS: Record<string, ReadOnlySpec> = {
  node: spec('v/version'),
  nodejs: spec('v/version'),
  python: spec('V/version'),
  python3: spec('V/version'),
  perl: spec('v/version'),
  php: spec('v/version'),
  ruby: LONG_ONLY,
  npm: spec('v/version'),
  npx: spec('v/version'),
  yarn: spec('v/version'),
  pnpm: spec('v/version'),
  deno: spec('V/version'),
  bun: spec('v/version'),
  cargo: spec('V/version'),
  rustc: spec('V/version'),
  tsc: spec('v/version'),
  gcc: LONG_ONLY,
  'g++': LONG_ONLY,
  clang: LONG_ONLY,
  make: spec('v/version'),
  docker: spec('v/version'),
  // `go version` (an operand, not an option).
  go: {
    operands: 'none',
    table: roTable('go', '', { abbreviations: false }),
    check: (a) => a.options.length === 0 && a.operands.length === 1 && a.operands[0]?.word.value === 'version',
    onlyReadOnly: true,
  },
};

/** A versioned interpreter name (`python3.12`) as the spec it shares. */
export function versionSpecOf(name: string): ReadOnlySpec | undefined {
  return /^python3?\.\d+$/.test(name) ? VERSIONS.python : undefined;
}
