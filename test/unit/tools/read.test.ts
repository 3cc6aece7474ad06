import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READ_DEFAULT_LIMIT, READ_MAX_LINE_CHARS, READ_MAX_OUTPUT_CHARS, readTool } from '../../../src/core/tools/read';
import { makeContext, makeTempDir } from './helpers';

let ws: { dir: string; cleanup: () => void };
beforeEach(() => {
  ws = makeTempDir();
});
afterEach(() => ws.cleanup());

const lines = (n: number, f: (i: number) => string = (i) => `line ${i}`): string =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

describe('Read', () => {
  it('returns cat -n numbered lines for a relative path', async () => {
    writeFileSync(path.join(ws.dir, 'a.txt'), 'alpha\nbeta\r\ngamma');
    const r = await readTool.invoke({ file_path: 'a.txt' }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(r.content).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
    expect(r.summary).toBe('Read 3 lines of a.txt');
  });

  it('honours offset and limit and says how to continue', async () => {
    const file = path.join(ws.dir, 'b.txt');
    writeFileSync(file, lines(50));
    const r = await readTool.invoke({ file_path: file, offset: 10, limit: 3 }, makeContext(ws.dir));
    expect(r.content.split('\n').slice(0, 3)).toEqual(['    10\tline 10', '    11\tline 11', '    12\tline 12']);
    expect(r.content).toContain('offset=13');
    const zero = await readTool.invoke({ file_path: file, offset: 0, limit: 1 }, makeContext(ws.dir));
    expect(zero.content.split('\n')[0]).toBe('     1\tline 1');
  });

  it(`reads at most ${READ_DEFAULT_LIMIT} lines by default`, async () => {
    const file = path.join(ws.dir, 'long.txt');
    writeFileSync(file, lines(READ_DEFAULT_LIMIT + 500));
    const r = await readTool.invoke({ file_path: file }, makeContext(ws.dir));
    expect(r.content).toContain(`  2000\tline 2000`);
    expect(r.content).not.toContain('line 2001');
    expect(r.content).toContain('offset=2001');
  });

  it('truncates very long lines', async () => {
    const file = path.join(ws.dir, 'wide.txt');
    writeFileSync(file, `short\n${'x'.repeat(READ_MAX_LINE_CHARS * 3)}\nafter\n`);
    const r = await readTool.invoke({ file_path: file }, makeContext(ws.dir));
    const second = r.content.split('\n')[1] ?? '';
    expect(second.startsWith(`     2\t${'x'.repeat(READ_MAX_LINE_CHARS)}`)).toBe(true);
    expect(second).not.toContain('x'.repeat(READ_MAX_LINE_CHARS + 1));
    expect(r.content).toContain('     3\tafter');
    expect(r.content).toContain('1 line(s) longer than');
  });

  it('stops at the output size cap and says where', async () => {
    const file = path.join(ws.dir, 'big.txt');
    writeFileSync(file, lines(1500, () => 'y'.repeat(1000)));
    const r = await readTool.invoke({ file_path: file }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(r.content.length).toBeLessThan(READ_MAX_OUTPUT_CHARS + 500);
    expect(r.content).toMatch(/Output stopped at 256 KB after line (\d+); call Read with offset=\d+/);
  });

  it('refuses binary files', async () => {
    const file = path.join(ws.dir, 'bin.dat');
    writeFileSync(file, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0x41]));
    const r = await readTool.invoke({ file_path: file }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('binary file');
  });

  it('reports a missing file and a directory clearly', async () => {
    const missing = await readTool.invoke({ file_path: 'nope.txt' }, makeContext(ws.dir));
    expect(missing.isError).toBe(true);
    expect(missing.content).toBe(`File does not exist: ${path.join(ws.dir, 'nope.txt')}`);
    mkdirSync(path.join(ws.dir, 'sub'));
    const dir = await readTool.invoke({ file_path: 'sub' }, makeContext(ws.dir));
    expect(dir.isError).toBe(true);
    expect(dir.content).toContain('is a directory');
  });

  it('handles empty files and an offset past the end', async () => {
    writeFileSync(path.join(ws.dir, 'empty.txt'), '');
    const empty = await readTool.invoke({ file_path: 'empty.txt' }, makeContext(ws.dir));
    expect(empty.isError).toBe(false);
    expect(empty.content).toContain('is empty');
    writeFileSync(path.join(ws.dir, 'three.txt'), lines(3));
    const past = await readTool.invoke({ file_path: 'three.txt', offset: 10 }, makeContext(ws.dir));
    expect(past.content).toContain('has only 3 lines');
  });

  it('keeps the absolute path in its subject', () => {
    const s = readTool.subject({ file_path: 'src/x.ts' }, { workspace: ws.dir });
    expect(s).toEqual({ kind: 'read', tool: 'Read', paths: [path.join(ws.dir, 'src/x.ts')], summary: 'Read src/x.ts' });
  });
});
