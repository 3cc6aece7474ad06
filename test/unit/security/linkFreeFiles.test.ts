import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LinkRefused, linkProblem, makeDirsNoFollow, readNoFollow, writeAtomicNoFollowSync, writeNoFollowSync } from '../../../src/core/security/linkFreeFiles';

/** Keel's own workspace files (loops, memories): never through a link, never a FIFO, never outside the root. */
let root: string;
let outside: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'keel-nofollow-'));
  outside = mkdtempSync(join(tmpdir(), 'keel-nofollow-out-'));
  writeFileSync(join(outside, 'target'), 'outside');
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('link-free files', () => {
  it('reads and writes plain files, creating folders one by one', () => {
    makeDirsNoFollow(root, join(root, 'a', 'b'));
    writeNoFollowSync(root, join(root, 'a', 'b', 'f'), 'one\n');
    writeNoFollowSync(root, join(root, 'a', 'b', 'f'), 'two\n', { append: true });
    expect(readNoFollow(root, join(root, 'a', 'b', 'f'))?.text).toBe('one\ntwo\n');
    writeAtomicNoFollowSync(root, join(root, 'a', 'b', 'f'), 'three');
    expect(readNoFollow(root, join(root, 'a', 'b', 'f'), 3)).toMatchObject({ text: 'thr', cut: true, size: 5 });
    expect(readNoFollow(root, join(root, 'missing'))).toBeUndefined();
  });

  it('refuses a link as the file, and a link anywhere in the folder chain, for reads and writes', () => {
    symlinkSync(join(outside, 'target'), join(root, 'file'));
    expect(() => readNoFollow(root, join(root, 'file'))).toThrow(LinkRefused);
    expect(() => writeNoFollowSync(root, join(root, 'file'), 'x')).toThrow(/file is a symbolic link/);
    symlinkSync(outside, join(root, 'dir'));
    expect(() => readNoFollow(root, join(root, 'dir', 'target'))).toThrow(/dir is a symbolic link/);
    expect(() => writeAtomicNoFollowSync(root, join(root, 'dir', 'new'), 'x')).toThrow(LinkRefused);
    expect(() => makeDirsNoFollow(root, join(root, 'dir', 'sub'))).toThrow(LinkRefused);
    expect(linkProblem(root, join(root, 'dir', 'target'))).toBe('dir is a symbolic link');
    expect(readFileSync(join(outside, 'target'), 'utf8')).toBe('outside');
  });

  it('an atomic write replaces a link at its place instead of writing through it', () => {
    symlinkSync(join(outside, 'target'), join(root, 'state.json'));
    writeAtomicNoFollowSync(root, join(root, 'state.json'), '{}');
    expect(readNoFollow(root, join(root, 'state.json'))?.text).toBe('{}');
    expect(readFileSync(join(outside, 'target'), 'utf8')).toBe('outside');
  });

  it('does not hang on a FIFO and refuses what is not a regular file or not below the root', () => {
    execFileSync('mkfifo', [join(root, 'fifo')]);
    expect(() => readNoFollow(root, join(root, 'fifo'))).toThrow(/not a regular file/);
    mkdirSync(join(root, 'folder'));
    expect(() => readNoFollow(root, join(root, 'folder'))).toThrow(/not a regular file/);
    expect(() => readNoFollow(root, join(outside, 'target'))).toThrow(/is not inside/);
  });
});
