import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseGitConfig, unsafeSetting, type ConfigEntry } from '../../../src/core/permissions/readOnly/gitConfig';
import { gitlinksOf, gitRepositoryRisk } from '../../../src/core/permissions/readOnly/gitRepo';

/**
 * The repository inspection behind git's read-only forms: git's config syntax, the allowlist of
 * settings, and the index reader that finds submodules. Indexes are written by real git.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempRepo(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'keel-gitrepo-')));
  dirs.push(d);
  git(d, 'init', '-q');
  return d;
}
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' } });
}
const entry = (section: string, key: string, value?: string, subsection?: string): ConfigEntry => ({ section, key, ...(value !== undefined ? { value } : {}), ...(subsection !== undefined ? { subsection } : {}) });

describe('parseGitConfig', () => {
  it('reads sections, quoted and legacy subsections, bare keys, comments and continued lines', () => {
    const text = [
      '# a comment',
      '[core]',
      '\tbare = false ; trailing comment',
      '\tFileMode',
      '[remote "ori\\"gin"]',
      '\turl = "https://x/#not-a-comment"',
      '[branch.Main]',
      '\tmerge = refs/heads/a \\',
      'b',
      '[alias] st = status',
    ].join('\n');
    expect(parseGitConfig(text)).toEqual([
      entry('core', 'bare', 'false'),
      entry('core', 'filemode'),
      entry('remote', 'url', 'https://x/#not-a-comment', 'ori"gin'),
      entry('branch', 'merge', 'refs/heads/a b', 'main'),
      entry('alias', 'st', 'status'),
    ]);
  });
  it('refuses what git would refuse: no section, a broken header, a bad escape, an open quote', () => {
    expect(parseGitConfig('bare = true')).toBeNull();
    expect(parseGitConfig('[core\n\tbare = true')).toBeNull();
    expect(parseGitConfig('[core]\n\tpager = a\\qb')).toBeNull();
    expect(parseGitConfig('[core]\n\tpager = "less')).toBeNull();
    expect(parseGitConfig('[core]\n\t= x')).toBeNull();
  });
});

describe('unsafeSetting', () => {
  it('lets through what a clone, VS Code and husky write', () => {
    for (const e of [
      entry('core', 'repositoryformatversion', '0'),
      entry('core', 'hookspath', '.husky/_'),
      entry('core', 'fsmonitor', 'false'),
      entry('remote', 'url', 'https://x', 'origin'),
      entry('remote', 'fetch', '+refs/heads/*:refs/remotes/origin/*', 'origin'),
      entry('branch', 'vscode-merge-base', 'origin/main', 'main'),
      entry('diff', 'xfuncname', '^def', 'py'),
      entry('log', 'showsignature', 'false'),
      entry('submodule', 'update', 'checkout', 'lib'),
      entry('user', 'email', 'a@b'),
    ]) {
      expect(unsafeSetting(e), `${e.section}.${e.key}`).toBeNull();
    }
  });
  it('stops everything that can run a program, read elsewhere or reach the network', () => {
    for (const e of [
      entry('core', 'pager', 'less'),
      entry('core', 'editor', 'vim'),
      entry('core', 'fsmonitor', 'true'),
      entry('core', 'fsmonitor'),
      entry('core', 'sshcommand', 'ssh'),
      entry('core', 'worktree', '/elsewhere'),
      entry('diff', 'external', 'x'),
      entry('diff', 'textconv', 'x', 'bin'),
      entry('diff', 'command', 'x', 'bin'),
      entry('filter', 'clean', 'x', 'lfs'),
      entry('include', 'path', '../x'),
      entry('includeif', 'path', 'x', 'gitdir:/x/'),
      entry('pager', 'log', 'x'),
      entry('log', 'showsignature', 'true'),
      entry('gpg', 'program', 'x'),
      entry('submodule', 'update', '!sh -c x', 'lib'),
      entry('remote', 'uploadpack', 'x', 'origin'),
      entry('remote', 'promisor', 'true', 'origin'),
      entry('extensions', 'partialclone', 'origin'),
      entry('credential', 'helper', 'x'),
      entry('protocol', 'allow', 'always', 'ext'),
      entry('something', 'unknown', 'x'),
    ]) {
      expect(unsafeSetting(e), `${e.section}.${e.subsection ?? ''}.${e.key}`).not.toBeNull();
    }
  });
});

describe('gitlinksOf', () => {
  const sha = '1234567890123456789012345678901234567890';
  it('finds submodules in index versions 2, 3 and 4', () => {
    const d = tempRepo();
    writeFileSync(join(d, 'a.txt'), 'a');
    git(d, 'add', 'a.txt');
    git(d, 'update-index', '--add', '--cacheinfo', `160000,${sha},vendor/lib`);
    git(d, 'update-index', '--add', '--cacheinfo', `160000,${sha},vendor/other`);
    for (const v of ['2', '3', '4']) {
      git(d, 'update-index', '--index-version', v);
      expect(gitlinksOf(readFileSync(join(d, '.git', 'index')), 20), `index v${v}`).toEqual(['vendor/lib', 'vendor/other']);
    }
  });
  it('refuses what it cannot read: not an index, a truncated one, a split index', () => {
    expect(gitlinksOf(Buffer.from('not an index at all'), 20)).toBeNull();
    const d = tempRepo();
    writeFileSync(join(d, 'a.txt'), 'a');
    git(d, 'add', 'a.txt');
    const index = readFileSync(join(d, '.git', 'index'));
    expect(gitlinksOf(index.subarray(0, 40), 20)).toBeNull();
    git(d, 'update-index', '--split-index');
    expect(gitlinksOf(readFileSync(join(d, '.git', 'index')), 20)).toBeNull();
  });
});

describe('gitRepositoryRisk', () => {
  const inside = (root: string) => ({ inside: (p: string) => p === root || p.startsWith(`${root}/`), home: root });
  it('finds nothing to fear in a fresh repository, from its root or a folder below', () => {
    const d = tempRepo();
    expect(gitRepositoryRisk(d, inside(d))).toBeNull();
    expect(gitRepositoryRisk(join(d, 'sub', 'dir'), inside(d))).toBeNull();
  });
  it('names the setting, the hook or the place that makes git unsafe', () => {
    const d = tempRepo();
    git(d, 'config', 'core.pager', 'sh');
    expect(gitRepositoryRisk(d, inside(d))).toMatch(/core\.pager/);
    git(d, 'config', '--unset', 'core.pager');
    writeFileSync(join(d, '.git', 'hooks', 'post-index-change'), '#!/bin/sh\n');
    expect(gitRepositoryRisk(d, inside(d))).toMatch(/post-index-change/);
    rmSync(join(d, '.git', 'hooks', 'post-index-change'));
    expect(gitRepositoryRisk(d, inside(d))).toBeNull();
    expect(gitRepositoryRisk(d, inside(join(d, 'elsewhere')))).toMatch(/outside the workspace/);
  });
});
