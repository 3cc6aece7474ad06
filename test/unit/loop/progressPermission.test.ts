import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPermissionEngine } from '../../../src/core/permissions';
import type { EngineDecision } from '../../../src/core/permissions/engine';
import { allowingLoopProgress, allowingModeAsk } from '../../../src/core/runtime/loopPermission';
import type { PermissionDecider } from '../../../src/core/runtime/permissionCheck';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { parseToolInput } from '../../../src/core/tools/execute';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/**
 * The loop's progress-file exception with the real permission engine over real files: it allows
 * exactly the literal progress file when nothing on the way is a link, and never turns any other
 * question (a link, a rule, settings that cannot be read, a protected file) into an allow.
 */
let root: string;
let ws: string;
let home: string;
const progress = () => join(ws, '.keel', 'loop', 'fix', 'progress.md');

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-loop-perm-')));
  ws = join(root, 'ws');
  home = join(root, 'home');
  mkdirSync(join(ws, '.keel', 'loop', 'fix'), { recursive: true });
  mkdirSync(home);
  writeFileSync(progress(), '# Progress\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function deciderFor(settings?: string): Promise<PermissionDecider> {
  if (settings !== undefined) writeFileSync(join(ws, '.keel', 'settings.json'), settings);
  return createPermissionEngine({ workspace: ws, home, trust: NOTHING_APPROVED });
}

async function decide(d: PermissionDecider, tool: 'Write' | 'Edit', file: string, mode: PermissionMode = 'default'): Promise<EngineDecision> {
  const input = tool === 'Write' ? { file_path: file, content: '{"permissions":{"allow":["Bash"]}}' } : { file_path: file, old_string: '# Progress', new_string: '# Progress!' };
  const parsed = parseToolInput(createToolRegistry(), tool, input);
  if (!parsed.ok) throw new Error(parsed.result.content);
  return d.decide({ tool, input, subject: parsed.tool.subject(parsed.input as never, { workspace: ws }), readOnly: false }, mode);
}

describe("the loop's progress-file exception", () => {
  it('allows a Write or Edit of the literal progress file in every mode but plan', async () => {
    const d = allowingLoopProgress(await deciderFor(), progress(), ws);
    for (const mode of ['default', 'acceptEdits', 'dontAsk', 'bypassPermissions'] as const) {
      expect((await decide(d, 'Write', '.keel/loop/fix/progress.md', mode)).decision, mode).toBe('allow');
      expect((await decide(d, 'Edit', progress(), mode)).decision, mode).toBe('allow');
    }
    expect((await decide(d, 'Write', progress(), 'plan')).decision).not.toBe('allow');
  });

  it('a progress file that is a link to the settings is not the progress file: the write asks, and so does the settings file', async () => {
    rmSync(progress());
    symlinkSync('../../settings.local.json', progress());
    const d = allowingLoopProgress(await deciderFor(), progress(), ws);
    expect(await decide(d, 'Write', progress())).toMatchObject({ decision: 'ask' });
    expect(await decide(d, 'Write', join(ws, '.keel', 'settings.local.json'))).toMatchObject({ decision: 'ask' });
    expect((await decide(d, 'Write', progress(), 'bypassPermissions')).decision).toBe('ask');
    expect((await decide(d, 'Write', progress(), 'dontAsk')).decision).toBe('deny');
  });

  it('a link anywhere in the folder chain inside the workspace takes the exception away', async () => {
    rmSync(join(ws, '.keel', 'loop'), { recursive: true });
    mkdirSync(join(ws, 'elsewhere', 'fix'), { recursive: true });
    symlinkSync('../elsewhere', join(ws, '.keel', 'loop'));
    const d = allowingLoopProgress(await deciderFor(), progress(), ws);
    expect((await decide(d, 'Write', progress(), 'acceptEdits')).decision).not.toBe('allow');
  });

  it('a hard link of the progress file to another file takes the exception away', async () => {
    writeFileSync(join(ws, '.keel', 'settings.local.json'), '{}');
    rmSync(progress());
    linkSync(join(ws, '.keel', 'settings.local.json'), progress());
    const d = allowingLoopProgress(await deciderFor(), progress(), ws);
    expect((await decide(d, 'Write', progress())).decision).toBe('ask');
  });

  it('matches the path as written: another spelling that leads elsewhere, or another file, is not it', async () => {
    const d = allowingLoopProgress(await deciderFor(), progress(), ws);
    expect((await decide(d, 'Write', '.keel/loop/fix/../../settings.local.json')).decision).toBe('ask');
    expect((await decide(d, 'Write', '.keel/loop/fix/anchor.md')).decision).toBe('ask');
    expect((await decide(d, 'Write', '.keel/loop/other/progress.md')).decision).toBe('ask');
  });

  it('a progress file named outside a loop folder never gets the exception', async () => {
    const d = allowingLoopProgress(await deciderFor(), join(ws, '.keel', 'settings.local.json'), ws);
    expect((await decide(d, 'Write', '.keel/settings.local.json')).decision).toBe('ask');
  });

  it('rules still decide: a deny rule denies, an ask rule asks', async () => {
    const denied = allowingLoopProgress(await deciderFor(JSON.stringify({ permissions: { deny: ['Write(.keel/loop/**)'] } })), progress(), ws);
    expect((await decide(denied, 'Write', progress())).decision).toBe('deny');
    const asked = allowingLoopProgress(await deciderFor(JSON.stringify({ permissions: { ask: ['Write(.keel/loop/**)'] } })), progress(), ws);
    expect((await decide(asked, 'Write', progress(), 'acceptEdits')).decision).toBe('ask');
  });

  it('settings that cannot be read keep their question (a safety ask is never turned into an allow)', async () => {
    const d = allowingLoopProgress(await deciderFor('{ this is not json'), progress(), ws);
    const r = await decide(d, 'Write', progress());
    expect(r.decision).toBe('ask');
    expect(r.reason).toContain('could not be read');
  });
});

describe("a PreToolUse hook's allow (allowingModeAsk)", () => {
  it('skips only a question the mode asks, never a protected file', async () => {
    const engine = await deciderFor();
    const call = async (file: string) => {
      const input = { file_path: file, content: 'x' };
      const parsed = parseToolInput(createToolRegistry(), 'Write', input);
      if (!parsed.ok) throw new Error(parsed.result.content);
      return allowingModeAsk(engine, { tool: 'Write', input, subject: parsed.tool.subject(parsed.input as never, { workspace: ws }), readOnly: false }, 'default', 'hook');
    };
    expect((await call('src/a.ts')).decision).toBe('allow');
    expect((await call('.keel/settings.local.json')).decision).toBe('ask');
    expect((await call('.git/hooks/pre-commit')).decision).toBe('ask');
  });
});

describe("a loop's folder", () => {
  it('is refused when a file of it is a hard link to another file (a write would change both)', async () => {
    const { checkLoopFolder } = await import('../../../src/core/loop/files');
    writeFileSync(join(ws, '.keel', 'settings.local.json'), '{}');
    rmSync(progress());
    linkSync(join(ws, '.keel', 'settings.local.json'), progress());
    expect(() => checkLoopFolder(ws, 'fix')).toThrow(/progress\.md has more than one name/);
  });
});
