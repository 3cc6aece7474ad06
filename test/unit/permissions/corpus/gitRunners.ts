import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';
import { initRepo } from './repo';
import type { BashCase, CorpusGroup, Decision, RealBashCheck } from './types';

/**
 * Issue 22, root cause 1: git sub-commands that run programs, and git options that name files,
 * under Bash rules for those sub-commands (`Bash(git rebase:*)` …) with `Bash(rm:*)` and
 * `Read(./secrets/**)` denied. Runners (bisect run, rebase -x/--exec, submodule foreach,
 * difftool -x/--extcmd, grep -O/--open-files-in-pager): the command they run meets the deny
 * rules. Inline code (clone -u/--upload-pack/--template/-c/--config, fetch/push --upload-pack,
 * --receive-pack, --exec, `git -c KEY=…` for a key that runs programs): only a rule naming the
 * option allows it, and its program meets the deny rules too. Files (commit -F/-t, log/diff/show
 * --output, archive -o, format-patch -o, tag/merge -F, git config's program keys): Read and
 * Edit rules and protected places decide them. Every program-running form below was proved to
 * run its program in real git 2.39 (the `realBash` checks), in a real repository.
 */
type Row = [command: string, expect: Decision, check?: RealBashCheck, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] =>
  list.map(([command, expect, realBash, mode]) => ({ group, command, expect, ...(realBash ? { realBash } : {}), ...(mode ? { mode } : {}) }));

const SRC_GONE: RealBashCheck = { proves: 'test ! -e src' };
const PWNED: RealBashCheck = { proves: 'test -e PWNED' };

const SETTINGS = {
  permissions: {
    allow: [
      'Bash(git bisect:*)', 'Bash(git rebase:*)', 'Bash(git submodule:*)', 'Bash(git grep:*)', 'Bash(git difftool:*)', 'Bash(git clone:*)',
      'Bash(git commit:*)', 'Bash(git log:*)', 'Bash(git diff:*)', 'Bash(git show:*)', 'Bash(git archive:*)', 'Bash(git fetch:*)', 'Bash(git config:*)',
      'Bash(git init:*)', 'Bash(git format-patch:*)', 'Bash(git tag:*)', 'Bash(git merge:*)', 'Bash(git ls-remote:*)', 'Bash(git push:*)',
    ],
    deny: ['Bash(rm:*)', 'Bash(curl:*)', 'Read(./secrets/**)'],
  },
};

/** A repository, a template and a hooks folder outside whose post-checkout hook touches PWNED. */
function prepare(fx: PermissionFixture): void {
  initRepo(fx);
  for (const dir of [join(fx.outside, 'tpl', 'hooks'), join(fx.outside, 'h')]) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'post-checkout'), `#!/bin/sh\ntouch ${JSON.stringify(join(fx.ws, 'PWNED'))}\n`);
    chmodSync(join(dir, 'post-checkout'), 0o755);
  }
}

