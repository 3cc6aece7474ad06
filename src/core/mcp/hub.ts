import type { ToolDefinition } from '../providers/types';
import type { McpReadOutput } from '../machines/mcpConnection/types';
import { homedir } from 'node:os';
import { changedRunFile, isApproved, mcpItem, type TrustItem } from '../trust/items';
import type { WorkspaceTrust } from '../trust/workspaceTrust';
import { loadMcpConfig } from './config';
import { ServerConnection } from './connection';
import { DEFAULT_MCP_LIMITS, limitsFromEnv, type McpLimits } from './limits';
import { callOutcome, capText, failure, serverStatus, unavailableMessage } from './hubReport';
import { boundedDefinition, MAX_TOOLS_PER_SERVER, modelTools, type ModelTool } from './modelTools';
import { signInToMcpServer, signOutOfMcpServer } from './oauth/signIn';
import { FileMcpOAuthStore, type McpOAuthStore } from './oauth/store';
import type { McpCallOptions, McpToolOutcome, McpToolSource } from './toolSource';
import type { McpApprovalState, McpConfigProblem, McpConfigSet, McpServerStatus } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The MCP hub of one host (a VS Code window, a CLI process): one connection per configured
 * server, shared by every task. It starts servers when a task first needs their tools (project
 * servers only as the person approved them: docs/permissions.md, "Trust"), exposes their tools as
 * `mcp__<server>__<tool>`, routes calls through each server's `mcpConnection` machine, and
 * reports every server's live state. A project server's approval covers its command, its env and
 * the content of every file it runs; it is checked again before every start (restarts too), and
 * a server whose files changed stays stopped until approved again.
 * Contract: no method rejects except `revoke` (its file write may fail); `dispose` ends every
 * server process it started.
 */
export interface McpTrustReviewer {
  /**
   * Shows the person everything the workspace provides, for the one approval (the host's dialog);
   * resolves once they answered (approved, declined or closed it). `reason` says what asked.
   */
  review(reason: string): Promise<void>;
}

export interface McpHubOptions {
  workspace: string;
  /** Keel's home: the user's `mcp.json` and the approvals live there. */
  keelHome: string;
  /** `--mcp-config` files. */
  extraConfigFiles?: string[];
  /** A configuration given directly (instead of reading the files). */
  config?: McpConfigSet;
  /** Keel's environment: limits and `${VAR}` expansion read it; stdio servers inherit it without provider keys. */
  env?: NodeJS.ProcessEnv;
  limits?: Partial<McpLimits>;
  secretValues?: () => readonly string[];
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * The person's approvals of the workspace. Without it, project servers never start (listed as
   * waiting for approval).
   */
  trust?: WorkspaceTrust;
  /** Asks the person to review the workspace when a project server would start unapproved; without one it stays pending. */
  reviewer?: McpTrustReviewer;
  /** The settings files' `env` as the person allowed it (given to stdio servers under their own `env`). */
  extraEnv?: () => Readonly<Record<string, string>>;
  /** Home of `~` in the files servers run (default: the OS home). */
  home?: string;
  /** Servers the person turned off. */
  disabled?: readonly string[];
  clientInfo?: { name: string; version: string };
  /** OAuth tokens of remote servers (default: `$KEEL_HOME/mcp-oauth.json`; VS Code: SecretStorage). */
  oauthStore?: McpOAuthStore;
}

export class McpHub implements McpToolSource {
  readonly limits: McpLimits;
  readonly problems: McpConfigProblem[];
  private readonly connections = new Map<string, ServerConnection>();
  private readonly asking = new Map<string, Promise<void>>();
  /** Model-facing name → server and tool; names stay known while their server is down. */
  private readonly byModelName = new Map<string, { server: string; tool: string }>();
  private readonly listeners = new Set<() => void>();
  private readonly warnedTools = new Set<string>();
  /** Servers a model request already waited for while they started (each is waited for once). */
  private readonly waitedFor = new Set<string>();
  private readonly log: NonNullable<McpHubOptions['log']>;
  private readonly oauthStore: McpOAuthStore;
  private disposed = false;

