import type { BashCase, CorpusGroup, Decision } from './types';

/**
 * Bounded analysis (issue 9): inputs that made the analysis take a minute or overflow the stack
 * (`ls $(…` nested 1,000 deep took 44 s), and other shapes that are slow to parse — deep nesting
 * of every kind, long pipelines, many words, unbalanced input, shapes that make tree-sitter's GLR
 * parser explore many readings. Each must be answered at once, and never with allow: the rules
 * below would allow `ls` and `echo` with any arguments, so an analysis that gave up quietly would
 * show. The time of each decision is measured by bench/permissions.bench.ts, not asserted here.
 */
const rep = (s: string, n: number): string => s.repeat(n);

const CASES: [string, string, Decision][] = [
  ['ls $( nested 1,000 deep', `ls ${rep('$(', 1000)}x${rep(')', 1000)}`, 'ask'],
  ['ls $( nested 5,000 deep', `ls ${rep('$(', 5000)}x${rep(')', 5000)}`, 'ask'],
  ['ls $( unbalanced, 5,000', `ls ${rep('$(', 5000)}`, 'ask'],
  ['backticks, 3,000', `ls ${rep('`', 3001)}`, 'ask'],
  ['escaped backticks nested 100 deep', `ls ${Array.from({ length: 100 }, (_, i) => `${'\\'.repeat(2 ** Math.min(i, 6) - 1)}\``).join('')}`, 'ask'],
  ['(( nested 1,000 deep', `${rep('((', 1000)}1${rep('))', 1000)}`, 'ask'],
  ['$(( nested 1,000 deep', `echo $((${rep('(', 1000)}1${rep(')', 1000)}))`, 'ask'],
  ['{ nested 1,000 deep', `${rep('{ ', 1000)}ls${rep('; }', 1000)}`, 'ask'],
  ['( nested 1,000 deep', `${rep('(', 1000)}ls${rep(')', 1000)}`, 'ask'],
  ['"$( nested 1,000 deep', `ls ${rep('"$(', 1000)}`, 'ask'],
  ['${x:- nested 1,000 deep', `echo ${rep('${x:-', 1000)}y${rep('}', 1000)}`, 'ask'],
  ['<( nested 1,000 deep', `cat ${rep('<(', 1000)}ls${rep(')', 1000)}`, 'ask'],
  ['[ nested 1,000 deep', `ls ${rep('[', 1000)}`, 'ask'],
  ['65 levels of $(', `ls ${rep('$(echo ', 65)}x${rep(')', 65)}`, 'ask'],
  ['if nested 2,000 deep', `${rep('if true; then ', 2000)}ls${rep('; fi', 2000)}`, 'ask'],
  ['here-doc in here-doc bodies 1,000 deep', `${rep('cat <<E\n$(', 1000)}x`, 'ask'],
  ['10,000 && in a chain', `ls${rep(' && ls', 10_000)}`, 'ask'],
  ['pipeline of 1,000', `ls${rep(' | cat', 1000)}`, 'ask'],
  ['pipeline of 129', `ls${rep(' | cat', 129)}`, 'ask'],
  ['100,000 words', `ls ${rep('a ', 100_000)}`, 'ask'],
  ['3,000 words', `ls ${rep('a ', 3000)}`, 'ask'],
  ['5,000 commands', rep('ls;', 5000), 'ask'],
  ['3,000 here-docs', rep('cat <<E\nx\nE\n', 3000), 'ask'],
  ['100 KB and one byte', `echo '${rep('x', 100 * 1024)}'`, 'ask'],
  ['a NUL byte', 'ls src\u0000; rm -rf /', 'ask'],
  ['unbalanced quote at the end of 50 KB', `echo ${rep('a', 50_000)} "`, 'ask'],
  ['(ls) 800 times (slow GLR recovery)', rep('(ls)', 800), 'ask'],
  ['f() )) 220 times (slow GLR recovery)', rep('test f() )) coproc ', 220), 'ask'],
  [') until f() 340 times', rep(') until f() ', 340), 'ask'],
  ['a brace sequence of a million words', 'cat {1..1000000}', 'ask'],
  ['braces multiplying to 2^20 words', `cat ${rep('{a,b}', 20)}`, 'ask'],
  ['sh -c nested 6 deep', "sh -c \"sh -c 'sh -c \\\"sh -c \\\\\\\"sh -c ls\\\\\\\"\\\"'\"", 'ask'],
  ['long line continuations', `ls ${rep('a \\\n', 3000)}`, 'ask'],
  // well under the bounds: still analysed and allowed (sizes leave room for a busy machine, since
  // the analysis has a CPU-time budget)
  // (echo: ls's operand would be a file named only at run time, which a rule for ls cannot vouch for)
  ['64 levels of $(', `echo ${rep('$(echo ', 64)}x${rep(')', 64)}`, 'allow'],
  ['if nested 50 deep', `${rep('if true; then ', 50)}ls${rep('; fi', 50)}`, 'allow'],
  ['&& chain of 100', `ls${rep(' && ls', 100)}`, 'allow'],
  ['pipeline of 50', `ls${rep(' | cat', 50)}`, 'allow'],
  ['200 words', `ls ${rep('a ', 200)}`, 'allow'],
  ['a 90 KB quoted here-document', `cat <<'EOF'\n${rep('const x = `$(rm -rf /)`; // {a,b} ((((\n', 2000)}EOF`, 'allow'],
  ['braces multiplying to 2^20 words, printed by echo', `echo ${rep('{a,b}', 20)}`, 'allow'],
];

export const BOUNDS_GROUP: CorpusGroup = {
  name: 'bounds',
  settings: { permissions: { allow: ['Bash(ls:*)', 'Bash(echo:*)'] } },
  bash: CASES.map(([note, command, expect]): BashCase => ({ group: 'bounds', command, expect, note })),
};
