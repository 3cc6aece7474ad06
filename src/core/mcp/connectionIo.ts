import { Client, SdkError, SdkErrorCode, SdkHttpError, SSEClientTransport, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Prompt, Resource, Tool } from '@modelcontextprotocol/client';
import { fromCallback, fromPromise, type EventObject } from 'xstate';
import { McpConnectFailure, type McpCallOutput, type McpCallsEvent, type McpConnectionEvent, type McpInitialized, type McpReadOutput } from '../machines/mcpConnection/types';
import type { McpLimits } from './limits';
import { KeelOAuthProvider } from './oauth/provider';
import type { McpOAuthStore } from './oauth/store';
import { convertToolResult } from './results';
import { serverEnvironment } from './serverEnv';
import { StartedTransport } from './startedTransport';
import type { McpPromptInfo, McpResourceInfo, McpServerSpec, McpToolInfo } from './types';
import { KeelStdioTransport } from './stdioTransport';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The real I/O of one `mcpConnection` machine, on the official MCP SDK (`@modelcontextprotocol/
 * client`): it owns the current Client and transport and provides the machine's actors. One
 * instance per configured server, for the life of the hub; each (re)connect replaces the client.
 */
export interface ConnectionIoOptions {
  name: string;
  spec: McpServerSpec;
  /** Working folder of a stdio server (the workspace). */
  cwd: string;
  limits: McpLimits;
  /** Keel's environment (stdio servers get it without Keel's provider keys). */
  env: NodeJS.ProcessEnv;
  /** Keys Keel holds (from SecretStorage): a variable holding one is not passed to a server. */
  secretValues?: () => readonly string[];
  /** The settings files' `env` as the person allowed it, under the server's own `env`. */
  extraEnv?: () => Readonly<Record<string, string>>;
  /**
   * Checked right before every start of a stdio process (restarts included): why it may not start
   * now (a project server whose approval no longer covers the files it runs), or null.
   */
  mayStart?: () => string | null;
  clientInfo: { name: string; version: string };
  /**
   * Where OAuth tokens of remote servers are kept. With one, an `http`/`sse` server without an
   * `Authorization` header of its own gets Keel's OAuth provider (stored tokens sent, refreshed by
   * the SDK; a sign-in needed is the `needsAuthorization` state). Without one, a 401 is an error.
   */
  oauthStore?: McpOAuthStore;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

export type ProgressListener = (p: { progress: number; total?: number; message?: string }) => void;

export class McpConnectionIo {
  private client: Client | null = null;
  private transport: StartedTransport | null = null;
  /** The OAuth provider of the current remote connection (null: none, or credentials in headers). */
  private oauth: KeelOAuthProvider | null = null;
  private notify: ((e: McpConnectionEvent) => void) | null = null;
  private pending: McpConnectionEvent[] = [];
  private readonly stderr: string[] = [];
  /** Progress listeners by call id (registered by the hub before it sends CALL_TOOL). */
  readonly progress = new Map<string, ProgressListener>();

  constructor(private readonly opts: ConnectionIoOptions) {}

  /** The last lines the server wrote to stderr, oldest first. */
  stderrTail(): string[] {
    return [...this.stderr];
  }

  /** The actors of the machine, for `mcpConnectionMachine.provide({ actors })`. */
  actors() {
    return {
      openStdio: fromPromise<void, { server: string }>(({ signal }) => this.openStdio(signal)),
      openStreamableHttp: fromPromise<void, { server: string }>(({ signal }) => this.openHttp(signal)),
      openSse: fromPromise<void, { server: string }>(({ signal }) => this.openSse(signal)),
      initialize: fromPromise<McpInitialized, { server: string; via: 'stdio' | 'streamableHttp' | 'sse' }>(({ input, signal }) => this.initialize(input.via, signal)),
      watchConnection: fromCallback<EventObject, { server: string }>(({ sendBack }) => this.watch(sendBack)),
      closeConnection: fromPromise<void, { server: string }>(() => this.close()),
      runCalls: fromCallback<McpCallsEvent, { server: string }>(({ receive, sendBack }) => this.runCalls(receive, sendBack)),
    };
  }

