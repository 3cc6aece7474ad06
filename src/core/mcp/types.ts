/**
 * MCP configuration and status types shared by the config loader, the approvals, the connection
 * machine, the hub and the hosts (CLI, extension). Data only.
 */

/** Where a server's configuration came from. Project servers need an approval before they start. */
export type McpScope = 'project' | 'user' | 'cli';

/** How Keel talks to a server. `http` is Streamable HTTP, falling back to SSE for old servers. */
export type McpTransportKind = 'stdio' | 'http' | 'sse';

export type McpServerSpec =
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { transport: 'http' | 'sse'; url: string; headers: Record<string, string> };

export interface McpServerConfig {
  /** The name in the file; tools appear as `mcp__<name>__<tool>`. */
  name: string;
  scope: McpScope;
  /** The file it came from (absolute path). */
  source: string;
  /** As written (before `${VAR}` expansion): what an approval is for. */
  template: McpServerSpec;
  /** After expansion; null when expansion failed (see `problems`): the server cannot start. */
  resolved: McpServerSpec | null;
  /** Problems with this entry a person should see (missing variables, ignored keys). */
  problems: string[];
}

export interface McpConfigProblem {
  source: string;
  message: string;
}

export interface McpConfigSet {
  /** One entry per name, the highest scope winning (cli > project > user). */
  servers: McpServerConfig[];
  /** File-level problems (unreadable JSON, wrong shape) and shadowed entries. */
  problems: McpConfigProblem[];
}

/** The states of the `mcpConnection` machine a person sees (its top-level state names). */
export type McpConnectionPhase =
  | 'disconnected'
  | 'connecting'
  | 'stdio'
  | 'streamableHttp'
  | 'sse'
  | 'initializing'
  | 'ready'
  | 'error'
  | 'restarting'
  | 'needsAuthorization'
  | 'disabled';

/** What a server offers, as the hub knows it (names as the server spells them). */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnlyHint: boolean;
}

export interface McpResourceInfo {
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

export interface McpPromptInfo {
  name: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

/** The approval state of a project server in this workspace. */
export type McpApprovalState = 'approved' | 'rejected' | 'pending' | 'not-needed';

/** One server as a host shows it (`keel mcp list`, the MCP settings page). */
export interface McpServerStatus {
  name: string;
  scope: McpScope;
  transport: McpTransportKind;
  /** The transport in use once connected (`http` servers may have fallen back to SSE). */
  via: 'stdio' | 'streamableHttp' | 'sse' | null;
  /** The exact command line or URL (what an approval prompt names). */
  target: string;
  phase: McpConnectionPhase;
  /** `ready.toolCall` etc. while ready; otherwise equal to `phase`. */
  state: string;
  approval: McpApprovalState;
  lastError: string | null;
  /** The last lines the server wrote to stderr (stdio servers). */
  stderrTail: string[];
  /** Failed attempts since the last stable connection. */
  attempts: number;
  /** When restarting: milliseconds until the next attempt. */
  restartInMs: number | null;
  tools: McpToolInfo[];
  resources: McpResourceInfo[];
  prompts: McpPromptInfo[];
  serverInfo: { name: string; version: string } | null;
}
