import { mkdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFixture, type PermissionFixture } from './fixture';

/**
 * The engine keeps its parsed rules between decisions and re-reads them when a settings file
 * changes (the stamp taken before every decision). Each decision must use the rules as they are
 * on disk at that moment: these change the files between two decisions in the ways an editor, a
 * `git checkout` or an atomic save does, including ways mtime and size alone would not show.
 */
let fx: PermissionFixture | undefined;
afterEach(() => fx?.cleanup());

const allowEcho = JSON.stringify({ permissions: { allow: ['mcp__everything__echo'] } });
// The same length as allowEcho, so only the content differs.
const denyEcho_ = JSON.stringify({ permissions: { deny: ['mcp__everything__echo'] } });
const denyEcho = denyEcho_ + ' '.repeat(allowEcho.length - denyEcho_.length);

const echo = () => fx!.decide('mcp__everything__echo', { message: 'hi' });

describe('permission settings changed between two decisions', () => {
  it('a rule rewritten in place is used by the next decision, even with the same size and mtime', async () => {
    fx = await makeFixture({ permissions: { allow: ['mcp__everything__echo'] } });
    const file = join(fx.ws, '.keel', 'settings.json');
    // A whole second, which every file system keeps exactly.
    const when = Math.floor(Date.now() / 1000) - 60;
    writeFileSync(file, allowEcho);
    utimesSync(file, when, when);
    expect((await echo()).decision).toBe('allow');
    const before = statSync(file);
    expect(denyEcho.length).toBe(allowEcho.length);
    writeFileSync(file, denyEcho);
    utimesSync(file, when, when);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(statSync(file).size).toBe(before.size);
    expect(await echo()).toMatchObject({ decision: 'deny', rule: 'mcp__everything__echo' });
  });

  it('a file replaced by a rename (an atomic save) with the same size and mtime is noticed', async () => {
    fx = await makeFixture({ permissions: { allow: ['mcp__everything__echo'] } });
    const file = join(fx.ws, '.keel', 'settings.json');
    const when = Math.floor(Date.now() / 1000) - 60;
    writeFileSync(file, allowEcho);
    utimesSync(file, when, when);
    expect((await echo()).decision).toBe('allow');
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, denyEcho);
    utimesSync(tmp, when, when);
    renameSync(tmp, file);
    expect((await echo()).decision).toBe('deny');
  });

  it('a removed file takes its rules away; a new file in another settings folder brings its own', async () => {
    fx = await makeFixture({ permissions: { allow: ['mcp__everything__echo'] } });
    expect((await echo()).decision).toBe('allow');
    rmSync(join(fx.ws, '.keel', 'settings.json'));
    expect((await echo()).decision).toBe('ask');
    mkdirSync(join(fx.ws, '.claude'), { recursive: true });
    writeFileSync(join(fx.ws, '.claude', 'settings.local.json'), denyEcho);
    expect((await echo()).decision).toBe('deny');
  });

  it('a settings file that becomes malformed makes the next decision ask, never allow', async () => {
    fx = await makeFixture({ permissions: { allow: ['mcp__everything__echo'] } });
    expect((await echo()).decision).toBe('allow');
    writeFileSync(join(fx.ws, '.keel', 'settings.json'), '{ "permissions": ');
    expect((await echo()).decision).toBe('ask');
  });

  it('a settings folder that is a file, then a folder holding a rule, is noticed (folders are stat\'ed once for their two files)', async () => {
    fx = await makeFixture({ permissions: { allow: ['mcp__everything__echo'] } });
    writeFileSync(join(fx.ws, '.claude'), 'not a folder');
    expect((await echo()).decision).toBe('allow');
    rmSync(join(fx.ws, '.claude'));
    mkdirSync(join(fx.ws, '.claude'));
    writeFileSync(join(fx.ws, '.claude', 'settings.json'), denyEcho);
    expect((await echo()).decision).toBe('deny');
    rmSync(join(fx.ws, '.claude'), { recursive: true });
    expect((await echo()).decision).toBe('allow');
  });
});
