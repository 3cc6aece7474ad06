import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { resolvePhysical } from '../permissions/physical';
import { displayPath } from './paths';
import type { PermissionSubject } from './types';

/**
 * Where a Write or Edit really lands, and the write itself, so that the file written is the one
 * the permission check looked at.
 *
 * The check resolves the path physically (symlinks in any component, dangling ones included:
 * writing through `src/link -> ../.keel/settings.local.json` creates that settings file), and the
 * tool's subject records that target. At invoke time the tool resolves again and refuses when the
 * answer changed (a symlink created or swapped after the decision, perhaps while the person was
 * reading the prompt). It then writes to the resolved path itself, opening the last component
 * with O_NOFOLLOW, so a symlink slipped in between this resolution and the open makes the write
 * fail instead of following it. (A swap of a parent directory in that last microsecond is not
 * caught: Node has no openat(); the sandbox is the defence in depth.)
 */
export type WriteTarget = { ok: true; path: string } | { ok: false; message: string };

/** The physical file `abs` leads to now, or why it cannot be written. */
export function resolveWriteTarget(abs: string): WriteTarget {
  const r = resolvePhysical(abs);
  if (!r.ok) return { ok: false, message: `Cannot tell which file ${abs} leads to: ${r.reason}.` };
  return { ok: true, path: r.path };
}

/** A summary suffix naming the real target when the path goes through a symlink. */
export function throughLink(workspace: string, abs: string): string {
  const t = resolveWriteTarget(abs);
  return t.ok && t.path !== abs ? ` (through a symlink: writes ${displayPath(workspace, t.path)})` : '';
}

/**
 * The target to write for a call whose approved subject was `approved` (when the runtime passes
 * it): the same physical file, or an error saying it moved.
 */
export function approvedWriteTarget(abs: string, approved: PermissionSubject | undefined): WriteTarget {
  const now = resolveWriteTarget(abs);
  if (!now.ok) return now;
  if (approved?.kind !== 'write') return now;
  const i = approved.paths.indexOf(abs);
  const then = i >= 0 ? approved.targets?.[i] : undefined;
  if (then !== undefined && then !== now.path) {
    return { ok: false, message: `Not written: ${abs} now leads to ${now.path}, not to ${then} as when it was approved (a symlink was created or changed in between). Check the path and try again.` };
  }
  return now;
}

/** Writes `content` to `target` (a physical path), creating parents, never following a final symlink. */
export async function writeNoFollow(target: string, content: string): Promise<void> {
  await fs.mkdir(path.dirname(target), { recursive: true });
  const handle = await fs.open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666);
  try {
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}
