import type { EngineDecision, PermissionCall } from '../permissions/engine';
import type { McpToolOutcome, McpToolSource } from '../mcp/toolSource';
import type { FromWorker, ToWorker } from './protocol';

/**
 * The host's side of a worker's MCP calls, one per running query (workers/remoteTurn.ts): it
 * answers `mcp_list` from the task's hub and runs each `mcp_call` through the hub's `callTool`,
 * sending `mcp_progress` lines and exactly one `mcp_result` per call.
 *
 * The worker is an executor; the host owns the servers and the permission prompts, so each call
 * is checked here again before the hub makes it (a worker that is wrong or compromised gets a
 * refusal, never a call):
 * - the name must be one the host gave this query in an `mcp_tools` answer (offered, or known
 *   to the hub with its server down), standing for the same server and tool (no call to a server
 *   the task did not get, or under another name);
 * - the host's own permission decision for the task (its engine and rules, its current mode,
 *   bounded by its ancestors) must allow it — or ask, and the host answered `allow` to this
 *   query's prompt for that very tool call (an approval serves one call) — or ask while the
 *   task's hooks may have allowed it in the worker (`hooksMayAllow`). A deny is refused.
 *
 * What breaks the protocol (a call id used twice, an MCP message when the task has no MCP) is
 * returned as a violation: the caller breaks the connection. `close` aborts every call still
 * running (the server gets `notifications/cancelled`): a query that ended or a worker that died
 * never leaves a call behind, and no call is ever made again by the host.
 */
export interface McpHostDeps {
  /** The task's MCP source: the host's hub. */
  source: McpToolSource;
  /** The host's permission decision for a call of this task, under its current mode. */
  decide(call: PermissionCall): Promise<EngineDecision>;
  /** The task has hooks that may allow a call in the worker without a prompt (PreToolUse). */
  hooksMayAllow?: boolean;
  log?(level: 'info' | 'warn' | 'error', message: string): void;
}

type McpRequest = Extract<FromWorker, { type: 'mcp_list' | 'mcp_call' | 'mcp_cancel' }>;

export class McpHostServer {
  /** Names given to this query in `mcp_tools` answers (offered or known), with what they stand for. */
  private readonly offered = new Map<string, { server: string; tool: string }>();
  /** Tool call ids the host's prompt answered `allow` to in this query, with the tool name. */
  private readonly approved = new Map<string, string>();
  private readonly running = new Map<string, AbortController>();
  /** Every call id this query used: none is answered twice. */
  private readonly seen = new Set<string>();
  private closed = false;

  constructor(
    private readonly queryId: string,
    private readonly deps: McpHostDeps,
    private readonly send: (m: ToWorker) => void,
  ) {}

  /** Handles one MCP message of this query; returns a protocol violation to break the connection for, else undefined. */
  receive(m: McpRequest): string | undefined {
    if (this.closed) return undefined;
    switch (m.type) {
      case 'mcp_list':
        void this.list(m.requestId);
        return undefined;
      case 'mcp_cancel':
        this.running.get(m.callId)?.abort();
        return undefined;
      case 'mcp_call':
        if (this.seen.has(m.callId)) return `mcp_call id ${m.callId} was used twice`;
        this.seen.add(m.callId);
        void this.call(m);
        return undefined;
    }
  }

  /** The host's prompt for `toolCallId` (tool `tool`) was answered `allow`. */
  recordApproval(toolCallId: string, tool: string): void {
    this.approved.set(toolCallId, tool);
  }

  /** The query is over (completed, cancelled, or its worker died): every call still running is aborted. */
  close(): void {
    this.closed = true;
    for (const c of this.running.values()) c.abort();
    this.running.clear();
  }

  private async list(requestId: string): Promise<void> {
    let defs: Awaited<ReturnType<McpToolSource['toolDefinitions']>>;
    try {
      defs = await this.deps.source.toolDefinitions();
    } catch (err) {
      // The hub never rejects; a source that does still answers the worker (no tools), never hangs it.
      this.deps.log?.('warn', `the MCP tool list failed: ${(err as Error).message}`);
      defs = [];
    }
    const tools = [];
    for (const d of defs) {
      const target = this.deps.source.resolveTool(d.name);
      if (!target) continue;
      this.offered.set(d.name, target);
      tools.push({ name: d.name, server: target.server, tool: target.tool, description: d.description, input_schema: d.input_schema });
    }
    // Names of the hub's servers that are down now: the model may still name them (an earlier
    // run saw them), and gets the hub's "not available" answer, as in the host.
    const known = this.deps.source.knownTools().filter((t) => !this.offered.has(t.name));
    for (const t of known) this.offered.set(t.name, { server: t.server, tool: t.tool });
    if (!this.closed) this.send({ type: 'mcp_tools', queryId: this.queryId, requestId, tools, known });
  }

  private async call(m: Extract<McpRequest, { type: 'mcp_call' }>): Promise<void> {
    const controller = new AbortController();
    this.running.set(m.callId, controller);
    const answer = (outcome: McpToolOutcome) => {
      this.running.delete(m.callId);
      if (!this.closed) this.send({ type: 'mcp_result', queryId: this.queryId, callId: m.callId, outcome });
    };
    const refusal = await this.refusal(m);
    if (refusal) {
      this.deps.log?.('warn', `a worker's MCP call ${m.name} (server ${m.server}, tool ${m.tool}) was refused: ${refusal}`);
      return answer({ content: `The host refused this MCP call: ${refusal}. The call was not made.`, isError: true, summary: 'refused by the host' });
    }
    if (controller.signal.aborted) return answer({ content: 'The tool call was cancelled before it started.', isError: true, summary: 'cancelled' });
    let outcome: McpToolOutcome;
    try {
      outcome = await this.deps.source.callTool(m.name, m.arguments, {
        signal: controller.signal,
        toolCallId: m.toolCallId,
        onProgress: (line) => {
          if (!this.closed) this.send({ type: 'mcp_progress', queryId: this.queryId, callId: m.callId, line });
        },
      });
    } catch (err) {
      // The hub never rejects; a source that does is still one answer, not a hang.
      outcome = { content: `The MCP call failed: ${(err as Error).message}`, isError: true, summary: 'failed' };
    }
    answer(outcome);
  }

  /** Why the host will not make this call, or undefined when it may. */
  private async refusal(m: Extract<McpRequest, { type: 'mcp_call' }>): Promise<string | undefined> {
    const target = this.offered.get(m.name);
    if (!target) return `${m.name} is not one of the MCP tools this task was given`;
    if (target.server !== m.server || target.tool !== m.tool) return `${m.name} is tool ${target.tool} of server ${target.server}, not ${m.tool} of ${m.server}`;
    const subject = { kind: 'mcp' as const, tool: m.name, server: target.server, summary: `${target.tool} on MCP server ${target.server}` };
    let decision: EngineDecision;
    try {
      decision = await this.deps.decide({ tool: m.name, input: m.arguments, subject, readOnly: false });
    } catch (err) {
      return `the permission check failed: ${(err as Error).message}`;
    }
    if (decision.decision === 'allow') return undefined;
    if (decision.decision === 'deny') return `the permission rules deny it (${decision.reason})`;
    // An approval serves the one call it was given for.
    if (this.approved.get(m.toolCallId) === m.name) {
      this.approved.delete(m.toolCallId);
      return undefined;
    }
    if (this.deps.hooksMayAllow) return undefined;
    return 'it needs a permission the host did not give for this call';
  }
}
