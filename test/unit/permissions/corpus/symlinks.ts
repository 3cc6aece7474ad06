import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';
import type { BashCase, CorpusGroup, Decision, RealBashCheck, ToolCase } from './types';

/**
 * Symlink tricks (issue 9): dangling, chained, in the middle of a path, relative and absolute,
 * pointing into protected folders or out of the workspace — for Read, Write, Edit, Glob, Grep and
 * for Bash redirections and operands. Settings allow only `Edit(src/**)` (the confirmed
 * escalation: Write to `src/keellink -> ../.keel/settings.local.json` was allowed).
 *
 * Links made in `src/` (see `prepare`): keellink -> ../.keel/settings.local.json (dangling),
 * keeldir -> ../.keel, gitlink -> ../.git, githook -> ../.git/hooks/pre-commit (dangling),
 * vscodelink -> ../.vscode/settings.json, claudelink -> ../.claude/settings.json (dangling, no
 * folder), outlink -> ../../outside/new.txt (dangling), outdir -> ../../outside, abslink ->
 * <root>/outside/abs.txt (absolute, dangling), chain1 -> chain2 -> chain3 ->
 * ../.keel/settings.json, loop1 <-> loop2, inner -> sub, rellink -> ./a.ts, selfup -> ..,
 * envlink -> ../.env, secretlink -> ../secrets/key.pem, homelink -> <home>/.keel/settings.json.
 */
