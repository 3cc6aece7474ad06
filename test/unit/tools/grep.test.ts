import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { grepTool } from '../../../src/core/tools/grep';
import { makeContext, makeTempDir } from './helpers';

let ws: { dir: string; cleanup: () => void };
let a: string;
let b: string;
beforeEach(() => {
  ws = makeTempDir();
  a = put('src/a.ts', 'import x\nconst Needle = 1;\nother\nneedle again\n', 1_000_000);
  b = put('src/b.js', 'function f() {}\nconst needle = 2;\n', 2_000_000);
  put('.gitignore', 'ignored/\n');
  put('ignored/c.ts', 'needle hidden by gitignore\n');
});
afterEach(() => ws.cleanup());

function put(rel: string, content: string, mtimeSec?: number): string {
  const abs = path.join(ws.dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  if (mtimeSec !== undefined) utimesSync(abs, mtimeSec, mtimeSec);
  return abs;
}

describe('Grep', () => {
  it('lists files with matches by default, newest first, respecting .gitignore', async () => {
    const r = await grepTool.invoke({ pattern: 'needle' }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(r.content).toBe(`Found 2 files\n${b}\n${a}`);
  });

  it('shows matching lines with line numbers in content mode', async () => {
    const r = await grepTool.invoke({ pattern: 'needle', output_mode: 'content', path: 'src/a.ts' }, makeContext(ws.dir));
    expect(r.content).toBe(`${a}:4:needle again`);
  });

  it('supports -i, context lines and glob filters', async () => {
    const r = await grepTool.invoke({ pattern: 'needle', output_mode: 'content', '-i': true, '-C': 1, glob: '*.ts' }, makeContext(ws.dir));
    expect(r.content.split('\n')).toEqual([`${a}-1-import x`, `${a}:2:const Needle = 1;`, `${a}-3-other`, `${a}:4:needle again`]);
  });

  it('counts matches per file', async () => {
    const r = await grepTool.invoke({ pattern: 'needle', output_mode: 'count', '-i': true }, makeContext(ws.dir));
    expect(r.content.split('\n\n')[0]?.split('\n').sort()).toEqual([`${a}:2`, `${b}:1`].sort());
    expect(r.summary).toBe('Found 3 matches in 2 files');
  });

  it('limits results with head_limit and says so', async () => {
    const r = await grepTool.invoke({ pattern: 'e', output_mode: 'content', path: 'src/a.ts', head_limit: 2 }, makeContext(ws.dir));
    const [shown, note] = r.content.split('\n\n');
    expect(shown?.split('\n')).toHaveLength(2);
    expect(note).toContain('first 2 of 3 results');
  });

  it('searches for patterns that start with a dash', async () => {
    put('flags.txt', 'use --force here\n');
    const r = await grepTool.invoke({ pattern: '--force', output_mode: 'content' }, makeContext(ws.dir));
    expect(r.content).toBe(`${path.join(ws.dir, 'flags.txt')}:1:use --force here`);
  });

  it('reports no matches and regex errors distinctly', async () => {
    const none = await grepTool.invoke({ pattern: 'zzz-not-there' }, makeContext(ws.dir));
    expect(none).toEqual({ content: 'No files found', isError: false, summary: 'No files found' });
    const bad = await grepTool.invoke({ pattern: 'a(' }, makeContext(ws.dir));
    expect(bad.isError).toBe(true);
    expect(bad.content).toContain('regex parse error');
  });

  it('gives a clear error when ripgrep cannot be found', async () => {
    const r = await grepTool.invoke({ pattern: 'x' }, makeContext(ws.dir, { ripgrepPath: '/nonexistent/rg' }));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('ripgrep (rg) was not found');
  });

  it('describes the search before running it', () => {
    expect(grepTool.subject({ pattern: 'x', path: 'src' }, { workspace: ws.dir })).toEqual({
      kind: 'read',
      tool: 'Grep',
      paths: [path.join(ws.dir, 'src')],
      summary: 'Search for /x/ in src',
    });
  });
});
