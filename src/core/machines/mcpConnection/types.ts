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
  /**
   * The caller's cancel signal, handed to the SDK as it is (no controller of Keel's own per
   * call). Without one (tests), the calls actor makes its own so CANCEL_CALL can stop the call.
   */
  signal?: AbortSignal;
}

export interface McpReadRequest {
  callId: string;
  uri: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What the machine forwards to its `runCalls` actor while ready. */
export type McpCallsEvent = ({ type: 'CALL_TOOL' } & McpCallRequest) | ({ type: 'READ_RESOURCE' } & McpReadRequest) | { type: 'CANCEL_CALL'; callId: string };

/**
 * Emitted (`actor.on('callDone', …)`) once for every call or read the machine took: its output,
 * or `undefined` when it ended without one (cancelled, or the connection left `ready` first).
 */
export type McpConnectionEmitted = { type: 'callDone'; callId: string; output: McpCallOutput | McpReadOutput | undefined };

export interface McpConnectionContext extends McpConnectionInput {
  via: McpVia | null;
  /** Failed attempts since the connection was last stable. */
  attempts: number;
  lastError: string | null;
  /** Whether the last failure is worth restarting by itself. */
  retryable: boolean;
  initialized: McpInitialized | null;
  /** Ids of tool calls in flight (run by the `runCalls` actor). */
  calls: string[];
  /** Ids of resource reads in flight. */
  reads: string[];
}

export type McpConnectionEvent =
  | { type: 'CONNECT' }
  | { type: 'RESTART' }
  | { type: 'DISABLE' }
  | { type: 'ENABLE' }
  | { type: 'STOP' }
  | McpCallsEvent
  /** From the `runCalls` actor: a call or read finished (its output never a rejection). */
  | { type: 'CALL_DONE'; callId: string; output: McpCallOutput }
  | { type: 'READ_DONE'; callId: string; output: McpReadOutput }
  | { type: 'CONNECTION_LOST'; reason: string }
  /** The server's tokens stopped working and could not be refreshed: the person must sign in. */
  | { type: 'AUTHORIZATION_REQUIRED'; reason: string }
  /** The person signed in (tokens stored): connect again. */
  | { type: 'SIGNED_IN' }
  | { type: 'TOOLS_UPDATED'; tools: McpToolInfo[] }
  | { type: 'RESOURCES_UPDATED'; resources: McpResourceInfo[] }
  | { type: 'PROMPTS_UPDATED'; prompts: McpPromptInfo[] };
