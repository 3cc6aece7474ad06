import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, openSync, readFileSync, realpathSync, statSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * Which workspace an approval belongs to (docs/permissions.md, "Trust"): its real path, plus the
 * identity of the repository checked out there, so that a different repository later cloned (or
 * unpacked) at the same path inherits nothing.
 *
 * - **The repository's stamp**: device, inode and birth time of its git folder (`.git`, or the
 *   folder a `.git` file points to) — or of the workspace folder when it is not in a repository.
 *   A clone or an unpacked archive creates that folder anew, and user space cannot set a birth
 *   time.
 * - **A private marker**: at approval a random id is written to `<git folder>/keel-trust-id`
 *   (0600) and kept in the approval. A clone never carries it (git copies objects and refs, not
 *   the git folder's other files), and an archive could only carry it by knowing the id, which
 *   lives in the person's private approval store. This also covers file systems that record no
 *   birth time. A folder outside any repository has no marker: its stamp alone decides.
 *
 * Reads never throw.
 */
export interface RepositoryIdentity {
  /** `git:<dev>:<ino>:<birth ms>` or `folder:<dev>:<ino>:<birth ms>`. */
  stamp: string;
  /** The git folder, when the workspace is inside a repository. */
  gitDir: string | null;
}

export const MARKER_FILE = 'keel-trust-id';

/** The workspace as a key: its real path (a symlinked checkout is the same workspace). */
export function workspaceKey(workspace: string): string {
  const abs = resolve(workspace);
  try {
    return realpathSync.native(abs);
  } catch {
    return abs;
  }
}

/** The repository identity of `workspace` now. */
export function repositoryIdentity(workspace: string): RepositoryIdentity {
  const root = workspaceKey(workspace);
  const gitDir = findGitDir(root);
  const target = gitDir ?? root;
  try {
    const st = statSync(target, { bigint: true });
    const birth = st.birthtimeNs > 0n ? (st.birthtimeNs / 1000n).toString() : '0';
    return { stamp: `${gitDir ? 'git' : 'folder'}:${st.dev}:${st.ino}:${birth}`, gitDir };
  } catch {
    return { stamp: 'missing', gitDir };
  }
}

/** The marker in the repository's git folder, or null when there is none (or no repository). */
export function readMarker(identity: RepositoryIdentity): string | null {
  if (!identity.gitDir) return null;
  try {
    const text = readFileSync(join(identity.gitDir, MARKER_FILE), 'utf8').trim();
    return /^[0-9a-f]{32}$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

/**
 * The marker to record with an approval: the one already there, else a new one written to the
 * git folder (0600, never through a link). Null outside a repository or when it cannot be written.
 */
export function ensureMarker(identity: RepositoryIdentity): string | null {
  if (!identity.gitDir) return null;
  const existing = readMarker(identity);
  if (existing) return existing;
  const id = randomBytes(16).toString('hex');
  try {
    const fd = openSync(join(identity.gitDir, MARKER_FILE), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, `${id}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(join(identity.gitDir, MARKER_FILE), 0o600);
    return id;
  } catch {
    return null;
  }
}

/** The git folder of the repository holding `dir` (walking up, as git does), or null. */
function findGitDir(dir: string): string | null {
  let cur = dir;
  for (;;) {
    const dotGit = join(cur, '.git');
    try {
      const st = statSync(dotGit);
      if (st.isDirectory()) return dotGit;
      if (st.isFile()) {
        const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'));
        if (m) {
          const p = m[1]!.trim();
          return isAbsolute(p) ? p : resolve(cur, p);
        }
      }
    } catch {
      // No .git here: look further up.
    }
    const up = dirname(cur);
    if (up === cur) return null;
    cur = up;
  }
}
