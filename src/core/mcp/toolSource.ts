import type { ToolResultContentBlock } from '../../shared/domain/messages';
import type { ToolDefinition } from '../providers/types';

/**
 * What a task's turn loop needs of MCP — the narrow seam between the runtime and the hub. The
 * extension's and the CLI's hub (`McpHub`) implement it in process; a worker process implements
 * it by calling the host's hub over IPC (mcp/onWorkers/remote.ts, served by mcp/onWorkers/hostServer.ts).
 */
export interface McpToolSource {
  /**
   * The `mcp__<server>__<tool>` definitions of every ready server. Starts servers that may start
   * (approved or trusted) and waits, bounded by the connect timeout, for those still connecting.
   * Never rejects.
   */
  toolDefinitions(): Promise<ToolDefinition[]>;
  /** The server and tool a model-facing name stands for, or undefined when it names no known MCP tool. */
  resolveTool(name: string): { server: string; tool: string } | undefined;
  /**
   * Every name `resolveTool` knows, with what it stands for — those of servers now down too (a
   * call to one is answered "not available"). A worker resolves names from this list as the host does.
   */
  knownTools(): { name: string; server: string; tool: string }[];
  /**
   * The servers still starting (connecting or initialising) as the last tool list was made:
   * their tools were not offered yet and join a later request once they are ready. A call of
   * `mcp__<one of them>__…` is told so, not "no such tool" (`mcpCallSubject`).
   */
  startingServers(): string[];
  /**
   * Calls the tool once. Never rejects and never re-runs a call by itself (except after an HTTP
   * session expired before the server saw the call): a failure, a server that is down or exits
   * mid-call, a timeout or a cancel are results with `isError` and a message for the model.
   * `onProgress` gets one line per progress notification.
   */
  callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpToolOutcome>;
}

export interface McpCallOptions {
  signal: AbortSignal;
  /** One line per progress notification. */
  onProgress?: (line: string) => void;
  /** The model's tool call this runs (a worker's call names it to the host, whose permission re-check matches it). */
  toolCallId?: string;
}

export interface McpToolOutcome {
  /** A string when the result is text only; blocks when it holds images. */
  content: string | ToolResultContentBlock[];
  isError: boolean;
  /** One line for people. */
  summary: string;
}
