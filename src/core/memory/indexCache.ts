import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { AsPlainObject } from 'minisearch';
import { writeFileAtomicSync } from '../store/atomicFile';

/**
 * The memory index of a workspace, kept between runs (docs/memory.md, "Search"): every memory
 * file's version (modification and change time, size, inode) with what was read from it, the
 * document frequency of each term, and MiniSearch's index itself. A run then reads only the
 * files whose version changed instead of every file (10,000 memories cost seconds per run when
 * the index was rebuilt each time).
 *
 * It lives in Keel's own storage (`<storage>/memory-index/<hash of the workspace's real path>.json`,
 * folder 0700, file 0600), never in the workspace: a repository cannot ship an index that says
 * its files hold something else. A cache that is missing, unreadable, of another version or of
 * another workspace is ignored (the index is built from the files and written again).
 */
export const INDEX_CACHE_VERSION = 1;

export interface CachedEntry {
  file: string;
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  ino: number;
  /** The memory read from it; absent for a skipped file. */
  memory?: { title: string; created: string; source?: string; tags: string[]; body: string };
  /** Why the file is not a memory (too large, not text). */
  skipped?: string;
}

export interface IndexCache {
  version: typeof INDEX_CACHE_VERSION;
  workspace: string;
  entries: CachedEntry[];
  df: [string, number][];
  mini: AsPlainObject;
}

/** Where the index of `workspace` is kept under `storageDir`. */
export function indexCacheFile(storageDir: string, workspace: string): string {
  let real = resolve(workspace);
  try {
    real = realpathSync(real);
  } catch {
    // Not there (yet): its path as given.
  }
  return join(storageDir, 'memory-index', `${createHash('sha256').update(real).digest('hex').slice(0, 32)}.json`);
}

/** The cache at `path` for `workspace`, or null when there is none usable. Never throws. */
export function readIndexCache(path: string, workspace: string): IndexCache | null {
  try {
    const data: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (!isCache(data) || data.workspace !== resolve(workspace)) return null;
    return data;
  } catch {
    return null;
  }
}

/** Writes the cache atomically, private to this user. Throws on I/O errors. */
export function writeIndexCache(path: string, cache: IndexCache): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(path, JSON.stringify(cache), 0o600);
}

function isCache(v: unknown): v is IndexCache {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as Record<string, unknown>;
  return (
    c.version === INDEX_CACHE_VERSION &&
    typeof c.workspace === 'string' &&
    Array.isArray(c.entries) &&
    c.entries.every(isEntry) &&
    Array.isArray(c.df) &&
    c.df.every((d) => Array.isArray(d) && typeof d[0] === 'string' && typeof d[1] === 'number') &&
    typeof c.mini === 'object' &&
    c.mini !== null
  );
}

function isEntry(v: unknown): v is CachedEntry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  if (typeof e.file !== 'string' || typeof e.mtimeMs !== 'number' || typeof e.ctimeMs !== 'number' || typeof e.size !== 'number' || typeof e.ino !== 'number') return false;
  if (e.skipped !== undefined) return typeof e.skipped === 'string';
  const m = e.memory as Record<string, unknown> | undefined;
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof m.title === 'string' &&
    typeof m.created === 'string' &&
    (m.source === undefined || typeof m.source === 'string') &&
    Array.isArray(m.tags) &&
    m.tags.every((t) => typeof t === 'string') &&
    typeof m.body === 'string'
  );
}