  constructor(private readonly opts: McpHubOptions) {
    const env = opts.env ?? process.env;
    const fromEnv = limitsFromEnv(env, { ...DEFAULT_MCP_LIMITS, ...opts.limits });
    this.limits = fromEnv.limits;
    this.log = opts.log ?? (() => {});
    for (const p of fromEnv.problems) this.log('warn', p);
    const config = opts.config ?? loadMcpConfig({ workspace: opts.workspace, keelHome: opts.keelHome, ...(opts.extraConfigFiles ? { extraFiles: opts.extraConfigFiles } : {}), env });
    this.problems = config.problems;
    this.oauthStore = opts.oauthStore ?? new FileMcpOAuthStore(opts.keelHome);
    const disabled = new Set(opts.disabled ?? []);
    for (const server of config.servers) {
      const io = {
        cwd: opts.workspace,
        limits: this.limits,
        env,
        ...(opts.secretValues ? { secretValues: opts.secretValues } : {}),
        ...(opts.extraEnv ? { extraEnv: opts.extraEnv } : {}),
        // Every start of a project server (restarts too) checks its approval against the files now.
        ...(server.scope === 'project' ? { mayStart: () => this.refusal(server.name) } : {}),
        clientInfo: opts.clientInfo ?? { name: 'keel', version: '0.1.0' },
        oauthStore: this.oauthStore,
        log: this.log,
      };
      this.connections.set(server.name, new ServerConnection(server, io, this.limits, disabled.has(server.name), () => this.changed()));
    }
  }

  /** True when no server is configured (a host may skip MCP entirely). */
  get empty(): boolean {
    return this.connections.size === 0;
  }

  /** Every server with its live state, in configuration order. */
  status(): McpServerStatus[] {
    return [...this.connections.values()].map((c) => this.statusOf(c));
  }

  /** Calls `listener` after any server's state changes. Returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Starts every server that may start (asking the approver about pending project servers) and
   * waits, at most the connect timeout, until none is still connecting. `only`: just these.
   */
  async start(only?: readonly string[]): Promise<void> {
    const targets = [...this.connections.values()].filter((c) => !only || only.includes(c.name));
    await Promise.all(targets.map((c) => this.askIfPending(c)));
    for (const c of targets) if (this.mayStart(c) && c.phase() === 'disconnected') c.actor?.send({ type: 'CONNECT' });
    await Promise.all(targets.map((c) => c.settled(this.limits.connectTimeoutMs + 5_000)));
  }

  /**
   * The tools of the ready servers, for a model request. Starts every server that may start; a
   * server still starting is waited for once, at most `startupWaitMs` (not the connect timeout):
   * a slow or hung server never holds a request up for long; it is named in a warning, and its
   * tools join the first request after it is ready.
   */
  async toolDefinitions(): Promise<ToolDefinition[]> {
    const targets = [...this.connections.values()];
    await Promise.all(targets.map((c) => this.askIfPending(c)));
    for (const c of targets) if (this.mayStart(c) && c.phase() === 'disconnected') c.actor?.send({ type: 'CONNECT' });
    const starting = targets.filter((c) => c.isTransitional() && !this.waitedFor.has(c.name));
    for (const c of starting) this.waitedFor.add(c.name);
    if (starting.length > 0) {
      await Promise.all(starting.map((c) => c.settled(this.limits.startupWaitMs)));
      for (const c of starting) {
        if (!c.isTransitional()) continue;
        const after = `${Math.round(this.limits.startupWaitMs / 100) / 10} s`;
        this.log('warn', `MCP server ${c.name} is still starting after ${after}; this request goes without its tools, which join a later one once it is ready (KEEL_MCP_STARTUP_WAIT)`);
      }
    }
    return this.readyTools().map(({ name, server, tool }) => {
      this.byModelName.set(name, { server, tool: tool.name });
      return boundedDefinition(name, server, tool);
    });
  }

  resolveTool(name: string): { server: string; tool: string } | undefined {
    if (!this.byModelName.has(name)) for (const t of this.readyTools()) this.byModelName.set(t.name, { server: t.server, tool: t.tool.name });
    return this.byModelName.get(name);
  }

  knownTools(): { name: string; server: string; tool: string }[] {
    return [...this.byModelName].map(([name, t]) => ({ name, ...t }));
  }

  startingServers(): string[] {
    return [...this.connections.values()].filter((c) => c.isTransitional()).map((c) => c.name);
  }

  /** The tools of every ready server with their model-facing names (modelTools.ts). */
  private readyTools(): ModelTool[] {
    return modelTools(this.connections.values(), (server, count) => {
      if (this.warnedTools.has(server)) return;
      this.warnedTools.add(server);
      this.log('warn', `MCP server ${server} offers ${count} tools; the model gets the first ${MAX_TOOLS_PER_SERVER} by name`);
    });
  }

