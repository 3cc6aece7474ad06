import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';

/**
 * The Bash sandbox: on Linux with bubblewrap, a command sees the whole file system read-only
 * except the workspace (and /tmp, a private tmpfs), with no network unless allowed. Checked
 * with a real run of bwrap, because user namespaces can be disabled even when bwrap is installed.
 */
export interface SandboxSettings {
  enabled: boolean;
  /** Command prefixes that run outside the sandbox (`docker`, `npm publish`). */
  excludedCommands?: string[];
  allowNetwork?: boolean;
  /** Extra writable folders (additionalDirectories). */
  writablePaths?: string[];
  /** Default /usr/bin/bwrap, else bwrap on PATH. */
  bwrapPath?: string;
}

export type SandboxAvailability = { available: true; bwrap: string } | { available: false; reason: string };

let cached: Map<string, SandboxAvailability> | undefined;

/** Whether bwrap runs here. Cached per path; never throws. */
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

/** True when `command` starts with one of the excluded prefixes at a word boundary and does nothing else. */
export function isExcluded(command: string, excluded: readonly string[]): boolean {
  const c = command.trim();
  if (/[;&|`$<>()\n\\]/.test(c)) return false;
  return excluded.some((e) => {
    const p = e.trim().replace(/:\*$/, '');
    return p.length > 0 && (c === p || c.startsWith(`${p} `));
  });
}

/**
 * The argv that runs `shell -c command` inside bwrap: `/` read-only, `/dev`, `/proc`, a private
 * `/tmp`, the workspace and `writablePaths` writable, network off unless `allowNetwork`.
 */
export function sandboxedCommand(bwrap: string, shell: string, command: string, workspace: string, settings: SandboxSettings): { file: string; args: string[] } {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', resolve(tmpdir())];
  for (const p of [workspace, ...(settings.writablePaths ?? [])]) args.push('--bind', resolve(p), resolve(p));
  if (!settings.allowNetwork) args.push('--unshare-net');
  args.push('--unshare-pid', '--die-with-parent', '--chdir', resolve(workspace), shell, '-c', command);
  return { file: bwrap, args };
}
