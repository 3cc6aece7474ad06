import { randomUUID } from 'node:crypto';
import type { ToolDefinition } from '../providers/types';
import type { McpCallOptions, McpToolOutcome, McpToolSource } from '../mcp/toolSource';
import type { FromWorker, ToWorker } from './protocol';

/**
 * The worker's `McpToolSource`: the task's MCP servers live in the host (one hub per window or
 * CLI process, shared by its tasks), so a worker's turn lists and calls their tools through the
 * host over the query's connection. The turn uses it exactly as the hub in process: the same
 * `mcp__server__tool` names and definitions, the same permission check in the worker's engine,
 * the same outcomes (text, images, resource links, structured content, truncation note — the
 * host's hub made them).
 *
 * - `toolDefinitions()` sends `mcp_list` and resolves with the host's `mcp_tools` answer (each
 *   time the turn prepares its request, as the hub is asked in process); `resolveTool` and
 *   `knownTools` answer from the last list (the offered tools and the other names the hub knows).
 * - `callTool` sends `mcp_call` and resolves with its `mcp_result`; `mcp_progress` lines go to
 *   `onProgress`; an abort sends `mcp_cancel` once and still waits for the host's result (the
 *   hub answers a cancelled call at once, with its own words). Never rejects: when the query ends
 *   first (`close`), pending calls resolve as failures.
 *
 * A message for a request or call this source does not have is ignored (a late answer).
 */
export class IpcMcpToolSource implements McpToolSource {
  private readonly lists = new Map<string, (tools: ToolDefinition[]) => void>();
  private readonly calls = new Map<string, { resolve: (o: McpToolOutcome) => void; onProgress?: (line: string) => void; detach: () => void }>();
  private byName = new Map<string, { server: string; tool: string }>();
  private closed = false;

  constructor(
    private readonly queryId: string,
    private readonly send: (m: FromWorker) => void,
  ) {}

  toolDefinitions(): Promise<ToolDefinition[]> {
    if (this.closed) return Promise.resolve([]);
    return new Promise((resolve) => {
      const requestId = randomUUID();
      this.lists.set(requestId, resolve);
      this.send({ type: 'mcp_list', queryId: this.queryId, requestId });
    });
  }

  resolveTool(name: string): { server: string; tool: string } | undefined {
    return this.byName.get(name);
  }

  knownTools(): { name: string; server: string; tool: string }[] {
    return [...this.byName].map(([name, t]) => ({ name, ...t }));
  }

  callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolOutcome> {
    const target = this.byName.get(name);
    if (!target) return Promise.resolve(failure(`There is no MCP tool named ${name}.`, 'unknown MCP tool'));
    if (this.closed) return Promise.resolve(failure(`The MCP call to ${target.tool} on server ${target.server} was not made: the query ended.`, 'query ended'));
    return new Promise((resolve) => {
      const callId = randomUUID();
      const onAbort = () => this.send({ type: 'mcp_cancel', queryId: this.queryId, callId });
      opts.signal.addEventListener('abort', onAbort, { once: true });
      this.calls.set(callId, {
        resolve,
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        detach: () => opts.signal.removeEventListener('abort', onAbort),
      });
      this.send({ type: 'mcp_call', queryId: this.queryId, callId, toolCallId: opts.toolCallId ?? callId, name, server: target.server, tool: target.tool, arguments: args });
      // Aborted before it was sent: the host still hears of it (it aborts the call it just got).
      if (opts.signal.aborted) onAbort();
    });
  }

  /** One answer from the host for this query. */
  receive(m: Extract<ToWorker, { type: 'mcp_tools' | 'mcp_progress' | 'mcp_result' }>): void {
    switch (m.type) {
      case 'mcp_tools': {
        const done = this.lists.get(m.requestId);
        if (!done) return;
        this.lists.delete(m.requestId);
        this.byName = new Map([...m.known, ...m.tools].map((t) => [t.name, { server: t.server, tool: t.tool }]));
        done(m.tools.map(({ name, description, input_schema }) => ({ name, description, input_schema })));
        return;
      }
      case 'mcp_progress':
        this.calls.get(m.callId)?.onProgress?.(m.line);
        return;
      case 'mcp_result': {
        const call = this.calls.get(m.callId);
        if (!call) return;
        this.calls.delete(m.callId);
        call.detach();
        call.resolve(m.outcome);
        return;
      }
    }
  }

  /** The query ended: what still waits resolves (no tools; calls as failures) and nothing more is sent. */
  close(): void {
    this.closed = true;
    for (const done of this.lists.values()) done([]);
    this.lists.clear();
    for (const call of this.calls.values()) {
      call.detach();
      call.resolve(failure('The MCP call did not finish: the query ended before the host answered.', 'query ended'));
    }
    this.calls.clear();
  }
}

function failure(message: string, summary: string): McpToolOutcome {
  return { content: message, isError: true, summary };
}
