import type { PermissionMode } from '../../../../src/core/runtime/types';
import { initRepo } from './repo';
import type { BashCase, CorpusGroup, Decision, RealBashCheck, ToolCase } from './types';

/**
 * Issue 22, root cause 3: a reader whose root holds a Read-denied path. With only
 * `Read(./secrets/**)` denied (secrets/key.pem holds KEY and was committed), in default and plan
 * mode: the Grep and Glob tools pass the rule to ripgrep as an exclusion (the decision relies on
 * it; test/unit/tools/searchExclusions.test.ts checks the content never comes back); a command
 * cannot be told to skip it, so one that reads everything below such a folder asks (`grep -r`,
 * `rg`, `diff -r`, a git command that prints file content without a pathspec, find's files handed
 * to a command) and one that names the denied path is denied (`REV:path` and pathspecs are
 * paths). Reading below a folder that holds no denied path stays allowed.
 */
type Row = [command: string, expect: Decision, check?: RealBashCheck, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] =>
  list.map(([command, expect, realBash, mode]) => ({ group, command, expect, ...(realBash ? { realBash } : {}), ...(mode ? { mode } : {}) }));

const PRINTS_KEY: RealBashCheck = { proves: 'grep -q KEY "$OUT"' };

const COMMANDS: Row[] = [
  ['grep -r KEY .', 'ask', PRINTS_KEY],
  ['grep -r KEY .', 'ask', undefined, 'plan'],
  ['grep -r KEY .', 'ask', undefined, 'bypassPermissions'],
  ['grep -rl KEY', 'ask'],
  ['grep -r . secrets', 'deny', PRINTS_KEY],
  ['grep -r KEY src', 'allow'],
  ['grep KEY src/a.ts', 'allow'],
  ['rg -uu KEY', 'ask', PRINTS_KEY],
  ['rg KEY', 'ask'],
  ['rg KEY src', 'allow'],
  ['rg --files', 'allow'],
  ['diff -r src secrets', 'deny'],
  ['diff -r --no-dereference src secrets', 'deny'],
  ['diff -r --no-dereference src src', 'allow'],
  ['diff src/a.ts package.json', 'allow'],
  // git: REV:path and pathspecs are paths; content without a pathspec is the whole tree.
  ['git show HEAD~1:secrets/key.pem', 'deny', PRINTS_KEY],
  ['git show HEAD:./secrets/key.pem', 'deny'],
  ['git cat-file -p HEAD:secrets/key.pem', 'deny'],
  ['git log -p -- secrets', 'deny', PRINTS_KEY],
  ['git log -p --follow -- secrets/key.pem', 'deny'],
  ['git diff HEAD~1 -- secrets', 'deny'],
  ['git show HEAD~1', 'ask', PRINTS_KEY],
  ['git log -p', 'ask'],
  ['git log -p', 'ask', undefined, 'plan'],
  ['git diff HEAD~1', 'ask'],
  ['git blame secrets/key.pem', 'deny'],
  ['git show HEAD:src/a.ts', 'allow'],
  ['git show --stat HEAD', 'allow'],
  ['git show --name-only HEAD~1', 'allow'],
  ['git log --stat', 'allow'],
  ['git log --oneline -- secrets', 'allow'],
  ['git log -p -- src', 'allow'],
  ['git diff --stat HEAD~1', 'allow'],
  ['git diff HEAD~1 -- src/a.ts', 'allow'],
  ['git blame src/a.ts', 'allow'],
  ['git cat-file -t HEAD', 'allow'],
  ['git status', 'allow'],
  // find's files are handed to the command: everything below its starting points.
  ['find . -type f -exec cat {} +', 'deny', PRINTS_KEY],
  ['find secrets -exec cat {} \\;', 'deny'],
  ["find . -name '*.pem' | xargs cat", 'deny'],
  ['find src -type f -exec cat {} +', 'allow'],
  ['find src -name x | xargs grep -l TODO', 'allow'],
  ['find . -name x', 'allow'],
];

const TOOLS: ToolCase[] = [
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY' }, expect: 'allow' },
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY', path: '.' }, expect: 'allow', mode: 'plan' },
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY', path: 'secrets' }, expect: 'deny' },
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY', path: 'secrets/key.pem' }, expect: 'deny' },
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY', path: 'src' }, expect: 'allow' },
  { group: 'search-tools', tool: 'Glob', input: { pattern: '**/*' }, expect: 'allow' },
  { group: 'search-tools', tool: 'Glob', input: { pattern: '*', path: 'secrets' }, expect: 'deny' },
  { group: 'search-tools', tool: 'Read', input: { file_path: 'secrets/key.pem' }, expect: 'deny' },
];

/** A Read rule whose pattern ripgrep cannot be given exactly (`**` inside a name): the search asks. */
const UNEXPRESSIBLE: ToolCase[] = [
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY' }, expect: 'ask' },
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY', path: 'src' }, expect: 'allow' },
  { group: 'search-tools', tool: 'Grep', input: { pattern: 'KEY', path: 'package.json' }, expect: 'allow' },
  { group: 'search-tools', tool: 'Glob', input: { pattern: '*' }, expect: 'ask' },
];

export const RECURSIVE_READ_GROUPS: CorpusGroup[] = [
  { name: 'recursive reads of a folder holding a denied path', settings: { permissions: { deny: ['Read(./secrets/**)'] } }, prepare: initRepo, bash: rows('recursive-reads', COMMANDS), tools: TOOLS },
  { name: 'a search the Read rules cannot be passed to ripgrep for', settings: { permissions: { deny: ['Read(./se**ts/**)'] } }, tools: UNEXPRESSIBLE },
];
