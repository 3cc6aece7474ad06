import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';
import type { BashCase, CorpusGroup, Decision, RealBashCheck } from './types';

/**
 * Holes found on main after issue 9's first round:
 * - redirections are files of their own: wherever a `> f` or `< f` sits (command or process
 *   substitution, subshell, function body, here-string), Edit/Write rules decide the write and
 *   Read rules (or the workspace) the read, whichever command's Bash rule matched;
 * - programs that run their arguments (strace, gdb --args, perf record, unknown tools): the inner
 *   command's deny rules still apply, and a rule on a program Keel cannot see into allows nothing;
 * - program paths are what the kernel runs: `/usr/bin/../bin/env` is env, a workspace link named
 *   `ls` to /bin/rm is rm, a workspace program is not the system one.
 */
type Row = [command: string, expect: Decision, check?: RealBashCheck, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] =>
  list.map(([command, expect, realBash, mode]) => ({ group, command, expect, ...(realBash ? { realBash } : {}), ...(mode ? { mode } : {}) }));

const WRITES_OUT = { proves: 'test -f out.txt' };
const DELETES_SRC = { proves: 'test ! -e src' };

const REDIRECT_SETTINGS = {
  permissions: {
    allow: ['Bash(echo:*)', 'Bash(grep:*)', 'Bash(npm test)', 'Bash(cat:*)', 'Edit(./src/**)', 'Read(~/docs/**)'],
    deny: ['Edit(./.env)', 'Read(./secrets/**)'],
  },
};

const REDIRECTS: Row[] = [
  // the reported hole, and the same write in every place a redirection can sit
  ['echo $(pwd > out.txt)', 'ask', WRITES_OUT],
  ['echo `pwd > out.txt`', 'ask', WRITES_OUT],
  ['echo "$(pwd > out.txt)"', 'ask', WRITES_OUT],
  ['echo <(pwd > out.txt)', 'ask'],
  ['echo >(cat > out.txt)', 'ask'],
  ['echo hi; (pwd > out.txt)', 'ask', WRITES_OUT],
  ['echo hi && { pwd > out.txt; }', 'ask', WRITES_OUT],
  ['f() { pwd > out.txt; }; f; echo hi', 'ask', WRITES_OUT],
  ['echo hi <<< "$(pwd > out.txt)"', 'ask', WRITES_OUT],
  ['echo $(echo $(pwd > out.txt))', 'ask', WRITES_OUT],
  ['echo hi > out.txt', 'ask', WRITES_OUT],
  ['echo hi >> out.txt', 'ask', WRITES_OUT],
  ['echo hi &> out.txt', 'ask', WRITES_OUT],
  ['echo hi 2> out.txt', 'ask', WRITES_OUT],
  ['echo hi >| out.txt', 'ask', WRITES_OUT],
  ['echo hi | cat > out.txt', 'ask', WRITES_OUT],
  ['npm test > out.txt', 'ask'],
  ['for i in 1; do echo $i > out.txt; done', 'ask', WRITES_OUT],
  ['if true; then echo hi > out.txt; fi', 'ask', WRITES_OUT],
  // an Edit rule covers the file: allowed, wherever the redirection is
  ['echo hi > src/out.txt', 'allow', { proves: 'test -f src/out.txt' }],
  ['echo $(pwd > src/out.txt)', 'allow', { proves: 'test -f src/out.txt' }],
  ['echo hi; (echo x >> src/a.ts)', 'allow'],
  ['cat > src/new.ts <<EOF\nx\nEOF', 'allow'],
  // deny rules on the file win everywhere
  ['echo hi > .env', 'deny'],
  ['echo $(echo x > .env)', 'deny'],
  ['echo <(echo x > .env)', 'deny'],
  // a function body may run anywhere: its file is not known (it asks)
  ['f() { echo x > .env; }; echo hi', 'ask'],
  ['echo $(cat < secrets/key.pem)', 'deny'],
  ['echo hi <<< "$(cat < secrets/key.pem)"', 'deny'],
  ['grep x < secrets/key.pem', 'deny'],
  // Read deny rules on a read-only command's files apply when xargs adds arguments too
  // (found by the composition property test)
  ['xargs head secrets/key.pem', 'deny'],
  ['xargs head secrets/key.pem', 'deny', undefined, 'bypassPermissions'],
  ['xargs -0 cat secrets/key.pem', 'deny'],
  // protected places and outside the workspace
  ['echo $(pwd > .keel/settings.local.json)', 'ask'],
  ['echo $(pwd > ../outside/x.txt)', 'ask'],
  // reads: inside the workspace or a Read allow rule, whichever Bash rule allowed the command
  ['grep x < src/a.ts', 'allow'],
  ['grep x < /etc/passwd', 'ask', { proves: 'grep -q root "$OUT"' }],
  ['echo $(grep root < /etc/passwd)', 'ask', { proves: 'grep -q root "$OUT"' }],
  ['echo "$(cat < /etc/hostname)"', 'ask'],
  ['grep notes < ~/docs/notes.md', 'allow'],
  ['grep x < ~/other.txt', 'ask'],
  ['echo hi > /dev/null', 'allow'],
  ['echo hi 2>&1', 'allow'],
  // acceptEdits allows a write inside the workspace; dontAsk denies what would ask
  ['echo $(pwd > out.txt)', 'allow', undefined, 'acceptEdits'],
  ['npm test > out.txt', 'allow', undefined, 'acceptEdits'],
  ['echo $(pwd > out.txt)', 'deny', undefined, 'dontAsk'],
  ['echo $(pwd > ../outside/x.txt)', 'ask', undefined, 'acceptEdits'],
];

