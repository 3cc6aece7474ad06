import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';
import type { BashCase, CorpusGroup, Decision } from './types';

/**
 * Issue 9, git's read-only forms (no Bash rule, a real repository): listing forms run without
 * asking; forms that write (`branch -D`, `tag v1`), contact the network (`remote show`), take
 * git's dangerous global options (`-C`, `-c`, `--git-dir`, `-p`) or name files outside ask. And
 * never when the repository itself could make git run code: each hostile repository below is
 * proved in real bash to run `touch PWNED` through a "read-only" git command.
 */
type Row = [command: string, expect: Decision, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] => list.map(([command, expect, mode]) => ({ group, command, expect, ...(mode ? { mode } : {}) }));

function git(cwd: string, home: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'k', GIT_AUTHOR_EMAIL: 'k@x', GIT_COMMITTER_NAME: 'k', GIT_COMMITTER_EMAIL: 'k@x' },
  });
}

/** A repository in the workspace: main with one commit, an unmerged branch `victim`, a remote. */
function initRepo(fx: PermissionFixture): void {
  const g = (...a: string[]) => git(fx.ws, fx.home, ...a);
  g('init', '-q', '-b', 'main');
  g('add', 'src/a.ts', 'package.json');
  g('commit', '-q', '-m', 'init');
  g('checkout', '-q', '-b', 'victim');
  writeFileSync(join(fx.ws, 'src', 'v.ts'), 'v\n');
  g('add', 'src/v.ts');
  g('commit', '-q', '-m', 'victim');
  g('checkout', '-q', 'main');
  g('remote', 'add', 'origin', 'https://example.invalid/x.git');
}

const setConfig = (fx: PermissionFixture, key: string, value: string): void => git(fx.ws, fx.home, 'config', key, value);
const PWNED = { proves: 'test -e PWNED' };

const FORMS: Row[] = [
  ['git status', 'allow'],
  ['git status -s', 'allow'],
  ['git status --porcelain=v1 -b', 'allow'],
  ['git status -uno', 'allow'],
  ['git status --porcelain | wc -l', 'allow'],
  ['git log --oneline -5', 'allow'],
  ['git log -p -1', 'allow'],
  ['git log --stat --graph --oneline --all', 'allow'],
  ['git log -n 3 --format=%H', 'allow'],
  ['git log --no-color --decorate=short -1', 'allow'],
  ['git log main..victim', 'allow'],
  ['git diff', 'allow'],
  ['git diff HEAD~1', 'allow'],
  ['git diff --stat --cached', 'allow'],
  ['git diff --no-ext-diff HEAD', 'allow'],
  ['git show HEAD', 'allow'],
  ['git show --stat HEAD', 'allow'],
  ['git show HEAD:src/a.ts', 'allow'],
  ['git branch', 'allow'],
  ['git branch -a', 'allow'],
  ['git branch -vv', 'allow'],
  ["git branch --list 'v*'", 'allow'],
  ['git branch --show-current', 'allow'],
  ['git branch --contains HEAD', 'allow'],
  ['git branch --no-merged main', 'allow'],
  ['git branch --merged', 'ask'],
  ['git tag', 'allow'],
  ["git tag -l 'v*'", 'allow'],
  ['git tag --list -n', 'allow'],
  ['git remote', 'allow'],
  ['git remote -v', 'allow'],
  ['git remote get-url origin', 'allow'],
  ['git rev-parse HEAD', 'allow'],
  ['git rev-parse --show-toplevel', 'allow'],
  ['git rev-parse --abbrev-ref HEAD', 'allow'],
  ['git ls-files', 'allow'],
  ['git ls-files -m -o --exclude-standard', 'allow'],
  ['git blame src/a.ts', 'allow'],
  ['git blame -L 1,1 src/a.ts', 'allow'],
  ['git describe --always --dirty', 'allow'],
  ['git shortlog -sn', 'allow'],
  ['git ls-tree -r HEAD', 'allow'],
  ['git merge-base main victim', 'allow'],
  ['git --no-pager log -1', 'allow'],
  ['git -P log -1', 'allow'],
  ['git --version', 'allow'],
  // Writes.
  ['git branch -qD victim', 'ask'],
  ['git branch -qD victim', 'deny', 'dontAsk'],
  ['git branch -D victim', 'ask'],
  ['git branch --delete victim', 'ask'],
  ['git branch --del victim', 'ask'],
  ['git branch newbranch', 'ask'],
  ['git branch -m other', 'ask'],
  ['git branch -c main copy', 'ask'],
  ['git branch -f main HEAD', 'ask'],
  ['git branch --edit-desc', 'ask'],
  ['git branch --set-upstream-to=origin/main', 'ask'],
  ['git branch -u origin/main', 'ask'],
  ['git branch --unset-upstream', 'ask'],
  ['git branch --track x origin/main', 'ask'],
  ['git tag v1', 'ask'],
  ['git tag -d v1', 'ask'],
  ['git tag -a v1 -m x', 'ask'],
  ['git tag -v v1', 'ask'],
  ['git remote add x https://example.invalid/y.git', 'ask'],
  ['git remote set-url origin x', 'ask'],
  ['git remote show origin', 'ask'],
  ['git remote prune origin', 'ask'],
  ['git commit -m x', 'ask'],
  ['git stash', 'ask'],
  ['git config --list', 'ask'],
  ['git fetch', 'ask'],
  // git's own options.
  ['git -C /tmp status', 'ask'],
  // -C moves where git reads from: inside the workspace it is still read-only (issue 22).
  ['git -C src status', 'allow'],
  ['git -C ../outside status', 'ask'],
  ['git -c core.pager=cat log', 'ask'],
  ['git --git-dir=../outside log', 'ask'],
  ['git --work-tree=/ status', 'ask'],
  ['git -p log', 'ask'],
  ['git --paginate log', 'ask'],
  ['git --exec-path=/tmp status', 'ask'],
  ['git --help', 'ask'],
  ['git help log', 'ask'],
  // Sub-command options that write, run or read elsewhere.
  ['git log --output=/tmp/keel-x', 'ask'],
  ['git log --out=x', 'ask'],
  ['git diff --ext-diff', 'ask'],
  ['git diff --output=x', 'ask'],
  ['git diff --no-index /etc/passwd src/a.ts', 'ask'],
  ['git diff /etc/passwd src/a.ts', 'ask'],
  ['git log -- /etc/passwd', 'ask'],
  ['git show HEAD -- ../outside', 'ask'],
  ['git log --show-signature', 'ask'],
  ['git log -O/etc/passwd -p', 'ask'],
  ['git blame --contents /etc/passwd src/a.ts', 'ask'],
  ['git blame --ignore-revs-file=/etc/passwd src/a.ts', 'ask'],
  ['git ls-files -X /etc/passwd -o', 'ask'],
  ['git status --bogus', 'ask'],
  ['git log $X', 'ask'],
  ['git constructor', 'ask'],
  ['git __proto__', 'ask'],
];