  /**
   * The `runCalls` actor: each CALL_TOOL / READ_RESOURCE runs on the current client with the
   * caller's signal (a controller of its own only when the event brings none) and is answered
   * with CALL_DONE / READ_DONE; CANCEL_CALL aborts a call that has its own controller (one with
   * the caller's signal was aborted by the caller). Once stopped (the machine left `ready`), late
   * answers are dropped and its own controllers are aborted.
   */
  private runCalls(receive: (listener: (e: McpCallsEvent) => void) => void, sendBack: (e: McpConnectionEvent) => void): () => void {
    let stopped = false;
    const own = new Map<string, AbortController>();
    receive((e) => {
      if (e.type === 'CANCEL_CALL') {
        own.get(e.callId)?.abort();
        own.delete(e.callId);
        return;
      }
      let signal = e.signal;
      if (!signal) {
        const controller = new AbortController();
        own.set(e.callId, controller);
        signal = controller.signal;
      }
      const answer =
        e.type === 'CALL_TOOL'
          ? this.callTool(e, signal).then((output): McpConnectionEvent => ({ type: 'CALL_DONE', callId: e.callId, output }))
          : this.readResource(e.uri, e.timeoutMs, signal).then((output): McpConnectionEvent => ({ type: 'READ_DONE', callId: e.callId, output }));
      void answer.then((done) => {
        own.delete(e.callId);
        if (!stopped) sendBack(done);
      });
    });
    return () => {
      stopped = true;
      for (const c of own.values()) c.abort();
      own.clear();
    };
  }

  private async openStdio(signal: AbortSignal): Promise<void> {
    await this.close();
    abandonIfAborted(signal);
    const spec = this.spec('stdio');
    this.stderr.length = 0;
    const refused = this.opts.mayStart?.() ?? null;
    if (refused) throw new McpConnectFailure(refused, false, false);
    // Keel's stdio transport (the SDK's, reading stdout in linear time: a result of tens of MB is
    // read and then capped like any other, never a closed connection).
    const inner = new KeelStdioTransport({
      command: spec.command,
      args: spec.args,
      env: serverEnvironment(this.opts.env, { ...(this.opts.extraEnv?.() ?? {}), ...spec.env }, this.opts.secretValues?.() ?? []),
      cwd: this.opts.cwd,
      maxMessageBytes: this.opts.limits.maxMessageBytes,
    });
    inner.stderr.on('data', (chunk: Buffer) => this.onStderr(chunk.toString('utf8')));
    const transport = new StartedTransport(inner);
    this.transport = transport;
    try {
      await transport.start();
    } catch (err) {
      this.transport = null;
      throw new McpConnectFailure(`could not start ${spec.command}: ${errorMessage(err)}`);
    }
    // The machine left `stdio` while the process started (STOP, DISABLE): end it now, or it
    // would outlive the state that owned it.
    if (signal.aborted) await this.close();
  }

