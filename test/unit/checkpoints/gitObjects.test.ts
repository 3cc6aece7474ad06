import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { hashContent } from '../../../src/core/checkpoints/format';
import { GitBlobError, gitBlobId, GitObjects, hasName } from '../../../src/core/checkpoints/gitObjects';
import { CheckpointStore } from '../../../src/core/checkpoints/store';

/**
 * Before-images git already holds, without git: the blob id, a pack index searched by hand-made
 * version 2 `.idx` files, loose objects (checked, not trusted), and the store that keeps a
 * reference instead of the bytes and refuses, plainly, what the repository no longer gives back.
 * (The same against repositories made by git itself: gitRepo.test.ts, an integration file.)
 */

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'keel-gitobj-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A workspace whose `.git` is a plain repository folder (what `git init` makes, by hand). */
function repoLayout(config = '[core]\n\trepositoryformatversion = 0\n'): string {
  const ws = tmp();
  mkdirSync(join(ws, '.git', 'objects', 'pack'), { recursive: true });
  mkdirSync(join(ws, '.git', 'refs', 'heads'), { recursive: true });
  writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(ws, '.git', 'config'), config);
  return ws;
}

function writeLoose(ws: string, id: string, object: Buffer): void {
  mkdirSync(join(ws, '.git', 'objects', id.slice(0, 2)), { recursive: true });
  writeFileSync(join(ws, '.git', 'objects', id.slice(0, 2), id.slice(2)), deflateSync(object));
}

const blobObject = (content: Buffer) => Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]);

/** A version 2 pack index naming `ids` (the offsets and CRCs are not looked at by a lookup). */
function idxFile(ids: string[], hashLen = 20): Buffer {
  const names = ids.map((i) => Buffer.from(i, 'hex')).sort(Buffer.compare);
  const head = Buffer.alloc(8 + 1024);
  head.writeUInt32BE(0xff744f63, 0);
  head.writeUInt32BE(2, 4);
  for (let b = 0; b < 256; b++) head.writeUInt32BE(names.filter((n) => n[0]! <= b).length, 8 + b * 4);
  return Buffer.concat([head, ...names, Buffer.alloc(names.length * 8), Buffer.alloc(2 * hashLen)]);
}

const content = (seed: number, size = 4096) => Buffer.from(Array.from({ length: size }, (_, i) => String.fromCharCode(97 + ((i * 31 + seed) % 26))).join(''));

describe('git blob ids', () => {
  it('are the hash of "blob <length>\\0" and the content, in sha1 and sha256 repositories', () => {
    expect(gitBlobId(Buffer.from('hello\n'))).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(gitBlobId(Buffer.from('hello\n'), 'sha256')).toBe('2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4');
    expect(gitBlobId(Buffer.alloc(0))).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
  });
});

describe('pack index lookup', () => {
  it('finds every name of a version 2 index by its fanout and a binary search, and nothing else', () => {
    const d = tmp();
    const ids = Array.from({ length: 300 }, (_, i) => gitBlobId(Buffer.from(`object ${i}`)));
    const path = join(d, 'p.idx');
    writeFileSync(path, idxFile(ids));
    const file = idxFile(ids);
    const fanout = Array.from({ length: 256 }, (_, b) => file.readUInt32BE(8 + b * 4));
    for (const id of ids) expect(hasName({ path, fanout }, Buffer.from(id, 'hex'))).toBe(true);
    for (let i = 300; i < 400; i++) expect(hasName({ path, fanout }, Buffer.from(gitBlobId(Buffer.from(`object ${i}`)), 'hex'))).toBe(false);
  });
});