const RUNNER_SETTINGS = {
  permissions: { allow: ['Bash(strace:*)', 'Bash(gdb:*)', 'Bash(perf:*)', 'Bash(ls:*)', 'Bash(mytool:*)', 'Bash(npx:*)', 'Bash(valgrind:*)', 'Bash(parallel:*)'],
    deny: ['Bash(rm:*)', 'Bash(curl:*)'] },
};

const RUNNERS: Row[] = [
  // runners Keel parses: the rule on the runner allows it, the inner command's deny rules apply
  ['strace -f rm -rf src', 'deny'],
  ['strace -o trace.txt -f -- rm -rf src', 'deny'],
  ['strace -e trace=open rm -rf src', 'deny'],
  ['strace sh -c "rm -rf src"', 'deny'],
  ['strace ls', 'allow'],
  ['strace -f ls src', 'allow'],
  ['valgrind --tool=memcheck rm -rf src', 'deny'],
  ['valgrind ls', 'allow'],
  ['strace -f curl http://x', 'deny'],
  ['xvfb-run rm -rf src', 'deny'],
  ['parallel rm ::: src', 'deny'],
  ['parallel echo ::: a b', 'allow'],
  // options that make parallel run another program are opaque, whatever rule allows parallel
  ['parallel --compress-program=sh echo ::: a', 'ask'],
  ['parallel --compress --decompress-program rm echo ::: a', 'ask'],
  ['parallel --ssh rm -S host echo ::: a', 'ask'],
  ['flock .lock rm -rf src', 'deny'],
  ['setsid rm -rf src', 'deny'],
  ['sudo rm -rf src', 'deny'],
  ['ltrace -f rm -rf src', 'deny'],
  ['busybox rm -rf src', 'deny'],
  ["script -qc 'rm -rf src' /dev/null", 'deny'],
  // runners Keel does not parse: asked about, whatever rule names the runner
  ['gdb --args rm -rf src', 'ask'],
  ['gdb -batch -ex run --args ls', 'ask'],
  ['perf record rm -rf src', 'ask'],
  ['perf stat ls', 'ask'],
  ['doas rm -rf src', 'deny'],
  ["su -c 'rm -rf src'", 'ask'],
  ['unshare -r rm -rf src', 'ask'],
  ['tmux new-session -d rm -rf src', 'ask'],
  // programs Keel does not know: a deny rule on what follows asks, never allows
  ['mytool rm -rf src', 'ask'],
  ['mytool --flag rm -rf src', 'ask'],
  ['npx rm -rf src', 'ask'],
  ['mytool build', 'allow'],
  ['npx prettier --check src', 'allow'],
  ['mytool curl http://x', 'ask'],
  ['strace -f mytool rm -rf src', 'ask'],
  ['rm -rf src', 'deny'],
  ['ls rm', 'allow'],
];

const PROGRAM_SETTINGS = { permissions: { allow: ['Bash(ls:*)', 'Bash(env:*)', 'Bash(./tools/build.sh)'], deny: ['Bash(rm:*)'] } };

/**
 * Links made in the workspace: tools/ls -> /bin/rm, tools/env -> /bin/rm, tools/up -> .. (so
 * `tools/up/..` is the workspace's parent), tools/build.sh (a script), tools/sys -> /usr/bin.
 */
function preparePrograms(fx: PermissionFixture): void {
  const tools = join(fx.ws, 'tools');
  mkdirSync(tools, { recursive: true });
  symlinkSync('/bin/rm', join(tools, 'ls'));
  symlinkSync('/bin/rm', join(tools, 'env'));
  symlinkSync('..', join(tools, 'up'));
  symlinkSync('/usr/bin', join(tools, 'sys'));
  writeFileSync(join(tools, 'build.sh'), '#!/bin/sh\necho built\n', { mode: 0o755 });
}

const PROGRAMS: Row[] = [
  ['tools/ls -rf src', 'deny', DELETES_SRC],
  ['./tools/ls -rf src', 'deny', DELETES_SRC],
  ['tools/ls src', 'deny'],
  ['tools/env ls', 'deny'],
  ['./tools/env -rf src', 'deny', DELETES_SRC],
  ['/usr/bin/../bin/env rm -rf src', 'deny', DELETES_SRC],
  ['/usr/bin/../bin/env ls src', 'allow'],
  ['/usr/bin/./ls src', 'allow'],
  ['/usr/bin/ls src', 'allow'],
  ['tools/sys/ls src', 'allow'],
  ['tools/sys/env rm -rf src', 'deny'],
  ['tools/up/tools/ls -rf src', 'deny'],
  ['./tools/build.sh', 'allow'],
  ['tools/build.sh', 'ask'],
  ['./tools/build.sh --force', 'ask'],
  ['./src/a.ts', 'ask'],
  ['./nothing/here ls', 'ask'],
  ['/usr/bin/../../usr/bin/env ls src', 'allow'],
];

export const HOLES_GROUPS: CorpusGroup[] = [
  { name: 'redirections are files of their own', settings: REDIRECT_SETTINGS, bash: rows('redirect-attribution', REDIRECTS) },
  { name: 'programs that run their arguments', settings: RUNNER_SETTINGS, bash: rows('runners', RUNNERS) },
  { name: 'program paths resolved physically', settings: PROGRAM_SETTINGS, prepare: preparePrograms, bash: rows('program-paths', PROGRAMS) },
];