  async callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolOutcome> {
    const target = this.resolveTool(name);
    if (!target) return failure(`There is no MCP tool named ${name}.`, 'unknown MCP tool');
    const conn = this.connections.get(target.server);
    if (!conn?.actor) return failure(`MCP server ${target.server} is not available: ${conn?.config.problems.join('; ') || 'it is not configured'}. The call was not made.`, 'server unavailable');
    // At most one more try, and only when the HTTP session expired: the server never saw the call.
    for (let attempt = 0; attempt < 2; attempt++) {
      // Only a connection still connecting is waited for: a ready one is called at once.
      if (conn.isTransitional()) await conn.settled(this.limits.connectTimeoutMs + 5_000);
      if (conn.phase() !== 'ready') return failure(this.unavailable(conn, target.tool), `server ${conn.phase()}`);
      const onProgress = opts.onProgress;
      const out = await conn.run('call', { tool: target.tool, args, timeoutMs: this.limits.toolTimeoutMs }, opts.signal, onProgress && ((p) => onProgress(progressLine(p))));
      if (out && !out.ok && out.kind === 'session_expired' && attempt === 0) continue;
      return callOutcome(conn, target.tool, out, opts.signal);
    }
    return failure(this.unavailable(conn, target.tool), 'session expired');
  }

  /** Reads one resource of a ready server (for `@server:uri` mentions). Never rejects. */
  async readResource(server: string, uri: string, signal: AbortSignal): Promise<McpReadOutput> {
    const conn = this.connections.get(server);
    if (!conn?.actor) return { ok: false, kind: 'failed', message: `no MCP server named ${server}` };
    await this.start([server]);
    if (conn.phase() !== 'ready') return { ok: false, kind: 'connection_closed', message: this.unavailable(conn, uri) };
    const out = await conn.run('read', { uri, timeoutMs: this.limits.toolTimeoutMs }, signal);
    if (out) return out;
    return { ok: false, kind: signal.aborted ? 'cancelled' : 'connection_closed', message: signal.aborted ? 'cancelled' : (conn.actor.getSnapshot().context.lastError ?? 'the connection ended') };
  }

