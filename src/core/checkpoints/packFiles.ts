import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ContentHash } from './format';
import { scanPack, type PackScan, type ScannedRecord } from './pack';
import { processAlive } from '../locks/processAlive';

/**
 * The files of a task's checkpoints folder (store.ts has its layout): which packs there are, in
 * reading order, how far a linked one may be read, and the index all of them make together.
 */

export type BlobRecord = Extract<ScannedRecord, { type: 'blob' }>;

/** Everything a task's packs say, in the order it happened. */
export interface CheckpointIndex {
  records: ScannedRecord[];
  blobs: Map<ContentHash, BlobRecord>;
  /** Damage found (a torn tail after a crash, a checksum failure): what was before it is kept. */
  damage: string[];
  /** Bytes of this task's own packs and of the packs it links (shared with a parent or fork). */
  ownBytes: number;
  linkedBytes: number;
}

export interface LinkedPack {
  file: string;
  bytes: number;
}

/**
 * Removes what a recompaction left when its process died before the rename
 * (`<pack>.<pid>.recompact`, the pid no longer running): the pack itself is whole.
 */
export function sweepRecompactions(packs: string): void {
  for (const name of safeReaddir(packs)) {
    const m = /^\d{6}\.pack\.(\d+)\.recompact$/.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    try {
      unlinkSync(join(packs, name));
    } catch {
      /* gone already, or not ours to remove: left */
    }
  }
}

export function nextPackNumber(dir: string): number {
  let max = 0;
  for (const name of safeReaddir(dir)) {
    const m = /^(\d{6})\.pack$/.exec(name);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}

export function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** This task's packs in reading order (linked first, each with how far it may be read), for sharing. */
export async function listPacks(dir: string): Promise<{ path: string; limit: number }[]> {
  const out: { path: string; limit: number }[] = [];
  for (const l of readLinked(dir)) {
    const path = join(dir, l.file);
    if (existsSync(path)) out.push({ path, limit: l.bytes });
  }
  for (const name of ownPackNames(dir)) out.push({ path: join(dir, 'packs', name), limit: Number.MAX_SAFE_INTEGER });
  return out;
}

export function ownPackNames(dir: string): string[] {
  return safeReaddir(join(dir, 'packs'))
    .filter((n) => /^\d{6}\.pack$/.test(n))
    .sort();
}

export function readLinked(dir: string): LinkedPack[] {
  let text: string;
  try {
    text = readFileSync(join(dir, 'linked.json'), 'utf8');
  } catch {
    return [];
  }
  const parsed = JSON.parse(text) as { packs?: unknown };
  if (!Array.isArray(parsed.packs)) throw new Error(`${join(dir, 'linked.json')} is not a list of packs`);
  return parsed.packs.map((p: unknown) => {
    const rec = p as { file?: unknown; bytes?: unknown };
    if (typeof rec.file !== 'string' || !/^linked\/\d{6}\.pack$/.test(rec.file) || typeof rec.bytes !== 'number') throw new Error(`${join(dir, 'linked.json')} names a pack it should not`);
    return { file: rec.file, bytes: rec.bytes };
  });
}

export async function readIndex(dir: string): Promise<CheckpointIndex> {
  const idx: CheckpointIndex = { records: [], blobs: new Map(), damage: [], ownBytes: 0, linkedBytes: 0 };
  const add = (scan: PackScan, name: string) => {
    for (const r of scan.records) {
      if (r.type === 'blob') {
        if (!idx.blobs.has(r.hash)) idx.blobs.set(r.hash, r);
      } else idx.records.push(r);
    }
    if (scan.damage) idx.damage.push(scan.unreadable ? `${name}: ${scan.damage}; none of it is read` : `${name}: ${scan.damage} at byte ${scan.validBytes}; what came before it is kept`);
  };
  let linked: LinkedPack[] = [];
  try {
    linked = readLinked(dir);
  } catch (err) {
    idx.damage.push((err as Error).message);
  }
  for (const l of linked) {
    const path = join(dir, l.file);
    try {
      const scan = await scanPack(path, l.bytes);
      add(scan, l.file);
      idx.linkedBytes += statSync(path).size;
    } catch (err) {
      idx.damage.push(`${l.file}: ${(err as Error).message}`);
    }
  }
  for (const name of ownPackNames(dir)) {
    const path = join(dir, 'packs', name);
    try {
      add(await scanPack(path), basename(path));
      idx.ownBytes += statSync(path).size;
    } catch (err) {
      idx.damage.push(`${name}: ${(err as Error).message}`);
    }
  }
  return idx;
}
