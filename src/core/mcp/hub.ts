import { randomUUID } from 'node:crypto';
import { toPromise } from 'xstate';
import type { ToolDefinition } from '../providers/types';
import { CALL_PREFIX, READ_PREFIX, type McpCallOutput, type McpReadOutput } from '../machines/mcpConnection/types';
import { McpApprovals } from './approvals';
import { describeTarget, loadMcpConfig } from './config';
import { ServerConnection } from './connection';
import { DEFAULT_MCP_LIMITS, limitsFromEnv, type McpLimits } from './limits';
import { modelToolName } from './names';
import { signInToMcpServer, signOutOfMcpServer } from './oauth/signIn';
import { FileMcpOAuthStore, type McpOAuthStore } from './oauth/store';
import type { McpToolOutcome, McpToolSource } from './toolSource';
import type { McpApprovalState, McpConfigProblem, McpConfigSet, McpServerConfig, McpServerStatus, McpToolInfo, McpTransportKind } from './types';

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

const MAX_DESCRIPTION = 2048;
/** A server's tools are sent with every model request: a schema larger than this is not sent. */
const MAX_SCHEMA_CHARS = 16_000;
/** At most this many tools of one server reach the model (in name order). */
export const MAX_TOOLS_PER_SERVER = 128;

/**
 * The definition the model gets for one server tool, bounded (a server's words are untrusted and
 * go into every request): the description cut at 2,048 characters; an input schema that is not an
 * object schema, or whose JSON exceeds 16,000 characters, replaced by an open object schema (the
 * description says so). Pure.
 */