describe('GitObjects', () => {
  it('names a blob the repository holds loose or packed, and none it does not', async () => {
    const ws = repoLayout();
    const loose = content(1);
    const packed = content(2);
    writeLoose(ws, gitBlobId(loose), blobObject(loose));
    writeFileSync(join(ws, '.git', 'objects', 'pack', 'pack-1.idx'), idxFile([gitBlobId(packed), gitBlobId(content(9))]));
    writeFileSync(join(ws, '.git', 'objects', 'pack', 'pack-1.pack'), 'PACK');
    const git = new GitObjects(ws);
    expect(await git.reference(loose)).toBe(gitBlobId(loose));
    expect(await git.reference(packed)).toBe(gitBlobId(packed));
    expect(await git.reference(content(3))).toBeNull();
    // A pack added later (a fetch, a gc) is seen: the list follows the folder.
    const later = content(4);
    writeFileSync(join(ws, '.git', 'objects', 'pack', 'pack-2.idx'), idxFile([gitBlobId(later)]));
    writeFileSync(join(ws, '.git', 'objects', 'pack', 'pack-2.pack'), 'PACK');
    expect(await git.reference(later)).toBe(gitBlobId(later));
    // An index without its pack names nothing git could read.
    const orphan = content(5);
    writeFileSync(join(ws, '.git', 'objects', 'pack', 'pack-3.idx'), idxFile([gitBlobId(orphan)]));
    expect(await new GitObjects(ws).reference(orphan)).toBeNull();
  });

  it('does not take a damaged loose object, or one holding other content, for the blob', async () => {
    const ws = repoLayout();
    const c = content(1);
    const id = gitBlobId(c);
    mkdirSync(join(ws, '.git', 'objects', id.slice(0, 2)));
    writeFileSync(join(ws, '.git', 'objects', id.slice(0, 2), id.slice(2)), 'not zlib at all');
    expect(await new GitObjects(ws).reference(c)).toBeNull();
    writeLoose(ws, id, blobObject(content(2)));
    expect(await new GitObjects(ws).reference(c)).toBeNull();
    // Far larger than any compressed form of the content: not read at all.
    writeFileSync(join(ws, '.git', 'objects', id.slice(0, 2), id.slice(2)), Buffer.alloc(c.length * 3));
    expect(await new GitObjects(ws).reference(c)).toBeNull();
    writeLoose(ws, id, blobObject(c));
    expect(await new GitObjects(ws).reference(c)).toBe(id);
  });

  it('uses sha256 ids where the repository says so, and no git it cannot tell', async () => {
    const c = content(1);
    const ws = repoLayout('[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n');
    writeLoose(ws, gitBlobId(c, 'sha256'), blobObject(c));
    expect(await new GitObjects(ws).reference(c)).toBe(gitBlobId(c, 'sha256'));
    const odd = repoLayout('[extensions]\n\tobjectformat = blake3\n');
    writeLoose(odd, gitBlobId(c), blobObject(c));
    expect(await new GitObjects(odd).reference(c)).toBeNull();
  });

  it('leaves alone a repository that borrows objects, a linked worktree, a .git file and no repository', async () => {
    const c = content(1);
    const alt = repoLayout();
    writeLoose(alt, gitBlobId(c), blobObject(c));
    mkdirSync(join(alt, '.git', 'objects', 'info'));
    writeFileSync(join(alt, '.git', 'objects', 'info', 'alternates'), '/elsewhere/objects\n');
    expect(await new GitObjects(alt).reference(c)).toBeNull();
    const linked = repoLayout();
    writeLoose(linked, gitBlobId(c), blobObject(c));
    writeFileSync(join(linked, '.git', 'commondir'), '../../main/.git\n');
    expect(await new GitObjects(linked).reference(c)).toBeNull();
    const file = tmp();
    writeFileSync(join(file, '.git'), `gitdir: ${join(alt, '.git')}\n`);
    expect(await new GitObjects(file).reference(c)).toBeNull();
    expect(await new GitObjects(tmp()).reference(c)).toBeNull();
  });
});

describe('the checkpoint store with a git repository', () => {
  it('keeps a whole before-image git holds as a reference, reads it back checked, and deltas on it', async () => {
    const ws = repoLayout();
    const c = content(1, 64 * 1024);
    writeLoose(ws, gitBlobId(c), blobObject(c));
    const dir = tmp();
    const store = new CheckpointStore(dir, new GitObjects(ws));
    const first = await store.put(c, 'src/a.ts');
    expect(first.added).toBeLessThan(200);
    const edited = Buffer.concat([c.subarray(0, 1000), Buffer.from('changed'), c.subarray(1007)]);
    const second = await store.put(edited, 'src/a.ts');
    await store.sync();
    await store.close();
    // Not held by git: the bytes are kept (here as a delta against the git-held version).
    expect(second.added).toBeGreaterThan(0);
    const again = new CheckpointStore(dir, new GitObjects(ws));
    expect(await again.fromGit(first.hash)).toBe(true);
    expect(await again.fromGit(second.hash)).toBe(true);
    expect((await again.read(first.hash)).equals(c)).toBe(true);
    expect((await again.read(second.hash)).equals(edited)).toBe(true);
    // A small file, or content git does not hold, is kept as bytes.
    const small = await again.put(Buffer.from('tiny\n'), 'b.txt');
    expect(await again.fromGit(small.hash)).toBe(false);
    await again.close();
  });

  it('says plainly when git no longer has the object, and never returns a damaged or replaced one', async () => {
    const ws = repoLayout();
    const c = content(1, 8192);
    const id = gitBlobId(c);
    writeLoose(ws, id, blobObject(c));
    const dir = tmp();
    const store = new CheckpointStore(dir, new GitObjects(ws));
    const { hash } = await store.put(c, 'a.ts');
    await store.sync();
    await store.close();
    const objectPath = join(ws, '.git', 'objects', id.slice(0, 2), id.slice(2));
    rmSync(objectPath);
    const reader = () => new CheckpointStore(dir, new GitObjects(ws));
    await expect(reader().read(hash)).rejects.toThrow(GitBlobError);
    await expect(reader().read(hash)).rejects.toThrow(/no longer has/);
    // Garbage under the id.
    writeFileSync(objectPath, 'garbage');
    await expect(reader().read(hash)).rejects.toThrow(/cannot be read/);
    // A well-formed blob of the same size with other content (a planted object).
    const other = Buffer.from(c);
    other[10] = other[10]! ^ 1;
    writeFileSync(objectPath, deflateSync(blobObject(other)));
    await expect(reader().read(hash)).rejects.toThrow(/does not hold what was recorded/);
    expect(hashContent(other)).not.toBe(hash);
    // Without the repository at all.
    rmSync(join(ws, '.git'), { recursive: true });
    await expect(reader().read(hash)).rejects.toThrow(/no longer a git repository/);
  });
});
