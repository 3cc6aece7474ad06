import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Keel's own files are this user's alone (issue 21 item 11): transcripts, approvals and locks are
 * never readable by another local user. Every folder Keel makes under its home or a store root is
 * created 0700 and every file 0600 (modes given at creation, so no instant exists in which a
 * file is readable by others), and a root made by an older Keel is tightened on start.
 */
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/**
 * Makes `root` private: 0700. When it was looser than that (a folder an older Keel made, or one
 * another program made), everything below it is tightened too — folders 0700, regular files
 * 0600 — without following links. A root already private is not walked: nothing below it can be
 * reached by anyone else, so starting stays cheap however many tasks it holds. Returns what
 * could not be changed (a file owned by another user…), for the caller to report; never throws
 * for a missing root.
 */
export function tightenTree(root: string): string[] {
  let mode: number;
  try {
    const st = lstatSync(root);
    if (!st.isDirectory()) return [];
    mode = st.mode;
  } catch {
    return [];
  }
  if ((mode & 0o077) === 0) return [];
  const problems: string[] = [];
  walk(root, problems);
  return problems;
}

function walk(path: string, problems: string[]): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return; // removed meanwhile
  }
  const want = st.isDirectory() ? PRIVATE_DIR : st.isFile() ? PRIVATE_FILE : null;
  // Links and sockets are left as they are (a link's target is not Keel's to change).
  if (want === null) return;
  if ((st.mode & 0o777) !== want && (st.mode & 0o077) !== 0) {
    try {
      chmodSync(path, want);
    } catch (err) {
      problems.push(`${path}: ${errorMessage(err)}`);
    }
  }
  if (!st.isDirectory()) return;
  let names: string[] = [];
  try {
    names = readdirSync(path);
  } catch (err) {
    problems.push(`${path}: ${errorMessage(err)}`);
  }
  for (const name of names) walk(join(path, name), problems);
}
