import type { EngineDecision, PermissionCall } from '../../permissions/engine';
import type { McpToolOutcome, McpToolSource } from '../toolSource';
import type { McpCallParams, McpToolsAnswer } from '../../workers/protocol';
import type { RequestContext } from '../../workers/rpc';
import { errorMessage } from '../../../shared/domain/errors';

/**
 * The host's side of a worker's MCP calls, one per running query (workers/remoteTurn.ts): it
 * answers `mcpList` from the task's hub and runs each `mcpCall` through the hub's `callTool`,
 * its progress lines going back as the request's progress (protocol.ts; rpc.ts answers each
 * request exactly once and aborts a call whose request was cancelled or whose worker died).
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
 * A call is aborted (the server gets `notifications/cancelled`) when its request is cancelled or
 * its worker's connection ends (the request's signal): a worker that died never leaves a call
 * behind, and no call is ever made again by the host.
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

export class McpHostServer {
  /** Names given to this query in `mcpList` answers (offered or known), with what they stand for. */
  private readonly offered = new Map<string, { server: string; tool: string }>();
  /** Tool call ids the host's prompt answered `allow` to in this query, with the tool name. */
  private readonly approved = new Map<string, string>();

  constructor(private readonly deps: McpHostDeps) {}

  /** The host's prompt for `toolCallId` (tool `tool`) was answered `allow`. */
  recordApproval(toolCallId: string, tool: string): void {
    this.approved.set(toolCallId, tool);
  }

  /** The `mcpList` request: the hub's tools now, and the names it knows whose server is down. */
  async list(): Promise<McpToolsAnswer> {
    let defs: Awaited<ReturnType<McpToolSource['toolDefinitions']>>;
    try {
      defs = await this.deps.source.toolDefinitions();
    } catch (err) {
      // The hub never rejects; a source that does still answers the worker (no tools), never hangs it.
      this.deps.log?.('warn', `the MCP tool list failed: ${errorMessage(err)}`);
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
    return { tools, known, starting: this.deps.source.startingServers() };
  }

  /** The `mcpCall` request: checked again, then made through the hub (never rejects). */
  async call(m: McpCallParams, context: RequestContext<string>): Promise<McpToolOutcome> {
    const refusal = await this.refusal(m);
    if (refusal) {
      this.deps.log?.('warn', `a worker's MCP call ${m.name} (server ${m.server}, tool ${m.tool}) was refused: ${refusal}`);
      return { content: `The host refused this MCP call: ${refusal}. The call was not made.`, isError: true, summary: 'refused by the host' };
    }
    if (context.signal.aborted) return { content: 'The tool call was cancelled before it started.', isError: true, summary: 'cancelled' };
    try {
      return await this.deps.source.callTool(m.name, m.arguments, { signal: context.signal, toolCallId: m.toolCallId, onProgress: (line) => context.progress(line) });
    } catch (err) {
      // The hub never rejects; a source that does is still one answer, not a hang.
      return { content: `The MCP call failed: ${errorMessage(err)}`, isError: true, summary: 'failed' };
    }
  }

  /** Why the host will not make this call, or undefined when it may. */
  private async refusal(m: McpCallParams): Promise<string | undefined> {
    const target = this.offered.get(m.name);
    if (!target) return `${m.name} is not one of the MCP tools this task was given`;
    if (target.server !== m.server || target.tool !== m.tool) return `${m.name} is tool ${target.tool} of server ${target.server}, not ${m.tool} of ${m.server}`;
    const subject = { kind: 'mcp' as const, tool: m.name, server: target.server, summary: `${target.tool} on MCP server ${target.server}` };
    let decision: EngineDecision;
    try {
      decision = await this.deps.decide({ tool: m.name, input: m.arguments, subject, readOnly: false });
    } catch (err) {
      return `the permission check failed: ${errorMessage(err)}`;
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
