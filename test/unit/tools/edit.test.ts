import { readFileSync, writeFileSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from '../../../src/core/tools/edit';
import { makeContext, makeTempDir } from './helpers';

let ws: { dir: string; cleanup: () => void };
let file: string;
beforeEach(() => {
  ws = makeTempDir();
  file = path.join(ws.dir, 'code.ts');
});
afterEach(() => ws.cleanup());

const read = (): string => readFileSync(file, 'utf8');

describe('Edit', () => {
  it('replaces a unique occurrence and shows the edited region', async () => {
    writeFileSync(file, 'const a = 1;\nconst b = 2;\n');
    const r = await editTool.invoke({ file_path: 'code.ts', old_string: 'b = 2', new_string: 'b = 3' }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(read()).toBe('const a = 1;\nconst b = 3;\n');
    expect(r.content).toContain('     2\tconst b = 3;');
    expect(r.summary).toBe('Edited code.ts (1 replacement)');
  });

  it('says old_string was not found, and nothing else, when it is absent', async () => {
    writeFileSync(file, 'secret content\n');
    const r = await editTool.invoke({ file_path: file, old_string: 'missing', new_string: 'x' }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.content).toContain(`old_string was not found in ${file}`);
    expect(r.content).not.toContain('secret content');
    expect(read()).toBe('secret content\n');
  });

  it('refuses an ambiguous old_string and says how many matches', async () => {
    writeFileSync(file, 'x = 1\nx = 1\nx = 1\n');
    const r = await editTool.invoke({ file_path: file, old_string: 'x = 1', new_string: 'x = 2' }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('Found 3 matches');
    expect(r.content).toContain('replace_all');
    expect(read()).toBe('x = 1\nx = 1\nx = 1\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    writeFileSync(file, 'x = 1\nx = 1\nx = 1\n');
    const r = await editTool.invoke({ file_path: file, old_string: 'x = 1', new_string: 'x = 2', replace_all: true }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(r.summary).toContain('3 replacements');
    expect(read()).toBe('x = 2\nx = 2\nx = 2\n');
  });

  it('refuses identical old and new strings', async () => {
    writeFileSync(file, 'same\n');
    const r = await editTool.invoke({ file_path: file, old_string: 'same', new_string: 'same' }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('identical');
  });

  it('inserts new_string literally ($& and $1 are not patterns)', async () => {
    writeFileSync(file, 'price: X\n');
    await editTool.invoke({ file_path: file, old_string: 'X', new_string: "$& $1 $$ $'" }, makeContext(ws.dir));
    expect(read()).toBe("price: $& $1 $$ $'\n");
  });

  it('matches LF old_string against a CRLF file and keeps CRLF', async () => {
    writeFileSync(file, 'one\r\ntwo\r\nthree\r\n');
    const r = await editTool.invoke({ file_path: file, old_string: 'one\ntwo', new_string: 'uno\ndos' }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(read()).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('reports a missing file, and creates one from an empty old_string', async () => {
    const missing = await editTool.invoke({ file_path: file, old_string: 'a', new_string: 'b' }, makeContext(ws.dir));
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain('File does not exist');
    const created = await editTool.invoke({ file_path: file, old_string: '', new_string: 'hello\n' }, makeContext(ws.dir));
    expect(created.isError).toBe(false);
    expect(read()).toBe('hello\n');
    const again = await editTool.invoke({ file_path: file, old_string: '', new_string: 'other' }, makeContext(ws.dir));
    expect(again.isError).toBe(true);
    expect(read()).toBe('hello\n');
  });

  it('carries the diff in its subject, and no diff when the edit cannot apply', () => {
    writeFileSync(file, 'a\nb\n');
    const s = editTool.subject({ file_path: 'code.ts', old_string: 'b', new_string: 'c' }, { workspace: ws.dir });
    expect(s).toEqual({ kind: 'write', tool: 'Edit', paths: [file], targets: [file], summary: 'Edit code.ts', diff: { path: file, before: 'a\nb\n', after: 'a\nc\n' } });
    const bad = editTool.subject({ file_path: 'code.ts', old_string: 'zzz', new_string: 'c' }, { workspace: ws.dir });
    expect(bad.kind).toBe('write');
    expect(bad.kind === 'write' && bad.diff).toBe(undefined);
    expect(bad.summary).toContain('will fail');
  });

  it('serializes concurrent edits to one file: 20 edits on distinct anchors all land', async () => {
    const anchors = Array.from({ length: 20 }, (_, i) => `<anchor-${i}>`);
    writeFileSync(file, anchors.join('\n') + '\n');
    const ctx = makeContext(ws.dir);
    setMaxListeners(anchors.length + 5, ctx.signal); // every waiting edit listens for abort
    const results = await Promise.all(
      anchors.map((a, i) => editTool.invoke({ file_path: file, old_string: a, new_string: `${a} marker-${i}` }, ctx)),
    );
    expect(results.filter((r) => r.isError)).toEqual([]);
    const text = read();
    for (let i = 0; i < anchors.length; i++) expect(text).toContain(`<anchor-${i}> marker-${i}`);
    expect(ctx.locks.counters.waited).toBeGreaterThan(0);
  });

  it('uses one lock for a relative and an absolute spelling of the same path', async () => {
    writeFileSync(file, 'A\nB\n');
    const ctx = makeContext(ws.dir);
    const [r1, r2] = await Promise.all([
      editTool.invoke({ file_path: 'code.ts', old_string: 'A', new_string: 'A1' }, ctx),
      editTool.invoke({ file_path: path.join(ws.dir, 'sub/../code.ts'), old_string: 'B', new_string: 'B1' }, ctx),
    ]);
    expect([r1.isError, r2.isError]).toEqual([false, false]);
    expect(read()).toBe('A1\nB1\n');
  });
});
