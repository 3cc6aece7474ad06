import { randomUUID } from 'node:crypto';
import type { ToolDefinition } from '../../providers/types';
import type { McpCallOptions, McpToolOutcome, McpToolSource } from '../toolSource';
import type { ToHost, ToWorker } from '../../workers/protocol';
import type { RpcEndpoint } from '../../workers/rpc';
import { errorMessage } from '../../../shared/domain/errors';

/**
 * The worker's `McpToolSource`: the task's MCP servers live in the host (one hub per window or
 * CLI process, shared by its tasks), so a worker's turn lists and calls their tools through the
 * host (the `mcpList` and `mcpCall` requests of protocol.ts). The turn uses it exactly as the hub
 * in process: the same `mcp__server__tool` names and definitions, the same permission check in
 * the worker's engine, the same outcomes (text, images, resource links, structured content,
 * truncation note — the host's hub made them).
 *
 * - `toolDefinitions()` asks the host each time the turn prepares its request (as the hub is
 *   asked in process); `resolveTool` and `knownTools` answer from the last list (the offered
 *   tools and the other names the hub knows).
 * - `callTool` resolves with the host's outcome; its progress lines go to `onProgress`; an abort
 *   cancels the request and still waits for the host's outcome (the hub answers a cancelled call
 *   at once, with its own words). Never rejects: a connection that ends first is a failure.
 */
export class IpcMcpToolSource implements McpToolSource {
  private byName = new Map<string, { server: string; tool: string }>();
  private starting: string[] = [];

  constructor(
    private readonly queryId: string,
    private readonly host: Pick<RpcEndpoint<ToWorker, ToHost>, 'request'>,
  ) {}

  async toolDefinitions(): Promise<ToolDefinition[]> {
    let answer;
    try {
      answer = await this.host.request('mcpList', { queryId: this.queryId });
    } catch {
      // The query is ending with its connection: no tools.
      return [];
    }
    this.byName = new Map([...answer.known, ...answer.tools].map((t) => [t.name, { server: t.server, tool: t.tool }]));
    this.starting = answer.starting;
    return answer.tools.map(({ name, description, input_schema }) => ({ name, description, input_schema }));
  }

  resolveTool(name: string): { server: string; tool: string } | undefined {
    return this.byName.get(name);
  }

  knownTools(): { name: string; server: string; tool: string }[] {
    return [...this.byName].map(([name, t]) => ({ name, ...t }));
  }

  startingServers(): string[] {
    return this.starting;
  }

  async callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolOutcome> {
    const target = this.byName.get(name);
    if (!target) return failure(`There is no MCP tool named ${name}.`, 'unknown MCP tool');
    try {
      return await this.host.request(
        'mcpCall',
        { queryId: this.queryId, toolCallId: opts.toolCallId ?? randomUUID(), name, server: target.server, tool: target.tool, arguments: args },
        { signal: opts.signal, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) },
      );
    } catch (err) {
      return failure(`The MCP call to ${target.tool} on server ${target.server} did not finish: ${errorMessage(err)}.`, 'query ended');
    }
  }
}

function failure(message: string, summary: string): McpToolOutcome {
  return { content: message, isError: true, summary };
}