  /**
   * The text of prompt `prompt` of `server` with `args` (for `/mcp__server__prompt` commands),
   * capped like a tool result. Never rejects.
   */
  async getPrompt(server: string, prompt: string, args: Record<string, string>, signal: AbortSignal): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
    const conn = this.connections.get(server);
    if (!conn?.actor || !conn.io) return { ok: false, message: `no MCP server named ${server}` };
    await this.start([server]);
    if (conn.phase() !== 'ready') return { ok: false, message: this.unavailable(conn, `the prompt ${prompt}`) };
    const out = await conn.io.getPrompt(prompt, args, this.limits.toolTimeoutMs, signal);
    return out.ok ? { ok: true, text: capText(out.text, this.limits.maxOutputTokens) } : out;
  }

  /** The person's restart: a server in error (or any state) connects again, its failed attempts forgotten. */
  restart(name: string): void {
    const c = this.connections.get(name);
    if (!c?.actor || !this.mayStart(c)) return;
    c.actor.send(c.phase() === 'disconnected' ? { type: 'CONNECT' } : { type: 'RESTART' });
  }

  /**
   * Signs the person in to remote server `name` with OAuth (see `signInToMcpServer`): `open`
   * shows the authorization URL (the host decides how — VS Code asks first, then opens the
   * browser; the CLI prints it). On success the tokens are stored under the server's URL and the
   * connection starts again. Rejects with a clear message (not a remote server, a timeout, a
   * refusal); the connection's state is unchanged then.
   */
  async signIn(name: string, open: (url: URL) => void | Promise<void>, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<'signed-in' | 'already'> {
    const c = this.connections.get(name);
    if (!c) throw new Error(`no MCP server named ${name}`);
    const spec = c.config.resolved;
    if (!spec) throw new Error(`MCP server ${name} cannot be used: ${c.config.problems.join('; ')}`);
    if (spec.transport === 'stdio') throw new Error(`MCP server ${name} runs a local command (stdio): there is nothing to sign in to`);
    if (!this.mayStart(c)) throw new Error(`MCP server ${name} is not approved for this workspace: approve it first`);
    const result = await signInToMcpServer({
      serverUrl: spec.url,
      transport: spec.transport,
      headers: spec.headers,
      store: this.oauthStore,
      open,
      ...opts,
      ...(this.opts.clientInfo ? { clientInfo: this.opts.clientInfo } : {}),
    });
    const phase = c.phase();
    c.actor?.send(phase === 'disconnected' ? { type: 'CONNECT' } : phase === 'needsAuthorization' ? { type: 'SIGNED_IN' } : { type: 'RESTART' });
    return result;
  }

  /**
   * Forgets the OAuth tokens and registration Keel keeps for remote server `name` (by its URL);
   * a running connection is closed and will ask for a sign-in. True when something was stored.
   * Rejects when the store cannot be read or written.
   */
  async signOut(name: string): Promise<boolean> {
    const c = this.connections.get(name);
    if (!c) throw new Error(`no MCP server named ${name}`);
    const spec = c.config.resolved ?? c.config.template;
    if (spec.transport === 'stdio') throw new Error(`MCP server ${name} runs a local command (stdio): there is nothing to sign out of`);
    const had = await signOutOfMcpServer(this.oauthStore, spec.url);
    if (c.actor && c.phase() !== 'disconnected' && c.phase() !== 'disabled') c.actor.send({ type: 'RESTART' });
    return had;
  }

  disable(name: string): void {
    this.connections.get(name)?.actor?.send({ type: 'DISABLE' });
  }

  enable(name: string): void {
    const c = this.connections.get(name);
    if (c?.actor && this.mayStart(c)) c.actor.send({ type: 'ENABLE' });
  }

  /**
   * The approvals changed (the person approved or revoked the workspace): project servers
   * approved now start, those no longer approved stop.
   */
  approvalsChanged(): void {
    if (this.disposed) return;
    for (const c of this.connections.values()) {
      if (c.config.scope !== 'project' || !c.actor) continue;
      const state = this.approvalOf(c);
      if (state === 'approved' && c.phase() === 'disconnected') c.actor.send({ type: 'CONNECT' });
      else if (state !== 'approved' && c.phase() !== 'disconnected' && c.phase() !== 'disabled') c.actor.send({ type: 'STOP' });
    }
    this.changed();
  }

  /** Forgets the approval of a project server (its item); it stops and waits for approval again. Throws on I/O errors. */
  async revoke(name: string): Promise<boolean> {
    const c = this.connections.get(name);
    if (!c || c.config.scope !== 'project' || !this.opts.trust) return false;
    const n = await this.opts.trust.revoke([`mcp:${name}`]);
    c.actor?.send({ type: 'STOP' });
    this.changed();
    return n > 0;
  }

  /** The trust item of a project server as it is now (its files read again). */
  trustItem(name: string): TrustItem | null {
    const c = this.connections.get(name);
    if (!c || c.config.scope !== 'project') return null;
    return mcpItem(c.config, '.mcp.json', { workspace: this.opts.workspace, home: this.opts.home ?? homedir(), ...(process.env.PATH !== undefined ? { pathEnv: process.env.PATH } : {}) });
  }

  /** Ends every server (stdio processes included). Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await Promise.all([...this.connections.values()].map((c) => c.dispose()));
    this.listeners.clear();
  }

  private async askIfPending(c: ServerConnection): Promise<void> {
    if (this.approvalOf(c) !== 'pending' || !c.config.resolved) return;
    const item = this.trustItem(c.name);
    if (item) this.opts.trust?.reportHeld([item]);
    if (!this.opts.reviewer) return;
    // One review at a time, whichever server asked: the person sees the whole workspace once.
    let asking = this.asking.get('review');
    if (!asking) {
      asking = (async () => {
        try {
          await this.opts.reviewer!.review(`the MCP server ${c.name} would start`);
        } catch (err) {
          this.log('warn', `the approval of this workspace could not be recorded (${errorMessage(err)})`);
        } finally {
          this.asking.delete('review');
        }
      })();
      this.asking.set('review', asking);
    }
    await asking;
  }

  /** How a server stands with the person's approvals now (a project server's files are read again). */
  private approvalOf(c: ServerConnection): McpApprovalState {
    if (c.config.scope !== 'project') return 'not-needed';
    const item = this.trustItem(c.name);
    if (!item || !this.opts.trust) return 'pending';
    if (item.blocked?.length) return 'rejected';
    return isApproved(this.opts.trust, item) ? 'approved' : 'pending';
  }

  /** Why a project server may not start now, or null (checked right before each start). */
  private refusal(name: string): string | null {
    const c = this.connections.get(name);
    if (!c) return 'it is not configured';
    const item = this.trustItem(name);
    if (!item || !this.opts.trust || !isApproved(this.opts.trust, item)) {
      if (item) this.opts.trust?.reportHeld([item]);
      return `the MCP server ${name} of this workspace is not approved as it is now (its command, env or the files it runs changed, or it was never approved)`;
    }
    const changed = changedRunFile(item.runs);
    return changed ? `${changed} changed while the server was starting` : null;
  }

  private mayStart(c: ServerConnection): boolean {
    const a = this.approvalOf(c);
    return !this.disposed && c.actor !== null && (a === 'approved' || a === 'not-needed');
  }

  private statusOf(c: ServerConnection): McpServerStatus {
    return serverStatus(c, this.approvalOf(c));
  }

  private unavailable(conn: ServerConnection, what: string): string {
    return unavailableMessage(conn, this.statusOf(conn), what, this.limits.maxRestartAttempts);
  }

  private changed(): void {
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch (err) {
        this.log('warn', `an MCP status listener threw: ${errorMessage(err)}`);
      }
    }
  }
}

function progressLine(p: { progress: number; total?: number; message?: string }): string {
  return `progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? `: ${p.message}` : ''}\n`;
}
