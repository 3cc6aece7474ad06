import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { readJsonOr, writePrivateJsonSync } from '../store/atomicFile';
import type { ConfiguredHook } from './types';

/**
 * Approvals of a workspace's own hooks (`.claude/` and `.keel/` settings files), kept in Keel's
 * home (`<keel home>/hook-approvals.json`, mode 0600) — outside any repository, so a repository
 * cannot approve its own hooks. An approval is for one exact hook (its fingerprint: event,
 * matcher, command, args, timeout, `if`); a changed or added hook needs a new approval, while the
 * unchanged ones stay approved. User hooks need none. Reads never throw (an unreadable file means
 * nothing is approved); writes throw on I/O errors.
 */
export interface HookApprovalRecord {
  event: string;
  matcher: string;
  command: string;
  source: string;
  at: string;
}

const recordSchema = z.object({ event: z.string(), matcher: z.string(), command: z.string(), source: z.string(), at: z.string() });
const fileSchema = z.object({ version: z.literal(1), workspaces: z.record(z.string(), z.record(z.string(), recordSchema)) });
type ApprovalFile = z.infer<typeof fileSchema>;

export function hookApprovalsPath(keelHome: string): string {
  return join(keelHome, 'hook-approvals.json');
}

/** The workspace as a key: its real path (a symlinked checkout is the same workspace). */
export function workspaceKey(workspace: string): string {
  const abs = resolve(workspace);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

export class HookApprovals {
  private readonly path: string;
  private readonly key: string;

  constructor(keelHome: string, workspace: string) {
    this.path = hookApprovalsPath(keelHome);
    this.key = workspaceKey(workspace);
  }

  /** Whether `hook` may run: user hooks always; the workspace's own once approved in this exact form. */
  mayRun(hook: ConfiguredHook): boolean {
    if (hook.scope === 'user') return true;
    return this.read().workspaces[this.key]?.[hook.fingerprint] !== undefined;
  }

  /** The workspace hooks among `hooks` that are not approved (in their current form). */
  pending(hooks: readonly ConfiguredHook[]): ConfiguredHook[] {
    const approved = this.read().workspaces[this.key] ?? {};
    return hooks.filter((h) => h.scope !== 'user' && approved[h.fingerprint] === undefined);
  }

  /** Records approval of exactly these hooks. Throws on I/O errors. */
  approve(hooks: readonly ConfiguredHook[]): void {
    const file = this.read();
    const entries = (file.workspaces[this.key] ??= {});
    const at = new Date().toISOString();
    for (const h of hooks) {
      if (h.scope === 'user') continue;
      entries[h.fingerprint] = { event: h.event, matcher: h.matcher ?? '', command: h.command, source: h.source, at };
    }
    this.write(file);
  }

  /** Forgets every approval of this workspace (its hooks will be asked about again). Returns how many there were. */
  revokeAll(): number {
    const file = this.read();
    const n = Object.keys(file.workspaces[this.key] ?? {}).length;
    if (n === 0) return 0;
    delete file.workspaces[this.key];
    this.write(file);
    return n;
  }

  /** The approvals recorded for this workspace, by fingerprint. */
  list(): Record<string, HookApprovalRecord> {
    return { ...(this.read().workspaces[this.key] ?? {}) };
  }

  private read(): ApprovalFile {
    // Missing, unreadable or not valid: nothing approved.
    return readJsonOr<ApprovalFile>(this.path, fileSchema, () => ({ version: 1, workspaces: {} }));
  }

  private write(file: ApprovalFile): void {
    writePrivateJsonSync(this.path, file);
  }
}