function prepare(fx: PermissionFixture): void {
  const src = join(fx.ws, 'src');
  mkdirSync(join(src, 'sub'), { recursive: true });
  mkdirSync(join(fx.ws, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(fx.ws, '.keel', 'notes.md'), 'notes\n');
  const links: [string, string][] = [
    ['keellink', '../.keel/settings.local.json'],
    ['keeldir', '../.keel'],
    ['gitlink', '../.git'],
    ['githook', '../.git/hooks/pre-commit'],
    ['vscodelink', '../.vscode/settings.json'],
    ['claudelink', '../.claude/settings.json'],
    ['outlink', '../../outside/new.txt'],
    ['outdir', '../../outside'],
    ['abslink', join(fx.outside, 'abs.txt')],
    ['chain1', 'chain2'],
    ['chain2', 'chain3'],
    ['chain3', '../.keel/settings.json'],
    ['loop1', 'loop2'],
    ['loop2', 'loop1'],
    ['inner', 'sub'],
    ['rellink', './a.ts'],
    ['selfup', '..'],
    ['envlink', '../.env'],
    ['secretlink', '../secrets/key.pem'],
    ['homelink', join(fx.home, '.keel', 'settings.json')],
  ];
  for (const [name, target] of links) symlinkSync(target, join(src, name));
}

const SETTINGS = { permissions: { allow: ['Edit(src/**)'], deny: ['Read(./secrets/**)', 'Edit(./.env)'] } };

type FileRow = [string, Record<string, unknown>, Decision, PermissionMode?];
const write = (file_path: string): Record<string, unknown> => ({ file_path, content: '{"permissions":{"allow":["Bash"]}}' });
const edit = (file_path: string): Record<string, unknown> => ({ file_path, old_string: '', new_string: 'x' });

const TOOLS: FileRow[] = [
  // the confirmed escalation and its relatives: never allowed, even in acceptEdits or bypassPermissions
  ['Write', write('src/keellink'), 'ask'],
  ['Write', write('src/keellink'), 'ask', 'acceptEdits'],
  ['Write', write('src/keellink'), 'ask', 'bypassPermissions'],
  ['Write', write('src/keellink'), 'deny', 'dontAsk'],
  ['Edit', edit('src/keellink'), 'ask'],
  ['Edit', edit('src/keellink'), 'ask', 'acceptEdits'],
  ['Write', write('src/keeldir/settings.local.json'), 'ask'],
  ['Write', write('src/keeldir/anything.md'), 'ask', 'acceptEdits'],
  ['Write', write('src/chain1'), 'ask', 'acceptEdits'],
  ['Write', write('src/gitlink/config'), 'ask', 'acceptEdits'],
  ['Write', write('src/githook'), 'ask', 'acceptEdits'],
  ['Write', write('src/vscodelink'), 'ask', 'acceptEdits'],
  ['Write', write('src/claudelink'), 'ask', 'acceptEdits'],
  ['Write', write('src/homelink'), 'ask', 'bypassPermissions'],
  ['Write', write('src/outlink'), 'ask'],
  ['Write', write('src/outlink'), 'ask', 'acceptEdits'],
  ['Write', write('src/outdir/x.txt'), 'ask', 'acceptEdits'],
  ['Write', write('src/abslink'), 'ask', 'acceptEdits'],
  ['Write', write('src/loop1'), 'ask', 'acceptEdits'],
  ['Write', write('src/selfup/package.json'), 'ask'],
  ['Write', write('src/selfup/.keel/settings.json'), 'ask', 'bypassPermissions'],
  ['Write', write('src/envlink'), 'deny'],
  ['Edit', edit('src/envlink'), 'deny', 'acceptEdits'],
  ['Edit', edit('src/outdir/secret.txt'), 'ask', 'acceptEdits'],
  // protected folders as a whole, written directly
  ['Write', write('.keel/notes.md'), 'ask', 'acceptEdits'],
  ['Write', write('.keel/settings.local.json'), 'ask', 'bypassPermissions'],
  ['Write', write('.claude/commands/x.md'), 'ask', 'acceptEdits'],
  ['Write', write('.vscode/tasks.json'), 'ask', 'acceptEdits'],
  ['Write', write('.git/hooks/pre-commit'), 'ask', 'bypassPermissions'],
  ['Write', write('src/.keel/settings.json'), 'ask', 'acceptEdits'],
  ['Edit', edit('.keel/notes.md'), 'ask', 'bypassPermissions'],
  // links that stay inside src are as good as the file
  ['Write', write('src/inner/new.ts'), 'allow'],
  ['Write', write('src/rellink'), 'allow'],
  ['Edit', { file_path: 'src/rellink', old_string: '1', new_string: '2' }, 'allow'],
  ['Write', write('src/sub/../new.ts'), 'allow'],
  // reads
  ['Read', { file_path: 'src/secretlink' }, 'deny'],
  ['Read', { file_path: 'src/outdir/secret.txt' }, 'ask'],
  ['Read', { file_path: 'src/abslink' }, 'ask'],
  ['Read', { file_path: 'src/loop1' }, 'ask'],
  ['Read', { file_path: 'src/selfup/secrets/key.pem' }, 'deny'],
  ['Read', { file_path: 'src/keeldir/notes.md' }, 'allow'],
  ['Read', { file_path: 'src/chain1' }, 'allow'],
  ['Read', { file_path: 'src/selfup/src/a.ts' }, 'allow'],
  ['Glob', { pattern: '**/*', path: 'src/outdir' }, 'ask'],
  ['Glob', { pattern: '*.ts', path: 'src/inner' }, 'allow'],
  ['Glob', { pattern: '*', path: 'src/selfup/secrets' }, 'deny'],
  ['Grep', { pattern: 'x', path: 'src/outdir' }, 'ask'],
  ['Grep', { pattern: 'x', path: 'src/secretlink' }, 'deny'],
  ['Grep', { pattern: 'x', path: 'src/gitlink' }, 'allow'],
];

const LANDS_IN_KEEL: RealBashCheck = { proves: 'grep -q Bash .keel/settings.local.json' };

type BashRow = [string, Decision, PermissionMode?, RealBashCheck?];
const BASH: BashRow[] = [
  ['echo \'{"permissions":{"allow":["Bash"]}}\' > src/keellink', 'ask', 'acceptEdits', LANDS_IN_KEEL],
  ['echo \'{"permissions":{"allow":["Bash"]}}\' > src/keellink', 'ask', 'bypassPermissions'],
  ['echo x >> src/githook', 'ask', 'acceptEdits', { proves: 'test -f .git/hooks/pre-commit' }],
  ['echo x > src/keeldir/settings.local.json', 'ask', 'acceptEdits'],
  ['echo x > src/chain1', 'ask', 'acceptEdits'],
  ['echo x > src/vscodelink', 'ask', 'acceptEdits'],
  ['echo x > src/outlink', 'ask', 'acceptEdits', { proves: 'test -f ../outside/new.txt' }],
  ['echo x > src/abslink', 'ask', 'acceptEdits'],
  ['echo x > src/outdir/x.txt', 'ask', 'acceptEdits'],
  ['echo x > src/loop1', 'ask', 'acceptEdits'],
  ['echo x > src/envlink', 'deny', 'acceptEdits'],
  ['echo x > src/homelink', 'ask', 'bypassPermissions'],
  ['cat src/secretlink', 'deny'],
  ['cat src/outdir/secret.txt', 'ask', undefined, { proves: 'grep -q outside "$OUT"' }],
  ['cat < src/outdir/secret.txt', 'ask', undefined, { proves: 'grep -q outside "$OUT"' }],
  ['cat src/abslink', 'ask'],
  ['cat src/selfup/../outside/secret.txt', 'ask', undefined, { proves: 'grep -q outside "$OUT"' }],
  ['ls src/loop1', 'ask'],
  ['head src/selfup/secrets/key.pem', 'deny'],
  ['wc -c src/*link', 'deny', undefined, undefined],
  // writes through links that stay inside are writes inside
  ['echo x > src/inner/new.ts', 'allow', 'acceptEdits', { proves: 'test -f src/sub/new.ts' }],
  ['echo x > src/outdir/../ws/src/new.txt', 'allow', 'acceptEdits', { proves: 'test -f src/new.txt' }],
  ['cat src/outdir/../ws/package.json', 'allow', undefined, { proves: 'grep -q "{}" "$OUT"' }],
  ['cat src/chain1', 'allow'],
  ['cat src/keeldir/notes.md', 'allow'],
  ['ls src/inner', 'allow'],
  ['cat src/rellink', 'allow'],
];

export const SYMLINKS_GROUP: CorpusGroup = {
  name: 'symlinks',
  settings: SETTINGS,
  prepare,
  tools: TOOLS.map(([tool, input, expect, mode]): ToolCase => ({ group: `symlink-${tool.toLowerCase()}`, tool, input, expect, ...(mode ? { mode } : {}) })),
  bash: BASH.map(([command, expect, mode, realBash]): BashCase => ({ group: 'symlink-bash', command, expect, ...(mode ? { mode } : {}), ...(realBash ? { realBash } : {}) })),
};
