import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedFs } from '../../../src/core/permissions/fsView';
import { MAX_LINKS, resolvePhysical } from '../../../src/core/permissions/physical';

/**
 * The physical resolver answers what the kernel does: it is checked against realpath(3) for
 * existing paths, and against the file open(O_CREAT) really creates for dangling links.
 */
let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-phys-')));
  mkdirSync(join(root, 'ws', 'src', 'deep', 'er'), { recursive: true });
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(root, 'ws', 'src', 'a.txt'), 'a');
  writeFileSync(join(root, 'outside', 'secret.txt'), 's');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const ws = (): string => join(root, 'ws');
const ok = (p: string, cwd?: string): string => {
  const r = resolvePhysical(p, cwd);
  if (!r.ok) throw new Error(r.reason);
  return r.path;
};

describe('resolvePhysical', () => {
  it('resolves symlinks before "..", as the kernel does (path.resolve would not)', () => {
    symlinkSync('/', join(ws(), 'src', 'rootlink'));
    const p = `${ws()}/src/rootlink/../etc/hostname`;
    expect(ok(p)).toBe('/etc/hostname');
    expect(ok(p)).toBe(realpathSync.native(p));
  });

  it('agrees with realpath on existing paths through relative and absolute links, in any component', () => {
    symlinkSync('../outside', join(ws(), 'out'));
    symlinkSync(join(ws(), 'src', 'deep'), join(ws(), 'abs'));
    symlinkSync('abs/er', join(ws(), 'mid'));
    for (const p of [`${ws()}/out/secret.txt`, `${ws()}/abs/er/..`, `${ws()}/mid/../../a.txt`, `${ws()}/./src//deep/../a.txt`, `${ws()}/out/../ws/src`]) {
      expect(ok(p)).toBe(realpathSync.native(p));
    }
  });

  it('follows a dangling link to the file a write would create, through a chain', () => {
    mkdirSync(join(ws(), '.keel'));
    symlinkSync('../.keel/settings.local.json', join(ws(), 'src', 'keellink'));
    symlinkSync('keellink', join(ws(), 'src', 'chain'));
    const r = resolvePhysical(`${ws()}/src/chain`);
    expect(r).toEqual({ ok: true, path: join(ws(), '.keel', 'settings.local.json'), exists: false, viaLink: true });
    // What the kernel does with it: open(O_CREAT) through the chain creates exactly that file.
    closeSync(openSync(`${ws()}/src/chain`, 'w'));
    expect(readFileSync(join(ws(), '.keel', 'settings.local.json'), 'utf8')).toBe('');
  });

  it('keeps the missing tail of a new path, after the links it went through', () => {
    symlinkSync('../outside', join(ws(), 'out'));
    expect(resolvePhysical(`${ws()}/out/new/dir/file`)).toEqual({ ok: true, path: join(root, 'outside', 'new', 'dir', 'file'), exists: false, viaLink: true });
    expect(resolvePhysical(`${ws()}/src/new.txt`)).toEqual({ ok: true, path: join(ws(), 'src', 'new.txt'), exists: false, viaLink: false });
  });

  it('resolves a relative path from a physical working directory', () => {
    symlinkSync('../../outside', join(ws(), 'src', 'o'));
    expect(ok('o/secret.txt', join(ws(), 'src'))).toBe(join(root, 'outside', 'secret.txt'));
    expect(ok('../a.txt', join(ws(), 'src', 'deep'))).toBe(join(ws(), 'src', 'a.txt'));
  });

  it('refuses ".." after a component that does not exist yet (another command could create it as a link)', () => {
    const r = resolvePhysical(`${ws()}/nothing/../../outside/secret.txt`);
    expect(r.ok).toBe(false);
  });

  it('treats a path below a file as new (ENOTDIR), not as a directory', () => {
    const r = resolvePhysical(`${ws()}/src/a.txt/x`);
    expect(r).toMatchObject({ ok: true, exists: false });
    expect(resolvePhysical(`${ws()}/src/a.txt/../a.txt`).ok).toBe(false);
  });

  it('gives up on a loop, and after 40 links as the kernel does, but follows 40', () => {
    symlinkSync('l2', join(ws(), 'l1'));
    symlinkSync('l1', join(ws(), 'l2'));
    expect(resolvePhysical(`${ws()}/l1`).ok).toBe(false);
    // A chain of exactly MAX_LINKS links resolves; one more does not.
    writeFileSync(join(ws(), 'end'), 'e');
    let prev = 'end';
    for (let i = 0; i < MAX_LINKS + 1; i++) {
      symlinkSync(prev, join(ws(), `c${i}`));
      prev = `c${i}`;
    }
    expect(ok(`${ws()}/c${MAX_LINKS - 1}`)).toBe(join(ws(), 'end'));
    expect(resolvePhysical(`${ws()}/c${MAX_LINKS}`).ok).toBe(false);
  });

  it('answers the same through a cached view of the disk', () => {
    symlinkSync('/', join(ws(), 'src', 'rootlink'));
    const fs = cachedFs();
    expect(resolvePhysical(`${ws()}/src/rootlink/../etc/hostname`, '/', fs)).toEqual(resolvePhysical(`${ws()}/src/rootlink/../etc/hostname`));
  });

  it('refuses a NUL, which no path can hold', () => {
    expect(resolvePhysical('/etc/passwd\0/x').ok).toBe(false);
  });
});
