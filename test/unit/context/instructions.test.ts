import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importsOf, loadInstructions } from '../../../src/core/context/instructions';
import { TRUST_EVERYTHING } from '../helpers/trustAll';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'keel-instr-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('instructions files', () => {
  it('reads KEEL.md, AGENTS.md, CLAUDE.md, .claude/CLAUDE.md and ~/.keel/KEEL.md in precedence order', () => {
    const ws = dir();
    const home = dir();
    mkdirSync(join(home, '.keel'));
    mkdirSync(join(ws, '.claude'));
    writeFileSync(join(home, '.keel', 'KEEL.md'), 'Answer in English.');
    writeFileSync(join(ws, 'AGENTS.md'), 'Agents: use npm.');
    writeFileSync(join(ws, 'CLAUDE.md'), 'Claude: tests with vitest.');
    writeFileSync(join(ws, '.claude', 'CLAUDE.md'), 'Claude dir: no console.log.');
    writeFileSync(join(ws, 'KEEL.md'), 'Keel: use pnpm, not npm.');
    const r = loadInstructions({ workspace: ws, home, trust: TRUST_EVERYTHING });
    expect(r.files.map((f) => f.display)).toEqual(['~/.keel/KEEL.md', 'AGENTS.md', 'CLAUDE.md', '.claude/CLAUDE.md', 'KEEL.md']);
    const order = ['Answer in English', 'Agents: use npm', 'Claude: tests', 'Claude dir', 'Keel: use pnpm'].map((s) => r.text.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(r.text).toMatch(/KEEL\.md over CLAUDE\.md/);
  });

  it('follows @imports inside the workspace, not in code, not in cycles, and refuses ones outside it', () => {
    const ws = dir();
    const home = dir();
    mkdirSync(join(ws, 'docs'));
    writeFileSync(join(ws, 'CLAUDE.md'), 'See @docs/testing.md and @docs/missing.md.\n`@docs/in-code.md`\n```\n@docs/in-fence.md\n```\nAlso @../outside.md and @~/.ssh/id_rsa and @types/node.');
    writeFileSync(join(ws, 'docs', 'testing.md'), 'Testing: vitest. Back to @../CLAUDE.md');
    writeFileSync(join(ws, 'docs', 'in-code.md'), 'NOT READ');
    writeFileSync(join(ws, 'docs', 'in-fence.md'), 'NOT READ');
    writeFileSync(join(ws, '..', 'outside.md'), 'OUTSIDE');
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'PRIVATE');
    const r = loadInstructions({ workspace: ws, home, trust: TRUST_EVERYTHING });
    rmSync(join(ws, '..', 'outside.md'));
    expect(r.files.map((f) => [f.display, f.importedBy])).toEqual([
      ['CLAUDE.md', undefined],
      ['docs/testing.md', 'CLAUDE.md'],
    ]);
    expect(r.text).toContain('Testing: vitest');
    expect(r.text).not.toContain('NOT READ');
    expect(r.text).not.toContain('OUTSIDE');
    expect(r.text).not.toContain('PRIVATE');
    expect(r.problems.join('\n')).toMatch(/docs\/missing\.md: imported but not found/);
    expect(r.problems.join('\n')).toMatch(/outside/);
    expect(r.problems.join('\n')).not.toMatch(/types\/node/);
  });

  it('does not follow a link out of the workspace, and redacts secrets', () => {
    const ws = dir();
    const other = dir();
    writeFileSync(join(other, 'notes.md'), 'LINKED OUT');
    symlinkSync(join(other, 'notes.md'), join(ws, 'AGENTS.md'));
    writeFileSync(join(ws, 'KEEL.md'), `Deploy token: ghp_${'a1B2'.repeat(9)}`);
    const r = loadInstructions({ workspace: ws, home: dir(), trust: TRUST_EVERYTHING });
    expect(r.files.map((f) => f.display)).toEqual(['KEEL.md']);
    expect(r.text).not.toContain('LINKED OUT');
    expect(r.text).toContain('[REDACTED:');
  });

  it('gives nothing when there are no files', () => {
    expect(loadInstructions({ workspace: dir(), home: dir(), trust: TRUST_EVERYTHING })).toEqual({ files: [], text: '', problems: [], held: [] });
  });

  it('finds imports in prose only', () => {
    expect(importsOf('see @a.md, @./b/c.md; mail me@example.com `@x.md`')).toEqual(['a.md', './b/c.md']);
  });
});
