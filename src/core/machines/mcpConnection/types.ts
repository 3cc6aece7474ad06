import type { ToolResultContentBlock } from '../../../shared/domain/messages';
import type { McpPromptInfo, McpResourceInfo, McpToolInfo, McpTransportKind } from '../../mcp/types';

/** The `mcpConnection` machine's input, context, events and the data its actors exchange. */
export interface McpConnectionInput {
  server: string;
  transport: McpTransportKind;
  limits: { maxRestartAttempts: number; backoffMs: readonly number[]; stableAfterMs: number };
  /** Start in `disabled` (the person turned the server off). */
  disabled?: boolean;
}

export type McpVia = 'stdio' | 'streamableHttp' | 'sse';

export interface McpInitialized {
  serverInfo: { name: string; version: string } | null;
  tools: McpToolInfo[];
  resources: McpResourceInfo[];
  prompts: McpPromptInfo[];
}

/**
 * Why opening or initializing a connection failed. Actors throw it (anything else they throw is
 * treated as retryable with its message).
 */
export class McpConnectFailure extends Error {
  constructor(
    message: string,
    /** Streamable HTTP answered with a 4xx that an old SSE-only server gives: try SSE. */
    readonly fallbackToSse = false,
    /** Worth restarting with backoff (false: needs the person, e.g. HTTP 403). */
    readonly retryable = true,
    /** The server wants an OAuth sign-in only the person can give (`needsAuthorization`). */
    readonly needsSignIn = false,
  ) {
    super(message);
    this.name = 'McpConnectFailure';
  }
}

/** One tool call's outcome. The call actor never rejects; failures are data. */
export type McpCallOutput =
  | { ok: true; content: ToolResultContentBlock[]; isError: boolean; structured?: unknown; summary: string }
  | { ok: false; kind: 'session_expired' | 'connection_closed' | 'timeout' | 'cancelled' | 'failed'; message: string };

export type McpReadOutput = { ok: true; contents: { uri: string; mimeType?: string; text?: string; blob?: string }[] } | Extract<McpCallOutput, { ok: false }>;

export interface McpCallRequest {
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  timeoutMs: number;
}

export interface McpConnectionContext extends McpConnectionInput {
  via: McpVia | null;
  /** Failed attempts since the connection was last stable. */
  attempts: number;
  lastError: string | null;
  /** Whether the last failure is worth restarting by itself. */
  retryable: boolean;
  initialized: McpInitialized | null;
  /** Ids of tool calls in flight (spawned `callTool` actors, `call:…`). */
  calls: string[];
  /** Ids of resource reads in flight (spawned `readResource` actors, `read:…`). */
  reads: string[];
}

export type McpConnectionEvent =
  | { type: 'CONNECT' }
  | { type: 'RESTART' }
  | { type: 'DISABLE' }
  | { type: 'ENABLE' }
  | { type: 'STOP' }
  | ({ type: 'CALL_TOOL' } & McpCallRequest)
  | { type: 'READ_RESOURCE'; callId: string; uri: string; timeoutMs: number }
  | { type: 'CANCEL_CALL'; callId: string }
  | { type: 'CONNECTION_LOST'; reason: string }
  /** The server's tokens stopped working and could not be refreshed: the person must sign in. */
  | { type: 'AUTHORIZATION_REQUIRED'; reason: string }
  /** The person signed in (tokens stored): connect again. */
  | { type: 'SIGNED_IN' }
  | { type: 'TOOLS_UPDATED'; tools: McpToolInfo[] }
  | { type: 'RESOURCES_UPDATED'; resources: McpResourceInfo[] }
  | { type: 'PROMPTS_UPDATED'; prompts: McpPromptInfo[] };

/** Child actor ids of calls and reads: the prefix tells which counter a completion belongs to. */
export const CALL_PREFIX = 'call:';
export const READ_PREFIX = 'read:';
