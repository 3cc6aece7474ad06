import type { McpCallOptions, McpToolOutcome, McpToolSource } from '../../../src/core/mcp/toolSource';
import type { ToolDefinition } from '../../../src/core/providers/types';

/**
 * A host-side `McpToolSource` for tests of the worker ↔ host MCP path (a stand-in behind the
 * interface; the real hub is tested against real servers elsewhere and in mcpIpc.test.ts): it
 * knows two servers' tools, offers only those of `offered`, and records every call it makes.
 * - `mcp__alpha__ping` answers `pong <arguments>`;
 * - `mcp__alpha__slow` reports progress `started`, then waits for its signal and answers as the
 *   hub does a cancelled call;
 * - `mcp__beta__wipe` resolves, but is neither offered nor listed as known: a server the task was not given;
 * - `starting`: the servers it says are still starting.
 */
export class RecordingSource implements McpToolSource {
  readonly calls: { name: string; args: Record<string, unknown>; signal: AbortSignal; toolCallId: string | undefined }[] = [];
  private readonly known = new Map([
    ['mcp__alpha__ping', { server: 'alpha', tool: 'ping' }],
    ['mcp__alpha__slow', { server: 'alpha', tool: 'slow' }],
    ['mcp__beta__wipe', { server: 'beta', tool: 'wipe' }],
  ]);

  constructor(
    private readonly offered: readonly string[] = ['mcp__alpha__ping', 'mcp__alpha__slow'],
    private readonly starting: readonly string[] = [],
  ) {}

  async toolDefinitions(): Promise<ToolDefinition[]> {
    return this.offered.map((name) => ({ name, description: `${name} (test)`, input_schema: { type: 'object' } }));
  }

  resolveTool(name: string): { server: string; tool: string } | undefined {
    return this.known.get(name);
  }

  knownTools(): { name: string; server: string; tool: string }[] {
    return [...this.known].filter(([name]) => this.offered.includes(name)).map(([name, t]) => ({ name, ...t }));
  }

  startingServers(): string[] {
    return [...this.starting];
  }

  callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolOutcome> {
    this.calls.push({ name, args, signal: opts.signal, toolCallId: opts.toolCallId });
    if (name === 'mcp__alpha__slow') {
      opts.onProgress?.('started');
      return new Promise((resolve) => {
        const done = () => resolve({ content: 'The MCP call slow was cancelled.', isError: true, summary: 'cancelled' });
        if (opts.signal.aborted) done();
        else opts.signal.addEventListener('abort', done, { once: true });
      });
    }
    return Promise.resolve({ content: `pong ${JSON.stringify(args)}`, isError: false, summary: 'ok' });
  }
}
