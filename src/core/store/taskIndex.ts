import { readFileSync } from 'node:fs';
import { writeFileAtomic } from './atomicFile';
import { PRIVATE_FILE } from './privateFiles';
import { SCHEMA_VERSION, type TaskMeta } from './types';

/**
 * `index.json`: a cache of every task's meta, keyed by id, with the meta file's mtime when it was
 * read. It is never trusted blindly: a listing checks each task folder's meta mtime and re-reads
 * what changed, so an index that is stale (another process wrote a meta), missing or corrupt is
 * simply rebuilt by scanning. Only listings and deletions write it.
 */
export interface IndexFile {
  schemaVersion: number;
  tasks: Record<string, { metaMtimeMs: number; meta: TaskMeta }>;
}

/** The index, or null when it is missing or unreadable (the caller rebuilds it). */
export function readIndex(path: string): IndexFile | null {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<IndexFile>;
    if (v.schemaVersion !== SCHEMA_VERSION || typeof v.tasks !== 'object' || v.tasks === null) return null;
    return { schemaVersion: SCHEMA_VERSION, tasks: v.tasks };
  } catch {
    return null;
  }
}

export function writeIndex(path: string, index: IndexFile): Promise<void> {
  return writeFileAtomic(path, JSON.stringify(index), PRIVATE_FILE);
}