export function boundedDefinition(name: string, server: string, tool: McpToolInfo): ToolDefinition {
  let schema: Record<string, unknown> = tool.inputSchema.type === 'object' ? tool.inputSchema : { type: 'object', properties: {} };
  let description = tool.description.length > MAX_DESCRIPTION ? `${tool.description.slice(0, MAX_DESCRIPTION)}…` : tool.description;
  if (!description) description = `${tool.name} (MCP server ${server})`;
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) {
    schema = { type: 'object', properties: {} };
    description += `\n(Its input schema was too large to include: pass the arguments its description names.)`;
  }
  return { name, description, input_schema: structuredClone(schema) };
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

  async toolDefinitions(): Promise<ToolDefinition[]> {
    await this.start();
    return this.readyTools().map(({ name, server, tool }) => {
      this.byModelName.set(name, { server, tool: tool.name });
      return boundedDefinition(name, server, tool);
    });
  }

  resolveTool(name: string): { server: string; tool: string } | undefined {
    if (!this.byModelName.has(name)) for (const t of this.readyTools()) this.byModelName.set(t.name, { server: t.server, tool: t.tool.name });
    return this.byModelName.get(name);
  }

  /** The tools of every ready server with their model-facing names (stable: sorted by name per server). */
  private readyTools(): { name: string; server: string; tool: McpToolInfo }[] {
    const out: { name: string; server: string; tool: McpToolInfo }[] = [];
    for (const c of this.connections.values()) {
      const tools = c.phase() === 'ready' ? (c.actor?.getSnapshot().context.initialized?.tools ?? []) : [];
      const taken = new Set<string>();
      if (tools.length > MAX_TOOLS_PER_SERVER && !this.warnedTools.has(c.name)) {
        this.warnedTools.add(c.name);
        this.log('warn', `MCP server ${c.name} offers ${tools.length} tools; the model gets the first ${MAX_TOOLS_PER_SERVER} by name`);
      }
      for (const tool of [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, MAX_TOOLS_PER_SERVER)) {
        const name = modelToolName(c.name, tool.name, taken);
        taken.add(name);
        out.push({ name, server: c.name, tool });
      }
    }
    return out;
  }

  async callTool(name: string, args: Record<string, unknown>, opts: { signal: AbortSignal; onProgress?: (line: string) => void }): Promise<McpToolOutcome> {
    const target = this.resolveTool(name);
    if (!target) return failure(`There is no MCP tool named ${name}.`, 'unknown MCP tool');
    const conn = this.connections.get(target.server);
    if (!conn?.actor) return failure(`MCP server ${target.server} is not available: ${conn?.config.problems.join('; ') || 'it is not configured'}. The call was not made.`, 'server unavailable');
    // At most one more try, and only when the HTTP session expired: the server never saw the call.
    for (let attempt = 0; attempt < 2; attempt++) {
      // Only a connection still connecting is waited for: a ready one is called at once.
      if (conn.isTransitional()) await conn.settled(this.limits.connectTimeoutMs + 5_000);
      if (conn.phase() !== 'ready') return failure(this.downMessage(conn, target.tool), `server ${conn.phase()}`);
      const event = (callId: string) => ({ type: 'CALL_TOOL' as const, callId, tool: target.tool, args, timeoutMs: this.limits.toolTimeoutMs });
      const out = await this.runChild<McpCallOutput>(conn, 'call', opts.signal, event, opts.onProgress);
      if (out && !out.ok && out.kind === 'session_expired' && attempt === 0) continue;
      return this.outcome(conn, target.tool, out, opts.signal);
    }
    return failure(this.downMessage(conn, target.tool), 'session expired');
  }

  /** Reads one resource of a ready server (for `@server:uri` mentions). Never rejects. */
  async readResource(server: string, uri: string, signal: AbortSignal): Promise<McpReadOutput> {
    const conn = this.connections.get(server);
    if (!conn?.actor) return { ok: false, kind: 'failed', message: `no MCP server named ${server}` };
    await this.start([server]);
    if (conn.phase() !== 'ready') return { ok: false, kind: 'connection_closed', message: this.downMessage(conn, uri) };
    const out = await this.runChild<McpReadOutput>(conn, 'read', signal, (callId) => ({ type: 'READ_RESOURCE', callId, uri, timeoutMs: this.limits.toolTimeoutMs }));
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
    if (conn.phase() !== 'ready') return { ok: false, message: this.downMessage(conn, `the prompt ${prompt}`) };
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

  private async runChild<T>(
    conn: ServerConnection,
    kind: 'call' | 'read',
    signal: AbortSignal,
    event: (callId: string) => Parameters<NonNullable<ServerConnection['actor']>['send']>[0],
    onProgress?: (line: string) => void,
  ): Promise<T | undefined> {
    const actor = conn.actor!;
    const callId = randomUUID();
    if (onProgress) conn.io?.progress.set(callId, (p) => onProgress(`progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? `: ${p.message}` : ''}\n`));
    try {
      if (signal.aborted) return undefined;
      actor.send(event(callId));
      const child = actor.getSnapshot().children[`${kind === 'call' ? CALL_PREFIX : READ_PREFIX}${callId}`];
      if (!child) return undefined;
      const cancel = () => actor.send({ type: 'CANCEL_CALL', callId });
      signal.addEventListener('abort', cancel, { once: true });
      try {
        return (await toPromise(child)) as T | undefined;
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    } finally {
      conn.io?.progress.delete(callId);
    }
  }

  private outcome(conn: ServerConnection, tool: string, out: McpCallOutput | undefined, signal: AbortSignal): McpToolOutcome {
    const server = conn.name;
    if (signal.aborted || (out && !out.ok && out.kind === 'cancelled')) return failure(`The call to ${tool} on MCP server ${server} was cancelled; the server was told to stop it.`, 'cancelled');
    if (!out) {
      const why = conn.actor?.getSnapshot().context.lastError ?? 'the connection ended';
      return failure(
        `The MCP server ${server} stopped during the call to ${tool} (${why}). Keel did not run the call again; the server is restarting. ` +
          'It may or may not have done part of the work — check before calling again.',
        'server exited mid-call',
      );
    }
    if (!out.ok) {
      const what =
        out.kind === 'timeout'
          ? `The call to ${tool} on MCP server ${server} got ${out.message}; the server was told to stop it.`
          : `The call to ${tool} on MCP server ${server} failed: ${out.message}.`;
      return failure(what, out.kind === 'timeout' ? 'timed out' : 'failed');
    }
    const onlyText = out.content.every((b) => b.type === 'text');
    const content = onlyText ? out.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') : out.content;
    return { content, isError: out.isError, summary: `${server}: ${out.summary}` };
  }

  private downMessage(conn: ServerConnection, tool: string): string {
    const status = this.statusOf(conn);
    const state =
      status.phase === 'restarting' && status.restartInMs !== null
        ? `restarting in ${Math.ceil(status.restartInMs / 1000)} s after: ${status.lastError ?? 'a failure'}`
        : status.phase === 'error'
          ? `in error: ${status.lastError ?? 'unknown'}${conn.actor && status.attempts > this.limits.maxRestartAttempts ? ' (it gave up restarting; the person can restart it)' : ''}`
          : status.phase === 'needsAuthorization'
            ? `waiting for the person to sign in: ${status.lastError ?? 'it requires authorization'}`
            : status.approval === 'pending'
            ? 'not approved for this workspace yet'
            : status.approval === 'rejected'
              ? 'rejected for this workspace'
              : status.phase;
    return `The MCP server ${conn.name} is not available (${state}), so ${tool} was not called. Continue without it or tell the person.`;
  }

  private statusOf(c: ServerConnection): McpServerStatus {
    const snapshot = c.actor?.getSnapshot();
    const ctx = snapshot?.context;
    const init = ctx?.initialized ?? null;
    const spec = c.config.resolved ?? c.config.template;
    return {
      name: c.name,
      scope: c.config.scope,
      transport: spec.transport,
      via: ctx?.via ?? null,
      target: targetOf(c.config),
      phase: c.phase(),
      state: c.state(),
      approval: this.approvalState.get(c.name) ?? 'pending',
      lastError: c.actor ? (ctx?.lastError ?? null) : c.config.problems.join('; '),
      stderrTail: c.io?.stderrTail() ?? [],
      attempts: ctx?.attempts ?? 0,
      restartInMs: c.restartAt !== null ? Math.max(0, c.restartAt - Date.now()) : null,
      tools: init?.tools ?? [],
      resources: init?.resources ?? [],
      prompts: init?.prompts ?? [],
      serverInfo: init?.serverInfo ?? null,
    };
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

function targetOf(config: McpServerConfig): string {
  return describeTarget(config.resolved ?? config.template);
}

/** `text` cut to about `maxTokens` (four characters a token), saying so. */
export function capText(text: string, maxTokens: number): string {
  if (text.length <= maxTokens * 4) return text;
  return `${text.slice(0, maxTokens * 4)}\n[Truncated: about ${Math.ceil(text.length / 4)} tokens; Keel keeps at most ${maxTokens} (MAX_MCP_OUTPUT_TOKENS).]`;
}

function failure(message: string, summary: string): McpToolOutcome {
  return { content: message, isError: true, summary };
}
