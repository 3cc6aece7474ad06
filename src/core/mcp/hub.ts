import type { ToolDefinition } from '../providers/types';
import type { McpReadOutput } from '../machines/mcpConnection/types';
import { McpApprovals } from './approvals';
import { loadMcpConfig } from './config';
import { ServerConnection } from './connection';
import { DEFAULT_MCP_LIMITS, limitsFromEnv, type McpLimits } from './limits';
import { callOutcome, capText, failure, serverStatus, targetOf, unavailableMessage } from './hubReport';
import { boundedDefinition, MAX_TOOLS_PER_SERVER, modelTools, type ModelTool } from './modelTools';
import { signInToMcpServer, signOutOfMcpServer } from './oauth/signIn';
import { FileMcpOAuthStore, type McpOAuthStore } from './oauth/store';
import type { McpCallOptions, McpToolOutcome, McpToolSource } from './toolSource';
import type { McpApprovalState, McpConfigProblem, McpConfigSet, McpServerStatus, McpTransportKind } from './types';

/**
 * The MCP hub of one host (a VS Code window, a CLI process): one connection per configured
 * server, shared by every task. It starts servers when a task first needs their tools (project
 * servers only once approved), exposes their tools as `mcp__<server>__<tool>`, routes calls
 * through each server's `mcpConnection` machine, and reports every server's live state.
 * Contract: no method rejects except `approve`/`reject`/`revoke` (their file write may fail);
 * `dispose` ends every server process it started.
 */
export interface McpApprovalRequest {
  server: string;
  transport: McpTransportKind;
  /** The exact command line or URL. */
  target: string;
  /** The `.mcp.json` it comes from. */
  source: string;
}

export interface McpApprover {
  /** The person's answer about one project server; `later` leaves it pending (asked again next time). */
  approve(request: McpApprovalRequest): Promise<'approve' | 'reject' | 'later'>;
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
  /** Asks about unapproved project servers; without one they stay pending (listed, never started). */
  approver?: McpApprover;
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
  private readonly approvals: McpApprovals;
  private readonly approvalState = new Map<string, McpApprovalState>();
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
    this.approvals = new McpApprovals(opts.keelHome, opts.workspace);
    this.oauthStore = opts.oauthStore ?? new FileMcpOAuthStore(opts.keelHome);
    const disabled = new Set(opts.disabled ?? []);
    for (const server of config.servers) {
      this.approvalState.set(server.name, this.approvals.stateOf(server));
      const io = {
        cwd: opts.workspace,
        limits: this.limits,
        env,
        ...(opts.secretValues ? { secretValues: opts.secretValues } : {}),
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

  /** Approves a project server for this workspace (its exact definition) and starts it. Throws on I/O errors. */
  approve(name: string): void {
    const c = this.connections.get(name);
    if (!c) throw new Error(`no MCP server named ${name}`);
    if (c.config.scope === 'project') this.approvals.decide(c.config, 'approved', targetOf(c.config));
    this.approvalState.set(name, c.config.scope === 'project' ? 'approved' : 'not-needed');
    this.changed();
    if (c.phase() === 'disconnected') c.actor?.send({ type: 'CONNECT' });
  }

  /** Rejects a project server for this workspace; it is closed if running. Throws on I/O errors. */
  reject(name: string): void {
    const c = this.connections.get(name);
    if (!c || c.config.scope !== 'project') return;
    this.approvals.decide(c.config, 'rejected', targetOf(c.config));
    this.approvalState.set(name, 'rejected');
    c.actor?.send({ type: 'STOP' });
    this.changed();
  }

  /** Forgets the answer about a project server; it stops and will be asked about again. */
  revoke(name: string): boolean {
    const c = this.connections.get(name);
    const had = this.approvals.revoke(name);
    if (c && c.config.scope === 'project') {
      this.approvalState.set(name, 'pending');
      c.actor?.send({ type: 'STOP' });
      this.changed();
    }
    return had;
  }

  /** Ends every server (stdio processes included). Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await Promise.all([...this.connections.values()].map((c) => c.dispose()));
    this.listeners.clear();
  }

  private async askIfPending(c: ServerConnection): Promise<void> {
    if (this.approvalState.get(c.name) !== 'pending' || !this.opts.approver || !c.config.resolved) return;
    let asking = this.asking.get(c.name);
    if (!asking) {
      asking = (async () => {
        try {
          const answer = await this.opts.approver!.approve({ server: c.name, transport: c.config.resolved!.transport, target: targetOf(c.config), source: c.config.source });
          if (answer === 'approve') this.approve(c.name);
          else if (answer === 'reject') this.reject(c.name);
        } catch (err) {
          this.log('warn', `MCP server ${c.name}: the approval could not be recorded (${(err as Error).message})`);
        } finally {
          this.asking.delete(c.name);
        }
      })();
      this.asking.set(c.name, asking);
    }
    await asking;
  }

  private mayStart(c: ServerConnection): boolean {
    const a = this.approvalState.get(c.name);
    return !this.disposed && c.actor !== null && (a === 'approved' || a === 'not-needed');
  }

  private statusOf(c: ServerConnection): McpServerStatus {
    return serverStatus(c, this.approvalState.get(c.name) ?? 'pending');
  }

  private unavailable(conn: ServerConnection, what: string): string {
    return unavailableMessage(conn, this.statusOf(conn), what, this.limits.maxRestartAttempts);
  }

  private changed(): void {
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch (err) {
        this.log('warn', `an MCP status listener threw: ${(err as Error).message}`);
      }
    }
  }
}

function progressLine(p: { progress: number; total?: number; message?: string }): string {
  return `progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? `: ${p.message}` : ''}\n`;
}
