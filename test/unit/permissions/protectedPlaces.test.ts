import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPermissionEngine } from '../../../src/core/permissions';
import { foldName, protectedReason } from '../../../src/core/permissions/protectedPlaces';
import { parseToolInput } from '../../../src/core/tools/execute';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { makeFixture, type PermissionFixture } from './fixture';
import { TRUST_EVERYTHING } from '../helpers/trustAll';

/**
 * Protected places (issue 21's "Also" and item 9; protectedPlaces.ts): names folded as a
 * case-insensitive file system that drops trailing dots and spaces sees them, instruction files,
 * hard links, and the files a caller protects (EngineOptions.protectedFiles).
 */
describe('protected places', () => {
  it('folds names as macOS and Windows do', () => {
    expect(foldName('.KEEL')).toBe('.keel');
    expect(foldName('.keel.')).toBe('.keel');
    expect(foldName('.keel. . ')).toBe('.keel');
    expect(foldName('KEEL.md:stream')).toBe('keel.md');
    expect(foldName('..')).toBe('..');
    expect(foldName('.')).toBe('.');
  });

  it('names every protected place, and nothing that only looks alike', () => {
    const places = { roots: ['/ws'], home: '/home/u', files: ['/ws/scripts/hook.sh'] };
    for (const p of ['/ws/.Git/config', '/ws/.keel./settings.json', '/ws/sub/.VSCODE/tasks.json', '/ws/KEEL.md', '/ws/docs/agents.MD', '/ws/CLAUDE.local.md', '/home/u/.KEEL/x', '/ws/Scripts/HOOK.sh', '/ws/scripts/hook.sh.']) {
      expect(protectedReason(p, places), p).not.toBeNull();
    }
    for (const p of ['/ws/src/keel.ts', '/ws/KEEL.md.bak', '/ws/docs/keel.mdx', '/ws/.gitignore', '/ws/scripts/other.sh', '/ws/.keelrc']) {
      expect(protectedReason(p, places), p).toBeNull();
    }
  });
});

describe('EngineOptions.protectedFiles', () => {
  let fx: PermissionFixture | undefined;
  afterEach(() => fx?.cleanup());

  async function decideWrite(engine: Awaited<ReturnType<typeof createPermissionEngine>>, ws: string, file: string) {
    const registry = createToolRegistry();
    const parsed = parseToolInput(registry, 'Write', { file_path: file, content: 'x' });
    if (!parsed.ok) throw new Error('bad input');
    const subject = parsed.tool.subject(parsed.input as never, { workspace: ws });
    return engine.decide({ tool: 'Write', input: parsed.input, subject, readOnly: false }, 'bypassPermissions');
  }

  it('asks about a write to a file the caller protects, read at every decision, in every mode', async () => {
    fx = await makeFixture({ permissions: { allow: ['Edit(./**)'] } });
    mkdirSync(join(fx.ws, 'hooks'));
    writeFileSync(join(fx.ws, 'hooks', 'fmt.sh'), 'echo\n');
    const list = new Map<string, string>();
    const engine = await createPermissionEngine({ workspace: fx.ws, home: fx.home, trust: TRUST_EVERYTHING, protectedFiles: () => list });
    // Before the caller protects it, bypassPermissions writes it (an ordinary file).
    expect((await decideWrite(engine, fx.ws, 'hooks/fmt.sh')).decision).toBe('allow');
    // A hook approved later: the next decision already protects its script.
    list.set(join(fx.ws, 'hooks', 'fmt.sh'), 'writes a protected file (the script a hook runs)');
    const d = await decideWrite(engine, fx.ws, 'hooks/fmt.sh');
    expect(d.decision).toBe('ask');
    expect(d.reason).toMatch(/protected file/);
    expect((await decideWrite(engine, fx.ws, 'hooks/FMT.sh')).decision).toBe('ask');
    // A hard link to it is the same file.
    linkSync(join(fx.ws, 'hooks', 'fmt.sh'), join(fx.ws, 'src', 'alias.sh'));
    expect((await decideWrite(engine, fx.ws, 'src/alias.sh')).reason).toMatch(/hard link/);
    // Through a redirection and a file command too.
    const bash = async (command: string) => {
      const registry = createToolRegistry();
      const parsed = parseToolInput(registry, 'Bash', { command });
      if (!parsed.ok) throw new Error('bad input');
      const subject = parsed.tool.subject(parsed.input as never, { workspace: fx!.ws });
      return engine.decide({ tool: 'Bash', input: parsed.input, subject, readOnly: false }, 'bypassPermissions');
    };
    expect((await bash('echo evil > hooks/fmt.sh')).decision).toBe('ask');
    expect((await bash('cp src/a.ts hooks/fmt.sh')).decision).toBe('ask');
    expect((await bash('echo ok > hooks/other.sh')).decision).toBe('allow');
  });

  it('keeps Keel\'s own places protected when the caller\'s list throws', async () => {
    fx = await makeFixture({ permissions: { allow: ['Edit(./**)'] } });
    const engine = await createPermissionEngine({
      workspace: fx.ws,
      home: fx.home,
      trust: TRUST_EVERYTHING,
      protectedFiles: () => {
        throw new Error('approvals store unreadable');
      },
    });
    expect((await decideWrite(engine, fx.ws, 'KEEL.md')).decision).toBe('ask');
    expect((await decideWrite(engine, fx.ws, 'src/ok.ts')).decision).toBe('allow');
  });

  it('protects the settings files it reads, wherever they are (--settings FILE)', async () => {
    fx = await makeFixture({ permissions: { allow: ['Edit(./**)'] } });
    writeFileSync(join(fx.ws, 'perm.json'), '{}');
    const engine = await createPermissionEngine({ workspace: fx.ws, home: fx.home, trust: TRUST_EVERYTHING, settingsFiles: [join(fx.ws, 'perm.json')] });
    expect((await decideWrite(engine, fx.ws, 'perm.json')).decision).toBe('ask');
    expect((await decideWrite(engine, fx.ws, 'other.json')).decision).toBe('allow');
  });
});
