import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deflateRawSync } from 'node:zlib';
import { encodeRecord, frameFixed, hashContent, PACK_MAGIC, PACK_MAGIC_V1, PACK_MAGIC_V3 } from '../../../src/core/checkpoints/format';
import { CheckpointStore } from '../../../src/core/checkpoints/store';

/** Code-like text: `n` lines, different for each seed. */
const code = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => `  const item${(i * 7919 + seed) % 100_003} = await load${seed % 17}(options.${['path', 'size', 'mode', 'owner'][i % 4]}, ${i});\n`).join('');

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'keel-cpstore-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function packBytes(dir: string): number {
  return readdirSync(join(dir, 'packs')).reduce((n, f) => n + statSync(join(dir, 'packs', f)).size, 0);
}

/** Edits `text` `count` times (each replacing ~100 bytes with a new line), checkpointing each before-image as the Edit tool does. */
async function edit(store: CheckpointStore, text: string, count: number): Promise<{ text: string; changed: number; versions: { hash: string; text: string }[] }> {
  let changed = 0;
  const versions: { hash: string; text: string }[] = [];
  for (let k = 0; k < count; k++) {
    const before = Buffer.from(text);
    const { hash } = await store.put(before, 'src/big.ts');
    versions.push({ hash, text });
    const at = (k * 104_729) % (text.length - 200);
    const next = code(1, 1000 + k).slice(0, 100);
    text = text.slice(0, at) + next + text.slice(at + 100);
    await store.append({ type: 'mark', step: `toolu_01HxQm${k.toString(36).padStart(6, '0')}Zk`, path: 'src/big.ts', before: { kind: 'blob', hash, size: before.length }, after: { kind: 'blob', hash: hashContent(Buffer.from(text)), size: Buffer.byteLength(text) } });
    await store.sync();
    changed += 100;
  }
  return { text, changed, versions };
}

/** Real code to insert: this folder's sources, each edit a different stretch of them. */
const CORPUS = readdirSync(join(__dirname, '../../../src/core/checkpoints'))
  .sort()
  .map((f) => readFileSync(join(__dirname, '../../../src/core/checkpoints', f), 'utf8'))
  .join('');

