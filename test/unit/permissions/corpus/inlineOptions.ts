import type { BashCase, CorpusGroup, Decision } from './types';

/**
 * Issue 9, options that run a program, under rules that allow the program but not the option:
 * `Bash(sort:*)` must not allow `sort --compress-prog=sh` (an abbreviation), nor `Bash(ssh:*)`
 * `ssh -vo ProxyCommand=…` (a cluster), nor `Bash(tar:*)` `tar xIf sh a.tar` (old-style). A rule
 * that names the option allows it; git's `-c` is read only among git's own options.
 */
type Row = [command: string, expect: Decision];
const rows = (list: Row[]): BashCase[] => list.map(([command, expect]) => ({ group: 'inline-options', command, expect }));

const CASES: Row[] = [
  ['sort --compress-prog=sh src/a.ts', 'ask'],
  ['sort -S 1k --compress-program sh src/a.ts', 'ask'],
  ['sort --compress-program=gzip src/a.ts', 'allow'],
  ['sort --compress-prog=gzip src/a.ts', 'ask'],
  ['sort -u src/a.ts', 'allow'],
  ["tar -xf a.tar --to-com='sh -c id'", 'ask'],
  ['tar --use-comp=sh -xf a.tar', 'ask'],
  ['tar -xIsh -f a.tar', 'ask'],
  ['tar xIf sh a.tar', 'ask'],
  // Extracting writes names only the archive knows (.keel/settings.json, KEEL.md could be among
  // them): it asks in every mode inside the workspace (issue 22); listing or extracting to
  // standard output writes nothing.
  ['tar -xzf a.tar', 'ask'],
  ['tar -xzOf a.tar', 'allow'],
  ['tar -tf a.tar', 'allow'],
  ['man --pag=sh ls', 'ask'],
  ['man -Hsh ls', 'ask'],
  ['man ls', 'allow'],
  ['ssh -vo ProxyCommand=x host', 'ask'],
  ['ssh -F cfg host', 'ask'],
  ['ssh -v host', 'allow'],
  ['rg --pre=sh x src', 'ask'],
  ["rg --pre-glob '*' x src", 'ask'],
  ['rg x src', 'allow'],
  ["rsync -avze 'sh -c x' a b", 'ask'],
  ['rsync -av a b', 'allow'],
  ['git log -c', 'allow'],
  ["git -c core.pager='sh -c id' log", 'ask'],
  ['git --exec-path=/tmp log', 'ask'],
  ["git ls-remote --upload-p='touch x' origin", 'ask'],
  ['git fetch --upload-pack=x origin', 'ask'],
  ['git fetch origin', 'allow'],
];

export const INLINE_GROUPS: CorpusGroup[] = [
  {
    name: 'options that run a program, under rules for the program',
    settings: {
      permissions: {
        allow: ['Bash(sort:*)', 'Bash(sort --compress-program=gzip:*)', 'Bash(tar:*)', 'Bash(man:*)', 'Bash(ssh:*)', 'Bash(rg:*)', 'Bash(rsync:*)', 'Bash(git log:*)', 'Bash(git ls-remote:*)', 'Bash(git fetch:*)'],
      },
    },
    bash: rows(CASES),
  },
];
