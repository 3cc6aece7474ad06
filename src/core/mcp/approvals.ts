import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { readJsonOr, writePrivateJsonSync } from '../store/atomicFile';
import type { McpApprovalState, McpServerConfig, McpServerSpec } from './types';

/**
 * Approvals of project MCP servers, per workspace, kept in Keel's home (`<keel home>/
 * mcp-approvals.json`, mode 0600) — outside any repository, so a repository cannot approve its own
 * servers. An approval is for one exact server definition (its fingerprint: transport, command,
 * args, env, url, headers as written); a changed `.mcp.json` entry needs a new approval. A
 * rejection is remembered the same way so the person is not asked again. User and `--mcp-config`
 * servers need none. Reads never throw (an unreadable file means nothing is approved); writes
 * throw on I/O errors.
 */
export interface ApprovalRecord {
  decision: 'approved' | 'rejected';
  fingerprint: string;
  /** The command line or URL the person saw. */
  target: string;
  at: string;
}

const recordSchema = z.object({ decision: z.enum(['approved', 'rejected']), fingerprint: z.string(), target: z.string(), at: z.string() });
const fileSchema = z.object({ version: z.literal(1), workspaces: z.record(z.string(), z.record(z.string(), recordSchema)) });
type ApprovalFile = z.infer<typeof fileSchema>;

export function approvalsPath(keelHome: string): string {
  return join(keelHome, 'mcp-approvals.json');
}

/** The identity of a server definition as written (stable key order). */
export function fingerprint(spec: McpServerSpec): string {
  const canonical =
    spec.transport === 'stdio'
      ? ['stdio', spec.command, spec.args, sorted(spec.env)]
      : [spec.transport, spec.url, sorted(spec.headers)];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

function sorted(m: Record<string, string>): [string, string][] {
  return Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
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

export class McpApprovals {
  private readonly path: string;
  private readonly key: string;

  constructor(keelHome: string, workspace: string) {
    this.path = approvalsPath(keelHome);
    this.key = workspaceKey(workspace);
  }

  /** Whether `server` may start: user and cli servers always; project servers once approved. */
  stateOf(server: McpServerConfig): McpApprovalState {
    if (server.scope !== 'project') return 'not-needed';
    const rec = this.read().workspaces[this.key]?.[server.name];
    if (!rec || rec.fingerprint !== fingerprint(server.template)) return 'pending';
    return rec.decision;
  }

  /** Records the person's answer for this exact definition. Throws on I/O errors. */
  decide(server: McpServerConfig, decision: 'approved' | 'rejected', target: string): void {
    const file = this.read();
    const entries = (file.workspaces[this.key] ??= {});
    entries[server.name] = { decision, fingerprint: fingerprint(server.template), target, at: new Date().toISOString() };
    this.write(file);
  }

  /** Forgets the answer for `name` in this workspace (it will be asked again). True if there was one. */
  revoke(name: string): boolean {
    const file = this.read();
    const entries = file.workspaces[this.key];
    if (!entries || !(name in entries)) return false;
    delete entries[name];
    if (Object.keys(entries).length === 0) delete file.workspaces[this.key];
    this.write(file);
    return true;
  }

  /** The answers recorded for this workspace, by server name. */
  list(): Record<string, ApprovalRecord> {
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
