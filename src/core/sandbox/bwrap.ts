import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';

/**
 * bubblewrap: whether it runs here, and the argv that runs a command inside it. A command sees
 * the whole file system read-only except the workspace and `writablePaths` (and the temp folder,
 * a private tmpfs), in its own pid namespace and without network: only loopback inside its own
 * network namespace, plus — when the allow-list is not empty — the proxy's Unix socket.
 */
export type SandboxAvailability = { available: true; bwrap: string } | { available: false; reason: string };

let cached: Map<string, SandboxAvailability> | undefined;

/**
 * Whether bwrap runs here, checked with a real run because user namespaces can be disabled even
 * when bwrap is installed. Cached per path for the life of the process. Throws only for a path
 * no process could be started from (a NUL byte).
 */
export function detectSandbox(bwrapPath?: string): SandboxAvailability {
  cached ??= new Map();
  const key = bwrapPath ?? '';
  const hit = cached.get(key);
  if (hit) return hit;
  const result = probe(bwrapPath);
  cached.set(key, result);
  return result;
}

function probe(bwrapPath: string | undefined): SandboxAvailability {
  if (process.platform !== 'linux') return { available: false, reason: `the sandbox needs Linux with bubblewrap; this is ${process.platform}` };
  const bwrap = bwrapPath ?? (existsSync('/usr/bin/bwrap') ? '/usr/bin/bwrap' : 'bwrap');
  const probe = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--die-with-parent', '/bin/sh', '-c', 'exit 0'];
  const r = spawnSync(bwrap, probe, { encoding: 'utf8', timeout: 10_000 });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return { available: false, reason: code === 'ENOENT' ? 'bubblewrap (bwrap) is not installed; on Debian/Ubuntu: apt-get install bubblewrap' : `bwrap could not start: ${r.error.message}` };
  }
  if (r.status !== 0) return { available: false, reason: `bwrap is installed but cannot create a sandbox here (${(r.stderr || '').trim() || `exit ${r.status}`}); user namespaces may be disabled` };
  return { available: true, bwrap };
}

/**
 * True when `command` starts with one of the excluded prefixes at a word boundary and does
 * nothing else (no shell operator, substitution or line break). A trailing `:*` or ` *` on a
 * prefix (rule style, as Claude Code writes `docker *`) means the same as the bare prefix.
 */
export function isExcluded(command: string, excluded: readonly string[]): boolean {
  const c = command.trim();
  if (/[;&|`$<>()\n\\]/.test(c)) return false;
  return excluded.some((e) => {
    const p = e.trim().replace(/(:\*|\s+\*)$/, '').trim();
    return p.length > 0 && (c === p || c.startsWith(`${p} `));
  });
}

/** How a sandboxed command reaches the network: the proxy's socket, and the helper that forwards to it. */
export interface SandboxNetwork {
  /** The folder holding the proxy's Unix socket; bound read-only at the same path inside. */
  socketDir: string;
  /** Prepended to the shell: the forwarder (forwarder.ts) that execs the command. */
  launcher: string[];
  /** Extra bwrap options (variables only the launcher needs). */
  bwrapOptions?: string[];
}

/**
 * The argv that runs `shell -c command` inside bwrap: `/` read-only, `/dev`, `/proc`, a private
 * temp folder, the workspace and `writablePaths` writable, no network namespace access; with
 * `network`, the proxy's socket folder is bound in and `launcher` runs the shell.
 */
export function bwrapCommand(o: { bwrap: string; shell: string; command: string; workspace: string; writablePaths?: readonly string[]; network?: SandboxNetwork }): { file: string; args: string[] } {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', resolve(tmpdir())];
  for (const p of [o.workspace, ...(o.writablePaths ?? [])]) args.push('--bind', resolve(p), resolve(p));
  // After the tmpfs: the socket folder may live under the temp folder.
  if (o.network) args.push('--ro-bind', o.network.socketDir, o.network.socketDir, ...(o.network.bwrapOptions ?? []));
  args.push('--unshare-net', '--unshare-pid', '--die-with-parent', '--chdir', resolve(o.workspace), ...(o.network?.launcher ?? []), o.shell, '-c', o.command);
  return { file: o.bwrap, args };
}