/** The typical config of a clone, VS Code's branch keys, husky's hooks folder: no friction. */
function friendlyRepo(fx: PermissionFixture): void {
  initRepo(fx);
  setConfig(fx, 'branch.main.remote', 'origin');
  setConfig(fx, 'branch.main.merge', 'refs/heads/main');
  setConfig(fx, 'branch.main.vscode-merge-base', 'origin/main');
  setConfig(fx, 'remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*');
  setConfig(fx, 'user.name', 'Someone');
  setConfig(fx, 'pull.rebase', 'true');
  setConfig(fx, 'core.hooksPath', '.husky/_');
  mkdirSync(join(fx.ws, '.husky', '_'), { recursive: true });
  writeFileSync(join(fx.ws, '.husky', '_', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
}

/** A repository whose own settings make read-only git commands run `touch PWNED`. */
function hostile(name: string, arrange: (fx: PermissionFixture) => void, cases: Row[], proofs: BashCase[]): CorpusGroup {
  return {
    name: `git, hostile repository: ${name}`,
    settings: { permissions: {} },
    prepare: (fx) => {
      initRepo(fx);
      arrange(fx);
    },
    bash: [...rows('git-repository', cases), ...proofs],
  };
}
const proof = (command: string, setup?: string): BashCase => ({ group: 'git-repository', command, expect: 'ask', realBash: setup ? { setup, proves: PWNED.proves } : PWNED });
const hook = (dir: string, name: string): void => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), '#!/bin/sh\ntouch "$(git rev-parse --show-toplevel)/PWNED"\n');
  chmodSync(join(dir, name), 0o755);
};