const RUNNERS: Row[] = [
  // bisect run: the command it runs each step.
  ['git bisect run rm -rf src', 'deny', { setup: 'git bisect start HEAD HEAD~1', proves: 'test ! -e src' }],
  ['git bisect run rm -rf src', 'deny', undefined, 'bypassPermissions'],
  ['git bisect run touch PWNED', 'allow', { setup: 'git bisect start HEAD HEAD~1', proves: 'test -e PWNED' }],
  ['git bisect run npm test', 'allow'],
  ['git bisect start HEAD HEAD~1', 'allow'],
  ['git bisect reset', 'allow'],
  // rebase -x / --exec, every spelling parse-options accepts.
  ["git rebase -x 'rm -rf src' HEAD~1", 'deny', SRC_GONE],
  ["git rebase -x'rm -rf src' HEAD~1", 'deny'],
  ["git rebase --exec 'rm -rf src' HEAD~1", 'deny'],
  ["git rebase --exec='rm -rf src' HEAD~1", 'deny'],
  ["git rebase --exe 'rm -rf src' HEAD~1", 'deny'],
  ["git rebase -i -x 'rm -rf src' HEAD~1", 'deny'],
  ["git rebase -x 'rm -rf src' HEAD~1", 'deny', undefined, 'dontAsk'],
  ["git rebase -x 'touch PWNED' HEAD~1", 'allow', PWNED],
  ["git rebase -x 'npm test' HEAD~1", 'allow'],
  ['git rebase -x "$CMD" HEAD~1', 'ask'],
  ['git rebase --onto main HEAD~1', 'allow'],
  ['git rebase main', 'allow'],
  // submodule foreach: its command line runs in every submodule.
  ["git submodule foreach 'rm -rf src'", 'deny'],
  ['git submodule foreach --recursive rm -rf x', 'deny'],
  ['git submodule --quiet foreach git status', 'allow'],
  ['git submodule update --init', 'allow'],
  // difftool -x / --extcmd: run on each changed file.
  // (difftool writes its copies to TMPDIR; the real-bash sandbox only lets the workspace be written)
  ["git difftool -y -x 'rm -rf src' HEAD~1", 'deny', { setup: 'export TMPDIR=$PWD', proves: 'test ! -e src' }],
  ["git difftool -y --extcmd='rm -rf src' HEAD~1", 'deny'],
  ["git difftool -y --extcmd 'touch PWNED' HEAD~1", 'allow', { setup: 'export TMPDIR=$PWD', proves: 'test -e PWNED' }],
  ['git difftool -y -t vimdiff HEAD~1', 'allow'],
  // grep -O / --open-files-in-pager: the pager runs with the matching files.
  ["git grep -O'rm -rf src' export", 'deny', SRC_GONE],
  ["git grep --open-files-in-pager='rm -rf src' export", 'deny'],
  ["git grep --open='rm -rf src' export", 'deny'],
  ["git grep -O'touch PWNED' export -- src", 'allow', PWNED],
  // git grep reads every tracked file below here: secrets/ too (a search Read(./secrets/**) limits).
  ['git grep -n export', 'ask'],
  ['git grep -n export -- src', 'allow'],
];

const INLINE: Row[] = [
  // clone -u / --upload-pack: a program git runs for the transfer (through a shell).
  ["git clone --no-local -u 'rm -rf src; git-upload-pack' ../outside/remote.git c", 'deny', SRC_GONE],
  ["git clone --no-local -u 'touch PWNED; git-upload-pack' ../outside/remote.git c", 'ask', PWNED],
  ["git clone --upload-pack='rm -rf src' ../outside/remote.git c", 'deny'],
  ["git clone --upload-p='touch PWNED' ../outside/remote.git c", 'ask'],
  // --template: the template's hooks run (post-checkout) in the new repository.
  ['git clone --template=../outside/tpl ../outside/remote.git c', 'ask', PWNED],
  ['git clone --template ../outside/tpl ../outside/remote.git c', 'ask'],
  ['git init --template=../outside/tpl fresh', 'ask'],
  // -c / --config: a key that names hooks or a program.
  ['git clone -c core.hooksPath=../../outside/h ../outside/remote.git c', 'ask', PWNED],
  ['git clone --config core.hooksPath=../../outside/h ../outside/remote.git c', 'ask'],
  ["git clone -c core.fsmonitor='rm -rf src' ../outside/remote.git c", 'deny'],
  ["git clone --config=core.sshCommand='rm -rf src' git@example.invalid:x.git", 'deny'],
  ['git clone -c user.name=k ../outside/remote.git c', 'allow'],
  ['git clone -c color.ui=never ../outside/remote.git c', 'allow'],
  ['git clone ../outside/remote.git c', 'allow'],
  ['git clone https://example.invalid/r.git', 'allow'],
  ['git clone ../outside/remote.git .keel/c', 'ask'],
  ['git clone ../outside/remote.git ../outside/c', 'ask'],
  // git's own -c: program keys are inline code (and their program meets the deny rules).
  ["git -c core.pager='rm -rf src' log", 'deny'],
  ["git -c alias.zz='!rm -rf src' zz", 'deny'],
  ["git -c alias.zz='!touch PWNED' zz", 'ask', PWNED],
  ['git -c core.pager=less log', 'ask'],
  ['git -c core.editor=vi commit', 'ask'],
  // transports of other sub-commands.
  ["git fetch --upload-pack='rm -rf src' origin", 'deny'],
  ['git fetch --upload-pack=git-upload-pack origin', 'ask'],
  ['git fetch origin', 'allow'],
  ["git push --receive-pack='rm -rf src' origin main", 'deny'],
  ["git push --exec='rm -rf src' origin main", 'deny'],
  ["git ls-remote --upload-pack='rm -rf src' origin", 'deny'],
  ["git archive --remote=origin --exec='rm -rf src' HEAD", 'deny'],
];

