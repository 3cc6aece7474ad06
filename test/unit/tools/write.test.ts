import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileLockKey } from '../../../src/core/locks/lockManager';
import { writeTool } from '../../../src/core/tools/write';
import { makeContext, makeTempDir } from './helpers';
import { withinTurns } from '../helpers/changes';

let ws: { dir: string; cleanup: () => void };
beforeEach(() => {
  ws = makeTempDir();
});
afterEach(() => ws.cleanup());

describe('Write', () => {
  it('creates a file and its missing parent directories', async () => {
    const r = await writeTool.invoke({ file_path: 'deep/er/new.txt', content: 'one\ntwo\n' }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(r.summary).toBe('Created deep/er/new.txt (2 lines)');
    expect(readFileSync(path.join(ws.dir, 'deep/er/new.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('overwrites an existing file', async () => {
    const file = path.join(ws.dir, 'f.txt');
    writeFileSync(file, 'old');
    const r = await writeTool.invoke({ file_path: file, content: 'new' }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    expect(r.content).toContain(`Updated ${file}`);
    expect(readFileSync(file, 'utf8')).toBe('new');
  });

  it('describes a write with its diff before running', () => {
    const file = path.join(ws.dir, 'f.txt');
    const created = writeTool.subject({ file_path: 'f.txt', content: 'x\n' }, { workspace: ws.dir });
    expect(created).toEqual({ kind: 'write', tool: 'Write', paths: [file], targets: [file], summary: 'Create f.txt (1 lines)', diff: { path: file, before: null, after: 'x\n' } });
    writeFileSync(file, 'before\n');
    const overwrite = writeTool.subject({ file_path: 'f.txt', content: 'after\n' }, { workspace: ws.dir });
    expect(overwrite.kind === 'write' && overwrite.diff).toEqual({ path: file, before: 'before\n', after: 'after\n' });
    expect(existsSync(file) && readFileSync(file, 'utf8')).toBe('before\n');
  });

  it('refuses to write over a directory or below a file', async () => {
    mkdirSync(path.join(ws.dir, 'd'));
    const dir = await writeTool.invoke({ file_path: 'd', content: 'x' }, makeContext(ws.dir));
    expect(dir.isError).toBe(true);
    expect(dir.content).toContain('is a directory');
    writeFileSync(path.join(ws.dir, 'plain'), 'x');
    const below = await writeTool.invoke({ file_path: 'plain/child.txt', content: 'x' }, makeContext(ws.dir));
    expect(below.isError).toBe(true);
    expect(below.content).toContain('Could not write');
  });

  it('waits for the per-path lock before writing', async () => {
    const file = path.join(ws.dir, 'locked.txt');
    writeFileSync(file, 'original');
    const ctx = makeContext(ws.dir);
    const held = await ctx.locks.acquire(fileLockKey(file));
    const pending = writeTool.invoke({ file_path: 'locked.txt', content: 'replaced' }, ctx);
    // Once the write waits on the lock, the file stays as it was until the lock is let go.
    expect(await withinTurns(() => ctx.locks.counters.waited === 1)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('original');
    held.release();
    expect((await pending).isError).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('replaced');
  });

  it('gives up without writing when cancelled while waiting for the lock', async () => {
    const file = path.join(ws.dir, 'locked.txt');
    writeFileSync(file, 'original');
    const ctx = makeContext(ws.dir);
    const held = await ctx.locks.acquire(fileLockKey(file));
    const pending = writeTool.invoke({ file_path: file, content: 'replaced' }, ctx);
    ctx.controller.abort();
    const r = await pending;
    held.release();
    expect(r.isError).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('original');
  });
});