export const GIT_GROUPS: CorpusGroup[] = [
  {
    name: 'git read-only forms with no Bash rule',
    settings: { permissions: {} },
    prepare: initRepo,
    bash: [
      ...rows('git-forms', FORMS),
      { group: 'git-forms', command: 'git branch -qD victim', expect: 'ask', realBash: { proves: '! git rev-parse -q --verify victim' } },
      { group: 'git-forms', command: 'git log --oneline -5 && git status -s', expect: 'allow', realBash: { proves: 'grep -q init "$OUT" && git rev-parse -q --verify victim' } },
    ],
  },
  {
    name: 'git, a friendly repository (clone config, VS Code keys, husky hooks)',
    settings: { permissions: {} },
    prepare: friendlyRepo,
    bash: rows('git-repository', [
      ['git status', 'allow'],
      ['git log --oneline -5', 'allow'],
      ['git diff HEAD~1', 'allow'],
      ['git branch -vv', 'allow'],
    ]),
  },
  hostile('core.editor', (fx) => setConfig(fx, 'core.editor', 'touch PWNED; true'), [['git branch --edit-desc', 'ask'], ['git branch --edit-desc', 'deny', 'dontAsk'], ['git status', 'ask']], [proof('git branch --edit-desc')]),
  hostile('core.fsmonitor', (fx) => setConfig(fx, 'core.fsmonitor', 'touch PWNED; false'), [['git status', 'ask'], ['git status', 'deny', 'dontAsk'], ['git log', 'ask']], [proof('git status')]),
  hostile(
    'diff textconv driver',
    (fx) => {
      setConfig(fx, 'diff.t.textconv', 'sh -c \'touch PWNED; cat "$0"\'');
      writeFileSync(join(fx.ws, '.gitattributes'), '*.ts diff=t\n');
    },
    [['git diff', 'ask'], ['git log -p', 'ask'], ['git show HEAD', 'ask']],
    [proof('git diff', 'export TMPDIR=$PWD; echo changed >> src/a.ts')],
  ),
  hostile(
    'clean filter',
    (fx) => {
      setConfig(fx, 'filter.f.clean', "sh -c 'touch PWNED; cat'");
      writeFileSync(join(fx.ws, '.gitattributes'), '*.ts filter=f\n');
    },
    [['git status', 'ask'], ['git diff', 'ask']],
    [proof('git diff', 'echo changed >> src/a.ts')],
  ),
  hostile('post-index-change hook', (fx) => hook(join(fx.ws, '.git', 'hooks'), 'post-index-change'), [['git status', 'ask'], ['git diff', 'ask'], ['git log', 'ask']], [proof('git status', 'touch src/a.ts')]),
  hostile(
    'core.hooksPath with a post-index-change hook',
    (fx) => {
      setConfig(fx, 'core.hooksPath', 'tools/hooks');
      hook(join(fx.ws, 'tools', 'hooks'), 'post-index-change');
    },
    [['git status', 'ask']],
    [proof('git status', 'touch src/a.ts')],
  ),
  hostile('core.pager', (fx) => setConfig(fx, 'core.pager', 'touch PWNED; cat'), [['git log', 'ask'], ['git --no-pager log', 'ask']], []),
  hostile('log.showSignature', (fx) => setConfig(fx, 'log.showSignature', 'true'), [['git log', 'ask']], []),
  hostile(
    'include.path',
    (fx) => {
      writeFileSync(join(fx.ws, 'evil.cfg'), '[core]\n\tfsmonitor = touch PWNED; false\n');
      setConfig(fx, 'include.path', '../evil.cfg');
    },
    [['git status', 'ask'], ['git log', 'ask']],
    [proof('git status')],
  ),
  hostile('unreadable config', (fx) => writeFileSync(join(fx.ws, '.git', 'config'), '[core\n\tbare = false\n'), [['git status', 'ask']], []),
  hostile(
    'objects borrowed from elsewhere',
    (fx) => {
      mkdirSync(join(fx.ws, '.git', 'objects', 'info'), { recursive: true });
      writeFileSync(join(fx.ws, '.git', 'objects', 'info', 'alternates'), `${fx.outside}/objects\n`);
    },
    [['git log', 'ask']],
    [],
  ),
  hostile(
    '.git file pointing outside the workspace',
    (fx) => {
      const other = join(fx.outside, 'other');
      mkdirSync(other);
      git(other, fx.home, 'init', '-q');
      git(other, fx.home, 'commit', '-q', '--allow-empty', '-m', 'SECRET from outside');
      rmSync(join(fx.ws, '.git'), { recursive: true, force: true });
      writeFileSync(join(fx.ws, '.git'), `gitdir: ${join(other, '.git')}\n`);
    },
    [['git log -1', 'ask'], ['git status', 'ask']],
    [{ group: 'git-repository', command: 'git log -1 --format=%s', expect: 'ask', realBash: { proves: 'grep -q SECRET "$OUT"' } }],
  ),
  hostile(
    'submodule with core.fsmonitor',
    (fx) => {
      const sub = join(fx.ws, 'vendor', 'lib');
      mkdirSync(sub, { recursive: true });
      writeFileSync(join(sub, 'x.txt'), 'x\n');
      git(sub, fx.home, 'init', '-q');
      git(sub, fx.home, 'add', 'x.txt');
      git(sub, fx.home, 'commit', '-q', '-m', 'sub');
      git(fx.ws, fx.home, 'add', 'vendor/lib');
      git(fx.ws, fx.home, 'commit', '-q', '-m', 'add sub');
      git(sub, fx.home, 'config', 'core.fsmonitor', 'touch ../../PWNED; false');
    },
    [['git status', 'ask'], ['git log', 'ask']],
    [proof('git status')],
  ),
  hostile(
    'a bare repository planted in the tree',
    (fx) => {
      const bare = join(fx.ws, 'src', 'evil');
      git(fx.ws, fx.home, 'init', '-q', '--bare', bare);
      git(bare, fx.home, 'config', 'core.pager', 'touch PWNED; cat');
    },
    [['cd src/evil && git log', 'ask'], ['git log', 'allow']],
    [],
  ),
];