const FILES: Row[] = [
  // commit -F / -t / --pathspec-from-file read a file into the commit (then anyone can read it).
  ['git commit --allow-empty -F secrets/key.pem', 'deny', { proves: "git log -1 --format=%B | grep -q KEY" }],
  ['git commit --allow-empty --file=secrets/key.pem', 'deny'],
  ['git commit --allow-empty -Fsecrets/key.pem', 'deny'],
  ['git commit --allow-empty -t secrets/key.pem', 'deny'],
  ['git commit --allow-empty --template=secrets/key.pem', 'deny'],
  ['git commit --pathspec-from-file=secrets/key.pem', 'deny'],
  ['git commit --allow-empty -F ../outside/secret.txt', 'ask'],
  ['git commit --allow-empty -F src/a.ts', 'allow'],
  ['git commit --allow-empty -F -', 'allow'],
  ['git commit -am fix', 'allow'],
  ['git commit -m "$msg"', 'allow'],
  ['git commit $args', 'ask'],
  // Claude Code's own commit: a here-document fed to cat in a substitution is data.
  ["git commit -m \"$(cat <<'EOF'\nFix the parser\n\nCo-Authored-By: Someone <a@b>\nEOF\n)\"", 'allow'],
  ['git tag -F secrets/key.pem v1', 'deny'],
  ['git tag -a v1 -m release', 'allow'],
  ['git merge -F secrets/key.pem main', 'deny'],
  ['git merge --no-ff main', 'allow'],
  // --output and -o write a file (log/diff/show: a side output, like a redirection).
  ['git log --output=.keel/settings.local.json -1', 'ask', { proves: 'test -s .keel/settings.local.json' }],
  ['git log --output=.keel/settings.local.json -1', 'ask', undefined, 'bypassPermissions'],
  ['git log --output=log.txt -1', 'ask'],
  ['git log --output=log.txt -1', 'allow', undefined, 'acceptEdits'],
  ['git diff --output=.git/hooks/pre-commit HEAD~1', 'ask'],
  ['git show --output=../outside/x HEAD', 'ask'],
  ['git log -1 --oneline', 'allow'],
  ['git archive -o .keel/x.tar HEAD', 'ask', { proves: 'test -s .keel/x.tar' }],
  ['git archive --output=../outside/x.tar HEAD', 'ask'],
  ['git archive -o out.tar HEAD', 'allow'],
  ['git archive --add-file=secrets/key.pem -o out.tar HEAD', 'deny'],
  ['git format-patch -o .git/hooks HEAD~1', 'ask'],
  ['git format-patch -o patches HEAD~1', 'allow'],
  // git config: a key that runs programs or hooks changes a protected place, in every mode.
  ["git config core.pager 'rm -rf x'", 'ask'],
  ['git config core.hooksPath ../outside/h', 'ask', undefined, 'bypassPermissions'],
  ["git config --add core.fsmonitor 'touch x'", 'ask'],
  ['git config --unset core.pager', 'ask'],
  ['git config user.name k', 'allow'],
  ['git config --get user.name', 'allow'],
  ['git config -f .keel/x.cfg user.name k', 'ask'],
  ['git init ../outside/fresh', 'ask'],
  ['git init fresh', 'allow'],
];

export const GIT_RUNNER_GROUPS: CorpusGroup[] = [
  { name: 'git sub-commands that run programs (runners)', settings: SETTINGS, prepare, bash: rows('git-runners', RUNNERS) },
  { name: 'git options that run programs (inline code)', settings: SETTINGS, prepare, bash: rows('git-inline', INLINE) },
  { name: 'git options that name files', settings: SETTINGS, prepare, bash: rows('git-files', FILES) },
];
