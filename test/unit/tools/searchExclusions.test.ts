import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPermissionEngine, type PermissionEngine } from '../../../src/core/permissions';
import { globTool } from '../../../src/core/tools/glob';
import { grepTool } from '../../../src/core/tools/grep';
import { makeContext } from './helpers';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/**
 * Issue 22, item 3: the Grep and Glob tools never return what a Read deny (or ask) rule keeps
 * out, however deep it sits below their root: the permission engine gives them ripgrep
 * exclusions (engine.ts `searchExclusions`), the decision to allow the search relies on them,
 * and the tools pass them to the real ripgrep.
 */
let root: string;
let ws: string;
let engine: PermissionEngine;
const SECRET = 'AKIAIOSFODNN7EXAMPLE';

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-excl-')));
  ws = join(root, 'ws');
  for (const d of ['secrets', 'src/secrets', 'src/deep/keys', '.keel']) mkdirSync(join(ws, d), { recursive: true });
  writeFileSync(join(ws, 'secrets', 'aws.txt'), `key=${SECRET}\n`);
  writeFileSync(join(ws, 'src', 'secrets', 'nested.txt'), `not denied: ${SECRET}\n`);
  writeFileSync(join(ws, 'src', 'deep', 'keys', 'id.pem'), `pem ${SECRET}\n`);
  writeFileSync(join(ws, 'src', 'a.ts'), `// ${SECRET} in code\n`);
  writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read(./secrets/**)', 'Read(*.pem)'] } }));
  engine = await createPermissionEngine({ workspace: ws, home: join(root, 'home'), trust: NOTHING_APPROVED });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const ctx = () => makeContext(ws, { searchExclusions: (r) => engine.searchExclusions(r) });

describe('search exclusions', () => {
  it('the engine allows a search of the workspace and gives the tool what to skip', async () => {
    const subject = grepTool.subject({ pattern: SECRET }, { workspace: ws });
    expect((await engine.decide({ tool: 'Grep', input: { pattern: SECRET }, subject, readOnly: true }, 'default')).decision).toBe('allow');
    const ex = await engine.searchExclusions(ws);
    expect(ex?.globs).toEqual(expect.arrayContaining(['/secrets/**', '/**/*.pem']));
    expect(ex?.rules).toEqual(['Read(./secrets/**)', 'Read(*.pem)']);
    // Below src only the unanchored rule can reach.
    const below = (await engine.searchExclusions(join(ws, 'src')))?.globs ?? [];
    expect(below).toContain('/**/*.pem');
    expect(below.some((g) => g.includes('secrets'))).toBe(false);
  });

  it('Grep never returns a denied file, in any output mode', async () => {
    for (const output_mode of ['files_with_matches', 'content', 'count'] as const) {
      const r = await grepTool.invoke({ pattern: SECRET, output_mode }, ctx());
      expect(r.isError).toBe(false);
      expect(r.content).toContain('a.ts');
      expect(r.content).toContain('nested.txt');
      expect(r.content).not.toContain('aws.txt');
      expect(r.content).not.toContain('id.pem');
      expect(r.content).toMatch(/Not searched: files that Read\(\.\/secrets\/\*\*\), Read\(\*\.pem\) keep out of reach/);
    }
    // The person's own glob does not bring them back.
    const r = await grepTool.invoke({ pattern: SECRET, glob: '**/*', output_mode: 'content' }, ctx());
    expect(r.content).not.toContain('key=');
  });

  it('Glob does not list them', async () => {
    const r = await globTool.invoke({ pattern: '**/*' }, ctx());
    expect(r.content).toContain('a.ts');
    expect(r.content).not.toContain('aws.txt');
    expect(r.content).not.toContain('id.pem');
  });

  it('searching through a symlinked path still skips them (ripgrep runs from the real folder)', async () => {
    symlinkSync(ws, join(root, 'alias'));
    const r = await grepTool.invoke({ pattern: SECRET, path: join(root, 'alias') }, makeContext(join(root, 'alias'), { searchExclusions: (p) => engine.searchExclusions(p) }));
    expect(r.content).toContain('a.ts');
    expect(r.content).not.toContain('aws.txt');
  });

  it('without rules, nothing is skipped and no note is added', async () => {
    writeFileSync(join(ws, '.keel', 'settings.json'), '{}');
    const r = await grepTool.invoke({ pattern: SECRET }, ctx());
    expect(r.content).toContain('aws.txt');
    expect(r.content).not.toContain('Not searched');
  });
});
