import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashContent } from '../../../src/core/checkpoints/format';
import { RECOMPACT_MIN_BYTES } from '../../../src/core/checkpoints/recompact';
import { CheckpointStore } from '../../../src/core/checkpoints/store';
import { sourceCorpus } from '../../fixtures/sourceCorpus';

/**
 * Background recompaction of large whole copies (recompact.ts, PackWriter.replace): the pack ends
 * smaller, every version reads back exactly (in the process that rewrote it, in another that had
 * read the pack before, after a kill at any point of the rewrite), the storage the task reports
 * is what the folder holds, and a pack a fork links is never rewritten.
 */

/** Real code: this repository's sources, concatenated in a fixed order. */
const CORPUS = sourceCorpus();

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'keel-recompact-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folderBytes(dir: string): number {
  let n = 0;
  for (const sub of ['packs', 'linked']) {
    if (!existsSync(join(dir, sub))) continue;
    for (const f of readdirSync(join(dir, sub))) n += statSync(join(dir, sub, f)).size;
  }
  return n;
}

/** A large file, then `edits` Edits of it and a second large file: every version, by hash. */
async function history(store: CheckpointStore, edits: number): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  const keep = async (text: string, path: string) => {
    const { hash } = await store.put(Buffer.from(text), path);
    versions.set(hash, text);
    await store.append({ type: 'mark', step: `toolu_${versions.size}`, path, before: { kind: 'blob', hash, size: Buffer.byteLength(text) } });
    await store.sync();
  };
  let text = CORPUS.slice(0, 300_000);
  for (let k = 0; k < edits; k++) {
    await keep(text, 'big.ts');
    const at = (k * 104_729) % (text.length - 200);
    text = `${text.slice(0, at)}const edited${k} = compute(${k}); // edit ${k}\n${text.slice(at + 100)}`;
  }
  // A second whole copy after the first (its frame moves when the first is rewritten).
  await keep(CORPUS.slice(300_000, 500_000), 'other.ts');
  return versions;
}

async function readsAll(store: CheckpointStore, versions: Map<string, string>): Promise<void> {
  for (const [hash, text] of versions) expect((await store.read(hash)).toString()).toBe(text);
}

