import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from '../../../src/core/tools/edit';
import { writeTool } from '../../../src/core/tools/write';
import { makeContext, makeTempDir } from './helpers';

/**
 * Write and Edit write the file the permission check looked at: the subject records where a
 * path leads through symlinks, and the tool refuses when that changed before it ran.
 */
let ws: { dir: string; cleanup: () => void };
beforeEach(() => {
  ws = makeTempDir();
  mkdirSync(path.join(ws.dir, 'src'));
  mkdirSync(path.join(ws.dir, '.keel'));
});
afterEach(() => ws.cleanup());

describe('Write and Edit through symlinks', () => {
  it('the subject names the file a dangling symlink leads to, and says so', () => {
    symlinkSync('../.keel/settings.local.json', path.join(ws.dir, 'src', 'keellink'));
    const s = writeTool.subject({ file_path: 'src/keellink', content: '{}' }, { workspace: ws.dir });
    expect(s.kind === 'write' && s.targets).toEqual([path.join(ws.dir, '.keel', 'settings.local.json')]);
    expect(s.summary).toContain('through a symlink: writes .keel/settings.local.json');
  });

  it('refuses to write when a symlink was swapped in after the decision', async () => {
    const file = path.join(ws.dir, 'src', 'a.txt');
    writeFileSync(file, 'old');
    const approved = writeTool.subject({ file_path: 'src/a.txt', content: 'new' }, { workspace: ws.dir });
    // Between the decision and the write, src/a.txt becomes a link into .keel/.
    rmSync(file);
    symlinkSync('../.keel/settings.local.json', file);
    const r = await writeTool.invoke({ file_path: 'src/a.txt', content: 'new' }, makeContext(ws.dir, { approved }));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('as when it was approved');
    expect(existsSync(path.join(ws.dir, '.keel', 'settings.local.json'))).toBe(false);
  });

  it('Edit refuses the same swap', async () => {
    const file = path.join(ws.dir, 'src', 'a.txt');
    writeFileSync(file, 'one');
    writeFileSync(path.join(ws.dir, 'other.txt'), 'one');
    const approved = editTool.subject({ file_path: 'src/a.txt', old_string: 'one', new_string: 'two' }, { workspace: ws.dir });
    rmSync(file);
    symlinkSync('../other.txt', file);
    const r = await editTool.invoke({ file_path: 'src/a.txt', old_string: 'one', new_string: 'two' }, makeContext(ws.dir, { approved }));
    expect(r.isError).toBe(true);
    expect(readFileSync(path.join(ws.dir, 'other.txt'), 'utf8')).toBe('one');
  });

  it('writes through an unchanged symlink to the file it leads to (CLAUDE.md -> AGENTS.md)', async () => {
    writeFileSync(path.join(ws.dir, 'AGENTS.md'), 'old');
    symlinkSync('AGENTS.md', path.join(ws.dir, 'CLAUDE.md'));
    const approved = editTool.subject({ file_path: 'CLAUDE.md', old_string: 'old', new_string: 'new' }, { workspace: ws.dir });
    const r = await editTool.invoke({ file_path: 'CLAUDE.md', old_string: 'old', new_string: 'new' }, makeContext(ws.dir, { approved }));
    expect(r.isError, r.content).toBe(false);
    expect(readFileSync(path.join(ws.dir, 'AGENTS.md'), 'utf8')).toBe('new');
  });

  it('follows a chain of links through a directory link to a new file', async () => {
    mkdirSync(path.join(ws.dir, 'real'));
    symlinkSync('real', path.join(ws.dir, 'dirlink'));
    symlinkSync('../dirlink/new.txt', path.join(ws.dir, 'src', 'l1'));
    symlinkSync('l1', path.join(ws.dir, 'src', 'l2'));
    const approved = writeTool.subject({ file_path: 'src/l2', content: 'x' }, { workspace: ws.dir });
    expect(approved.kind === 'write' && approved.targets).toEqual([path.join(ws.dir, 'real', 'new.txt')]);
    const r = await writeTool.invoke({ file_path: 'src/l2', content: 'x' }, makeContext(ws.dir, { approved }));
    expect(r.isError, r.content).toBe(false);
    expect(readFileSync(path.join(ws.dir, 'real', 'new.txt'), 'utf8')).toBe('x');
  });

  it('refuses a symlink loop instead of guessing', async () => {
    symlinkSync('b', path.join(ws.dir, 'a'));
    symlinkSync('a', path.join(ws.dir, 'b'));
    const r = await writeTool.invoke({ file_path: 'a', content: 'x' }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('symlinks');
  });
});