  private async openHttp(signal: AbortSignal): Promise<void> {
    await this.close();
    abandonIfAborted(signal);
    const spec = this.spec('http');
    const inner = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, ...this.authOption(spec) });
    this.transport = new StartedTransport(inner, 'streamableHttp');
    await this.transport.start();
  }

  private async openSse(signal: AbortSignal): Promise<void> {
    await this.close();
    abandonIfAborted(signal);
    const spec = this.spec('http');
    const inner = new SSEClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, ...this.authOption(spec) });
    const transport = new StartedTransport(inner, 'sse');
    this.transport = transport;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new McpConnectFailure(`the SSE stream did not open within ${secs(this.opts.limits.connectTimeoutMs)}`)), this.opts.limits.connectTimeoutMs);
      signal.addEventListener('abort', () => reject(new McpConnectFailure('cancelled')), { once: true });
    });
    try {
      await Promise.race([transport.start(), timeout]);
    } catch (err) {
      throw connectFailure(err, 'sse', this.opts.limits.connectTimeoutMs, this.stderrTail(), this.oauth);
    } finally {
      clearTimeout(timer);
    }
    if (signal.aborted) await this.close();
  }

  /**
   * Keel's OAuth provider for a remote server (a new one per connection, reading the store
   * afresh): none when the configuration sends its own `Authorization` header — the person chose
   * those credentials — or when the host keeps no OAuth store.
   */
  private authOption(spec: Extract<McpServerSpec, { transport: 'http' | 'sse' }>): { authProvider?: KeelOAuthProvider } {
    this.oauth = null;
    const store = this.opts.oauthStore;
    if (!store || Object.keys(spec.headers).some((h) => h.toLowerCase() === 'authorization')) return {};
    this.oauth = new KeelOAuthProvider({ serverUrl: spec.url, store, mode: 'connect' });
    return { authProvider: this.oauth };
  }

  private async initialize(via: 'stdio' | 'streamableHttp' | 'sse', signal: AbortSignal): Promise<McpInitialized> {
    const transport = this.transport;
    if (!transport) throw new McpConnectFailure('no transport is open');
    const client = new Client(this.opts.clientInfo, {
      capabilities: {},
      listChanged: {
        tools: { onChanged: (err, tools) => !err && tools && this.emit({ type: 'TOOLS_UPDATED', tools: tools.map(toolInfo) }) },
        resources: { onChanged: (err, resources) => !err && resources && this.emit({ type: 'RESOURCES_UPDATED', resources: resources.map(resourceInfo) }) },
        prompts: { onChanged: (err, prompts) => !err && prompts && this.emit({ type: 'PROMPTS_UPDATED', prompts: prompts.map(promptInfo) }) },
      },
    });
    const timeout = this.opts.limits.connectTimeoutMs;
    try {
      await client.connect(transport, { timeout, signal });
      this.client = client;
      const caps = client.getServerCapabilities() ?? {};
      const [tools, resources, prompts] = await Promise.all([
        caps.tools ? client.listTools(undefined, { timeout, signal }) : { tools: [] },
        caps.resources ? client.listResources(undefined, { timeout, signal }).catch(() => ({ resources: [] })) : { resources: [] },
        caps.prompts ? client.listPrompts(undefined, { timeout, signal }).catch(() => ({ prompts: [] })) : { prompts: [] },
      ]);
      const info = client.getServerVersion();
      return {
        serverInfo: info ? { name: info.name, version: info.version } : null,
        tools: tools.tools.map(toolInfo),
        resources: resources.resources.map(resourceInfo),
        prompts: prompts.prompts.map(promptInfo),
      };
    } catch (err) {
      throw connectFailure(err, via, timeout, this.stderrTail(), this.oauth);
    }
  }

  private watch(sendBack: (e: McpConnectionEvent) => void): () => void {
    const client = this.client;
    this.notify = sendBack;
    for (const e of this.pending.splice(0)) sendBack(e);
    if (client) {
      client.onclose = () => {
        const tail = this.stderr.at(-1);
        const exited = this.opts.spec.transport === 'stdio' ? ' (the server process exited)' : '';
        sendBack({ type: 'CONNECTION_LOST', reason: `the connection to the server closed${exited}${tail ? `; its last output: ${tail}` : ''}` });
      };
      client.onerror = (err) => this.opts.log('warn', `MCP server ${this.opts.name}: ${err.message}`);
    }
    return () => {
      this.notify = null;
      if (client) {
        client.onclose = undefined;
        client.onerror = undefined;
      }
    };
  }

  private emit(e: McpConnectionEvent): void {
    if (this.notify) this.notify(e);
    else this.pending.push(e);
  }

  /** Closes the client and its transport (a stdio server is ended: stdin closed, then signals). */
  async close(): Promise<void> {
    const client = this.client;
    const transport = this.transport;
    this.client = null;
    this.transport = null;
    this.pending = [];
    try {
      if (client) await client.close();
      else if (transport) await transport.close();
    } catch (err) {
      this.opts.log('warn', `MCP server ${this.opts.name}: closing failed: ${errorMessage(err)}`);
    }
  }

  private async callTool(input: { callId: string; tool: string; args: Record<string, unknown>; timeoutMs: number }, signal: AbortSignal): Promise<McpCallOutput> {
    const client = this.client;
    if (!client) return { ok: false, kind: 'connection_closed', message: 'the server is not connected' };
    const listener = this.progress.get(input.callId);
    try {
      const result = await client.callTool(
        { name: input.tool, arguments: input.args },
        {
          signal,
          timeout: input.timeoutMs,
          ...(listener ? { onprogress: (p) => listener({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) }) } : {}),
        },
      );
      const converted = convertToolResult(result, this.opts.limits.maxOutputTokens);
      return { ok: true, content: converted.content, isError: converted.isError, summary: converted.summary };
    } catch (err) {
      return this.callFailure(err, input.timeoutMs, signal);
    }
  }

  /**
   * Gets one prompt of the connected server (a `/mcp__server__prompt` command), its messages as
   * text: a prompt is a template the person chose, not a call the model made, so it runs outside
   * the machine's call states (like a list refresh). Never rejects.
   */
  async getPrompt(name: string, args: Record<string, string>, timeoutMs: number, signal: AbortSignal): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
    const client = this.client;
    if (!client) return { ok: false, message: 'the server is not connected' };
    try {
      const r = await client.getPrompt({ name, arguments: args }, { signal, timeout: timeoutMs });
      const parts = r.messages.map((m) => {
        const c = m.content;
        if (c.type === 'text') return c.text;
        if (c.type === 'resource' && 'text' in c.resource && typeof c.resource.text === 'string') return `Resource <${c.resource.uri}>:\n${c.resource.text}`;
        if (c.type === 'resource_link') return `Resource link: ${c.name} <${c.uri}>`;
        return `[${c.type} content of the prompt not shown]`;
      });
      return { ok: true, text: parts.join('\n\n') };
    } catch (err) {
      const f = this.callFailure(err, timeoutMs, signal);
      return { ok: false, message: f.message };
    }
  }

  private async readResource(uri: string, timeoutMs: number, signal: AbortSignal): Promise<McpReadOutput> {
    const client = this.client;
    if (!client) return { ok: false, kind: 'connection_closed', message: 'the server is not connected' };
    try {
      const r = await client.readResource({ uri }, { signal, timeout: timeoutMs });
      return { ok: true, contents: r.contents.map((c) => ({ uri: c.uri, ...(c.mimeType ? { mimeType: c.mimeType } : {}), ...('text' in c ? { text: c.text } : { blob: c.blob }) })) };
    } catch (err) {
      return this.callFailure(err, timeoutMs, signal);
    }
  }

  private callFailure(err: unknown, timeoutMs: number, signal: AbortSignal): Extract<McpCallOutput, { ok: false }> {
    if (signal.aborted) return { ok: false, kind: 'cancelled', message: 'cancelled' };
    const signIn = this.oauth?.signInRequired;
    if (signIn || err instanceof UnauthorizedError) {
      // The tokens stopped working and the SDK could not refresh them: only the person can help.
      const reason = signIn ? signIn.message : 'the server refused the stored OAuth token (HTTP 401)';
      this.emit({ type: 'AUTHORIZATION_REQUIRED', reason });
      return { ok: false, kind: 'failed', message: `${reason}; the person must sign in again (the MCP page's Sign in, or keel mcp login ${this.opts.name})` };
    }
    if (err instanceof SdkHttpError && err.status === 404 && this.transport?.kind === 'streamableHttp') {
      return { ok: false, kind: 'session_expired', message: 'the HTTP session expired (404)' };
    }
    if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) return { ok: false, kind: 'timeout', message: `no answer within ${secs(timeoutMs)} (MCP_TOOL_TIMEOUT)` };
    if (err instanceof SdkError && (err.code === SdkErrorCode.ConnectionClosed || err.code === SdkErrorCode.NotConnected)) {
      return { ok: false, kind: 'connection_closed', message: 'the connection to the server closed during the call' };
    }
    if (isNetworkError(err)) {
      // A remote server that went away: no transport close tells the machine, so this does.
      this.emit({ type: 'CONNECTION_LOST', reason: `the server could not be reached (${describe(err)})` });
      return { ok: false, kind: 'connection_closed', message: `the server could not be reached (${describe(err)})` };
    }
    return { ok: false, kind: 'failed', message: describe(err) };
  }

  private onStderr(text: string): void {
    for (const line of text.split(/\r?\n/)) {
      if (!line.trim()) continue;
      this.stderr.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      if (this.stderr.length > this.opts.limits.stderrLines) this.stderr.shift();
      this.opts.log('info', `[mcp ${this.opts.name}] ${line}`);
    }
  }

  private spec(kind: 'stdio'): Extract<McpServerSpec, { transport: 'stdio' }>;
  private spec(kind: 'http'): Extract<McpServerSpec, { transport: 'http' | 'sse' }>;
  private spec(kind: 'stdio' | 'http'): McpServerSpec {
    const s = this.opts.spec;
    if ((kind === 'stdio') !== (s.transport === 'stdio')) throw new McpConnectFailure(`server ${this.opts.name} is not a ${kind} server`, false, false);
    return s;
  }
}

function abandonIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new McpConnectFailure('cancelled: the connection was stopped while it opened');
}

function secs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** What went wrong, for the model and the person. A server writes these words: at most 2,000 characters. */
function describe(err: unknown): string {
  let text = String(err);
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    text = cause instanceof Error && cause.message && !err.message.includes(cause.message) ? `${err.message}: ${cause.message}` : err.message;
  }
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}… (${text.length} characters in all)` : text;
}

const MAX_ERROR_CHARS = 2000;

function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const networkCode = /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|EPIPE|UND_ERR_SOCKET)$/;
  return (err.name === 'TypeError' && /fetch failed/i.test(err.message)) || (typeof cause?.code === 'string' && networkCode.test(cause.code));
}

/** Why connecting failed, for a person and for the machine (fallback to SSE? worth retrying?). */
function connectFailure(err: unknown, via: 'stdio' | 'streamableHttp' | 'sse', timeoutMs: number, stderrTail: string[], oauth: KeelOAuthProvider | null): McpConnectFailure {
  if (err instanceof McpConnectFailure) return err;
  const last = stderrTail.at(-1);
  const tail = last ? `; its last output: ${last}` : '';
  const status = err instanceof SdkHttpError ? err.status : undefined;
  if (oauth?.signInRequired) return new McpConnectFailure(`${oauth.signInRequired.message}; sign in, or give it credentials in "headers"`, false, false, true);
  if (oauth && (err instanceof UnauthorizedError || status === 401)) {
    return new McpConnectFailure(`the server requires authorization (HTTP 401) and refused Keel's stored OAuth token; sign in again, or give it credentials in "headers"`, false, false, true);
  }
  if (err instanceof UnauthorizedError || status === 401 || status === 403) {
    return new McpConnectFailure(`the server requires authorization (HTTP ${status ?? 401}); give it valid credentials in "headers"${oauth ? ' or sign in' : ''}`, false, false);
  }
  if (status !== undefined && status >= 400 && status < 500 && via === 'streamableHttp') {
    return new McpConnectFailure(`Streamable HTTP was refused (HTTP ${status})`, true, true);
  }
  if (status !== undefined) return new McpConnectFailure(`the server answered HTTP ${status}${err instanceof Error ? ` (${err.message})` : ''}`);
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) return new McpConnectFailure(`the server did not answer initialize within ${secs(timeoutMs)} (MCP_TIMEOUT)${tail}`);
  if (err instanceof SdkError && err.code === SdkErrorCode.ConnectionClosed) {
    return new McpConnectFailure(`the server ${via === 'stdio' ? 'process exited' : 'closed the connection'} before it finished initializing${tail}`);
  }
  return new McpConnectFailure(`${describe(err)}${tail}`);
}

function toolInfo(t: Tool): McpToolInfo {
  return {
    name: t.name,
    description: t.description ?? t.title ?? '',
    inputSchema: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object' },
    readOnlyHint: t.annotations?.readOnlyHint === true,
  };
}

function resourceInfo(r: Resource): McpResourceInfo {
  return { uri: r.uri, name: r.name, ...(r.description ? { description: r.description } : {}), ...(r.mimeType ? { mimeType: r.mimeType } : {}) };
}

function promptInfo(p: Prompt): McpPromptInfo {
  return {
    name: p.name,
    ...(p.description ? { description: p.description } : {}),
    arguments: (p.arguments ?? []).map((a) => ({ name: a.name, ...(a.description ? { description: a.description } : {}), required: a.required === true })),
  };
}

