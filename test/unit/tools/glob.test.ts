import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GLOB_MAX_RESULTS, globTool } from '../../../src/core/tools/glob';
import { resolveRipgrep } from '../../../src/core/tools/ripgrep';
import { makeContext, makeTempDir } from './helpers';

let ws: { dir: string; cleanup: () => void };
beforeEach(() => {
  ws = makeTempDir();
});
afterEach(() => ws.cleanup());

function put(rel: string, content = 'x', mtimeSec?: number): string {
  const abs = path.join(ws.dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  if (mtimeSec !== undefined) utimesSync(abs, mtimeSec, mtimeSec);
  return abs;
}

describe('Glob', () => {
  it('lists matching files as absolute paths, newest first', async () => {
    const old = put('src/old.ts', 'x', 1_000_000);
    const mid = put('src/deep/mid.ts', 'x', 2_000_000);
    const recent = put('recent.ts', 'x', 3_000_000);
    put('src/notes.md');
    const r = await globTool.invoke({ pattern: '**/*.ts' }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(r.content.split('\n')).toEqual([recent, mid, old]);
    expect(r.summary).toBe('Found 3 files');
  });

  it('searches below path only', async () => {
    put('a/one.ts');
    const inside = put('b/two.ts');
    const r = await globTool.invoke({ pattern: '*.ts', path: 'b' }, makeContext(ws.dir));
    expect(r.content).toBe(inside);
  });

  it('respects .gitignore outside a git repository and never lists .git', async () => {
    put('.gitignore', 'build/\n*.log\n');
    put('build/out.js');
    put('debug.log');
    put('.git/config');
    const kept = put('src/app.js');
    const hidden = put('.github/ci.yml');
    const r = await globTool.invoke({ pattern: '**/*' }, makeContext(ws.dir));
    const files = r.content.split('\n').sort();
    expect(files).toEqual([path.join(ws.dir, '.gitignore'), hidden, kept].sort());
  });

  it(`caps the list at ${GLOB_MAX_RESULTS} with a notice`, async () => {
    for (let i = 0; i < GLOB_MAX_RESULTS + 20; i++) put(`many/f${i}.txt`, 'x', 1_000_000 + i);
    const r = await globTool.invoke({ pattern: '*.txt' }, makeContext(ws.dir));
    const listed = r.content.split('\n\n')[0]?.split('\n') ?? [];
    expect(listed).toHaveLength(GLOB_MAX_RESULTS);
    expect(listed[0]).toBe(path.join(ws.dir, `many/f${GLOB_MAX_RESULTS + 19}.txt`));
    expect(r.content).toContain(`Showing the ${GLOB_MAX_RESULTS} most recently modified of 120 files`);
  });

  it('says when nothing matches and when the path is missing', async () => {
    put('a.md');
    const none = await globTool.invoke({ pattern: '*.rs' }, makeContext(ws.dir));
    expect(none).toEqual({ content: 'No files found', isError: false, summary: 'No files found' });
    const missing = await globTool.invoke({ pattern: '*', path: 'nope' }, makeContext(ws.dir));
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain('Path does not exist');
  });

  it('gives a clear error when ripgrep cannot be found', async () => {
    const r = await globTool.invoke({ pattern: '*' }, makeContext(ws.dir, { ripgrepPath: path.join(ws.dir, 'no-rg') }));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('ripgrep (rg) was not found');
    expect(r.content).toContain('apt-get install ripgrep');
    const onEmptyPath = resolveRipgrep({}, ws.dir);
    expect(onEmptyPath.ok).toBe(false);
    const onRealPath = resolveRipgrep({});
    expect(onRealPath.ok && path.basename(onRealPath.path)).toBe('rg');
  });
});
