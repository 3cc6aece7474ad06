import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';

/**
 * The few file-system questions the permission checks ask, so that one decision can share the
 * answers: a command of a hundred parts asks about the same directories a hundred times. A
 * cached view belongs to one decision only (the disk may change between decisions).
 */
export interface FsView {
  /** What is at `p` without following a final symlink. */
  lstat(p: string): FsEntry;
  /** Names in directory `p` (symlinks followed), or null when it cannot be listed. */
  readdir(p: string): string[] | null;
  /** True when `p` leads (through symlinks) to a directory. */
  isDirectory(p: string): boolean;
}

export type FsEntry = { kind: 'dir' | 'file' | 'other' | 'missing' } | { kind: 'link'; target: string };

function lstatEntry(p: string): FsEntry {
  try {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return { kind: 'link', target: readlinkSync(p) };
    return { kind: st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other' };
  } catch {
    return { kind: 'missing' }; // ENOENT, ENOTDIR, EACCES…: the kernel cannot go there either
  }
}

function readdirOrNull(p: string): string[] | null {
  try {
    return readdirSync(p).sort();
  } catch {
    return null;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The disk as it is now, nothing remembered. */
export const liveFs: FsView = { lstat: lstatEntry, readdir: readdirOrNull, isDirectory: isDir };

/** A view that remembers every answer: for one decision. */
export function cachedFs(): FsView {
  const entries = new Map<string, FsEntry>();
  const dirs = new Map<string, string[] | null>();
  const isDirs = new Map<string, boolean>();
  const memo = <T>(m: Map<string, T>, p: string, f: (p: string) => T): T => {
    if (m.has(p)) return m.get(p) as T;
    const v = f(p);
    m.set(p, v);
    return v;
  };
  return {
    lstat: (p) => memo(entries, p, lstatEntry),
    readdir: (p) => memo(dirs, p, readdirOrNull),
    isDirectory: (p) => memo(isDirs, p, isDir),
  };
}