describe('the checkpoint store', () => {
  it('keeps edits that insert varied real code at well under what format 1 framed alone', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    let text = CORPUS.slice(0, 60_000);
    await store.put(Buffer.from(text), 'src/big.ts');
    await store.sync();
    const first = packBytes(dir);
    for (let k = 0; k < 200; k++) {
      const at = (k * 104_729) % (text.length - 200);
      const from = 60_000 + ((k * 7_919) % (CORPUS.length - 60_200));
      text = text.slice(0, at) + CORPUS.slice(from, from + 100) + text.slice(at + 100);
      const { hash } = await store.put(Buffer.from(text), 'src/big.ts');
      await store.append({ type: 'mark', step: `toolu_01HxQm${k.toString(36).padStart(6, '0')}Zk`, path: 'src/big.ts', before: { kind: 'blob', hash, size: Buffer.byteLength(text) } });
      await store.sync();
    }
    // A delta Brotli-compressed alone before its group: ~150 B an edit (its bytes no longer match
    // the code of the groups before it).
    expect((packBytes(dir) - first) / 200).toBeLessThan(125);
    await store.close();
  });

  it('keeps each small edit of a large file at about what it changed, not at its bookkeeping', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const base = code(3000, 1);
    await store.put(Buffer.from(base), 'src/big.ts');
    await store.sync();
    const first = packBytes(dir);
    const { changed, versions } = await edit(store, base, 300);
    const perEdit = (packBytes(dir) - first) / 300;
    // A delta, its blob record, a mark with two content hashes and a tool call id, framed: 220 B
    // in format 1. Grouped and compressed against the steps before, well under that.
    expect(perEdit).toBeLessThan(1.4 * (changed / 300));
    await store.close();

    const again = new CheckpointStore(dir);
    const idx = await again.load();
    expect(idx.damage).toEqual([]);
    expect(idx.records.filter((r) => r.type === 'mark')).toHaveLength(300);
    for (const v of [versions[0]!, versions[150]!, versions[299]!]) expect((await again.read(v.hash)).toString()).toBe(v.text);
  });

  it('after a crash mid-write, keeps every group before the torn one and reads its versions', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const { versions } = await edit(store, code(2000, 2), 40);
    await store.close();
    const pack = join(dir, 'packs', readdirSync(join(dir, 'packs'))[0]!);
    truncateSync(pack, statSync(pack).size - 10);

    const again = new CheckpointStore(dir);
    const idx = await again.load();
    expect(idx.damage.join()).toMatch(/cut short.*what came before it is kept/);
    expect(idx.records.filter((r) => r.type === 'mark')).toHaveLength(39);
    expect((await again.read(versions[38]!.hash)).toString()).toBe(versions[38]!.text);
    // The lost one is stored again (in a pack of its own), never taken as kept.
    await again.put(Buffer.from(versions[39]!.text), 'src/big.ts');
    await again.sync();
    await again.close();
    expect((await new CheckpointStore(dir).read(versions[39]!.hash)).toString()).toBe(versions[39]!.text);
  });

  it('reads a format 1 store and adds to it in the current format', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'packs'), { recursive: true });
    const old = Buffer.from(code(50, 3));
    const hash = hashContent(old);
    const records = [
      encodeRecord({ type: 'blob', hash, size: old.length, encoding: 'raw', payload: old }),
      encodeRecord({ type: 'mark', step: 'toolu_old', path: 'a.ts', before: { kind: 'blob', hash, size: old.length } }),
    ];
    writeFileSync(join(dir, 'packs', '000001.pack'), Buffer.concat([PACK_MAGIC_V1, ...records.map(frameFixed)]));

    const store = new CheckpointStore(dir);
    expect((await store.read(hash)).equals(old)).toBe(true);
    const newer = Buffer.from(code(50, 4));
    await store.put(newer, 'b.ts');
    await store.sync();
    await store.close();

    expect(readFileSync(join(dir, 'packs', '000002.pack')).subarray(0, PACK_MAGIC.length).equals(PACK_MAGIC)).toBe(true);
    const again = new CheckpointStore(dir);
    const idx = await again.load();
    expect(idx.damage).toEqual([]);
    expect(idx.records).toEqual([expect.objectContaining({ type: 'mark', step: 'toolu_old', path: 'a.ts' })]);
    expect((await again.read(hash)).equals(old)).toBe(true);
    expect((await again.read(hashContent(newer))).equals(newer)).toBe(true);
  });

  it('names a pack written in a newer format instead of reading it as damage', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'packs'), { recursive: true });
    writeFileSync(join(dir, 'packs', '000001.pack'), Buffer.concat([Buffer.from('KEELCP9\n'), Buffer.alloc(40, 1)]));
    const idx = await new CheckpointStore(dir).load();
    expect(idx.damage).toEqual(['000001.pack: written in checkpoint format 9 by a newer Keel; this build reads formats 1, 2, 3 and 4; none of it is read']);
  });

  it('keeps a large blob in a frame of its own, between the small records around it, in order', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const big = Buffer.from(code(4000, 5));
    const small = Buffer.from('tiny');
    await store.append({ type: 'anchor', records: 1 });
    await store.put(small);
    await store.put(big);
    await store.append({ type: 'anchor', records: 2 });
    await store.sync();
    await store.close();
    const idx = await new CheckpointStore(dir).load();
    expect(idx.records).toEqual([
      { type: 'anchor', records: 1 },
      { type: 'anchor', records: 2 },
    ]);
    expect(idx.blobs.get(hashContent(big))?.at).toBeDefined();
    expect(idx.blobs.get(hashContent(small))?.inline).toBeDefined();
    const again = new CheckpointStore(dir);
    expect((await again.read(hashContent(big))).equals(big)).toBe(true);
    expect((await again.read(hashContent(small))).equals(small)).toBe(true);
  });

  it('after a write that failed, stores the content again in a new pack instead of taking it as kept', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const first = Buffer.from(code(20, 6));
    await store.put(first, 'a.ts');
    await store.sync();
    // The next write fails (a full disk): nothing of it reaches the file.
    const probe = await open(join(dir, 'packs', '000001.pack'), 'r');
    const handle = Object.getPrototypeOf(probe) as { writev: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    vi.spyOn(handle, 'writev').mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    const lost = Buffer.from(code(20, 7));
    await store.put(lost, 'a.ts');
    await expect(store.sync()).rejects.toThrow(/no space left/);

    const again = await store.put(lost, 'a.ts');
    expect(again.added).toBeGreaterThan(0);
    await store.sync();
    await store.close();
    expect(readdirSync(join(dir, 'packs')).sort()).toEqual(['000001.pack', '000002.pack']);
    const fresh = new CheckpointStore(dir);
    expect((await fresh.read(hashContent(lost))).equals(lost)).toBe(true);
    expect((await fresh.read(hashContent(first))).equals(first)).toBe(true);
  });

  it('keeps an Edit as a splice of its base, and names the blob before a mark in one byte (format 4)', async () => {
    const dir = tmp();
    const store = new CheckpointStore(dir);
    const base = code(400, 8);
    await store.put(Buffer.from(base), 'e.ts');
    await store.sync();
    const edited = `${base.slice(0, 5000)}const replaced = true;\n${base.slice(5100)}`;
    const { hash } = await store.put(Buffer.from(edited), 'e.ts');
    await store.append({ type: 'mark', step: 'toolu_e', path: 'e.ts', before: { kind: 'blob', hash, size: Buffer.byteLength(edited) }, after: { kind: 'absent' } });
    // Two stretches far apart: a delta says it in less than a splice of everything between.
    const twice = `${edited.slice(0, 100)}// one\n${edited.slice(120, 40_000)}// two\n${edited.slice(40_020)}`;
    const second = await store.put(Buffer.from(twice), 'e.ts');
    await store.sync();
    await store.close();
    const raw = readFileSync(join(dir, 'packs', '000001.pack'));
    expect(raw.subarray(0, PACK_MAGIC.length).toString('latin1')).toBe('KEELCP4\n');
    const again = new CheckpointStore(dir);
    const idx = await again.load();
    expect(idx.damage).toEqual([]);
    expect(idx.blobs.get(hash)?.encoding).toBe('splice');
    expect(idx.blobs.get(second.hash)?.encoding).toBe('delta');
    expect(idx.records).toEqual([{ type: 'mark', step: 'toolu_e', path: 'e.ts', before: { kind: 'blob', hash, size: Buffer.byteLength(edited) }, after: { kind: 'absent' } }]);
    expect((await again.read(hash)).toString()).toBe(edited);
    expect((await again.read(second.hash)).toString()).toBe(twice);
  });

  it('reads a format 3 pack (fixed frame headers, groups that declare their length)', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'packs'), { recursive: true });
    const content = Buffer.from(code(30, 9));
    const hash = hashContent(content);
    const bodies = [
      encodeRecord({ type: 'blob', hash, size: content.length, encoding: 'raw', payload: content }),
      encodeRecord({ type: 'mark', step: 'toolu_v3', path: 'v3.ts', before: { kind: 'blob', hash, size: content.length } }),
    ];
    const varint = (n: number) => {
      const out: number[] = [];
      for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
      return Buffer.from([...out, n]);
    };
    const groupRaw = Buffer.concat(bodies.flatMap((b) => [varint(b.length), b]));
    const group = Buffer.concat([Buffer.from([5]), varint(groupRaw.length), deflateRawSync(groupRaw)]);
    writeFileSync(join(dir, 'packs', '000001.pack'), Buffer.concat([PACK_MAGIC_V3, frameFixed(group)]));
    const store = new CheckpointStore(dir);
    const idx = await store.load();
    expect(idx.damage).toEqual([]);
    expect(idx.records).toEqual([{ type: 'mark', step: 'toolu_v3', path: 'v3.ts', before: { kind: 'blob', hash, size: content.length } }]);
    expect((await store.read(hash)).equals(content)).toBe(true);
  });
});