describe('recompaction of large whole copies', () => {
  it('rewrites them smaller in the background; every version reads back, here and in a fresh store', async () => {
    expect(CORPUS.length).toBeGreaterThan(500_000);
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const versions = await history(store, 30);
    const before = await store.storedBytes();
    await store.recompacted();
    expect(store.recompaction.done).toBe(2);
    const after = await store.storedBytes();
    expect(after).toBeLessThan(before - 20_000);
    // What the task reports is what the folder holds, and no rewrite is left beside the pack.
    expect(after).toBe(folderBytes(dir));
    expect(readdirSync(join(dir, 'packs'))).toEqual(['000001.pack']);
    await readsAll(store, versions);
    // The writer goes on appending to the rewritten pack.
    const later = `${CORPUS.slice(0, 1000)}later\n`;
    await store.put(Buffer.from(later), 'late.ts');
    await store.sync();
    versions.set(hashContent(Buffer.from(later)), later);
    await store.close();
    const fresh = new CheckpointStore(dir);
    expect((await fresh.load()).damage).toEqual([]);
    await readsAll(fresh, versions);
  });

  it('leaves small whole copies as they are', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    await store.put(Buffer.from(CORPUS).subarray(0, RECOMPACT_MIN_BYTES - 1), 'small.ts');
    await store.sync();
    await store.recompacted();
    expect(store.recompaction.done).toBe(0);
    await store.close();
  });

  it('closing the store drops the copies queued and finishes the one being rewritten, without waiting for it', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const texts = [CORPUS.slice(0, 300_000), CORPUS.slice(300_000, 600_000)];
    const hashes: string[] = [];
    for (const [k, t] of texts.entries()) hashes.push((await store.put(Buffer.from(t), `big${k}.ts`)).hash);
    await store.sync();
    // Closed as the copies became durable: the first one's rewrite has begun (its ~1 s of
    // compression is under way), the second waits in the queue.
    await store.close();
    expect(store.recompaction.done).toBe(0);
    await store.recompacted();
    expect(store.recompaction.done).toBe(1);
    expect(readdirSync(join(dir, 'packs'))).toEqual(['000001.pack']);
    const fresh = new CheckpointStore(dir);
    expect(await fresh.storedBytes()).toBe(folderBytes(dir));
    for (const [k, t] of texts.entries()) expect((await fresh.read(hashes[k]!)).toString()).toBe(t);
  });

  it('a store made not to recompact keeps its copies as first stored', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir, null, { recompact: false });
    await store.put(Buffer.from(CORPUS.slice(0, 300_000)), 'big.ts');
    await store.recompacted();
    expect(store.recompaction.done).toBe(0);
    await store.close();
  });

  it('a store that read the pack before it was rewritten (another process) reads it again, right', async () => {
    const dir = tmp();
    const writer = new CheckpointStore(dir);
    const text = CORPUS.slice(0, 300_000);
    const { hash } = await writer.put(Buffer.from(text), 'big.ts');
    const other = CORPUS.slice(300_000, 400_000);
    await writer.put(Buffer.from(other), 'small.ts');
    await writer.sync();
    // Read as the copy became durable, long before its rewrite (~1 s of compression) is done.
    const reader = new CheckpointStore(dir);
    await reader.load();
    expect(writer.recompaction.done).toBe(0);
    await writer.recompacted();
    const versions = new Map([[hash, text], [hashContent(Buffer.from(other)), other]]);
    expect(writer.recompaction.done).toBe(1);
    await readsAll(reader, versions);
    await writer.close();
  });

  it('a kill at any point of the rewrite leaves a pack that reads back every version', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const versions = await history(store, 10);
    const pack = join(dir, 'packs', '000001.pack');
    const old = readFileSync(pack);
    await store.recompacted();
    await store.close();
    const rewritten = readFileSync(pack);
    expect(rewritten.length).toBeLessThan(old.length);
    // Killed before the rename: the old pack, and a rewrite of it cut anywhere, under the name a
    // process that is gone left (the pid of a process that just ended).
    const gone = deadPid();
    for (const cut of [0, 7, 1000, Math.floor(rewritten.length / 2), rewritten.length - 1, rewritten.length]) {
      writeFileSync(pack, old);
      const leftover = join(dir, 'packs', `000001.pack.${gone}.recompact`);
      writeFileSync(leftover, rewritten.subarray(0, cut));
      const again = new CheckpointStore(dir);
      expect((await again.load()).damage).toEqual([]);
      await readsAll(again, versions);
      // The next writer of the task removes the leftover, and its storage counts what is there.
      await again.put(Buffer.from(`cut ${cut}\n`), 'n.ts');
      await again.sync();
      expect(existsSync(leftover)).toBe(false);
      expect(await again.storedBytes()).toBe(folderBytes(dir));
      await again.close();
      rmSync(join(dir, 'packs', '000002.pack'));
    }
    // Killed after the rename: the new pack, whole.
    writeFileSync(pack, rewritten);
    await readsAll(new CheckpointStore(dir), versions);
  });

  it('never rewrites a pack a fork links; the fork and its parent read every version, and either outlives the other', async () => {
    const root = tmp();
    const parentDir = join(root, 'parent', 'checkpoints');
    const forkDir = join(root, 'fork', 'checkpoints');
    const store = new CheckpointStore(parentDir);
    const text = CORPUS.slice(0, 300_000);
    const { hash } = await store.put(Buffer.from(text), 'big.ts');
    // Forked as the copy becomes durable: the pack is linked before the rewrite (which starts
    // only then, and yields first) could take it.
    await store.shareWith(forkDir);
    const shared = statSync(join(parentDir, 'packs', '000001.pack'));
    await store.recompacted();
    expect(store.recompaction.done).toBe(0);
    expect(statSync(join(parentDir, 'packs', '000001.pack')).ino).toBe(shared.ino);
    expect(statSync(join(forkDir, 'linked', '000001.pack')).ino).toBe(shared.ino);
    // The parent goes on (in the same pack: the fork reads it only as far as it was).
    const versions = new Map([[hash, text]]);
    const next = `${text.slice(0, 5000)}// changed after the fork\n${text.slice(5100)}`;
    versions.set((await store.put(Buffer.from(next), 'big.ts')).hash, next);
    await store.sync();
    await store.close();
    await readsAll(new CheckpointStore(parentDir), versions);
    const fork = new CheckpointStore(forkDir);
    expect((await fork.read(hash)).toString()).toBe(text);
    expect((await fork.load()).blobs.size).toBe(1);
    rmSync(join(root, 'parent'), { recursive: true });
    expect((await new CheckpointStore(forkDir).read(hash)).toString()).toBe(text);
  });

  it('a fork made after the rewrite shares the smaller pack and keeps reading once its parent is deleted', async () => {
    const root = tmp();
    const parentDir = join(root, 'parent', 'checkpoints');
    const forkDir = join(root, 'fork', 'checkpoints');
    const store = new CheckpointStore(parentDir);
    const versions = await history(store, 5);
    await store.recompacted();
    expect(store.recompaction.done).toBe(2);
    await store.shareWith(forkDir);
    await store.close();
    const fork = new CheckpointStore(forkDir);
    expect(await fork.storedBytes()).toBe(folderBytes(forkDir));
    rmSync(join(root, 'parent'), { recursive: true });
    await readsAll(new CheckpointStore(forkDir), versions);
  });
});

/** A pid no process has: above Linux's largest (pid_max is at most 2^22). */
function deadPid(): number {
  return 999_999_999;
}
