import type { ErrorCode } from '../../shared/domain/errors';
import type { ConversationMessage, StopReason } from '../../shared/domain/messages';

/**
 * The provider layer. Every provider turns a request into the Anthropic raw stream grammar
 * (message_start, content_block_start/delta/stop, message_delta, message_stop), so one stream
 * machine handles all of them. A provider's stream never throws: a failure is its last event,
 * `provider_error`, with a code and the phase it happened in.
 */

export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface ProviderRequest {
  model: string;
  /** The system prompt as separate parts, so providers that cache can mark the stable ones. */
  system: string[];
  messages: ConversationMessage[];
  tools: ToolDefinition[];
  maxTokens: number;
  /** Extended thinking budget, when the model should think. */
  thinkingBudgetTokens?: number;
  /** Set by the call machine: the task this request belongs to (sent as a header for tracing). */
  taskId?: string;
}

export interface RawUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

export type RawContentBlockStart =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

export type RawDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

export type ProviderEvent =
  | { type: 'message_start'; message: { id: string; model: string; usage: RawUsage } }
  | { type: 'content_block_start'; index: number; content_block: RawContentBlockStart }
  | { type: 'content_block_delta'; index: number; delta: RawDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: StopReason | null }; usage: RawUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  /** No part of the answer for `quietMs` (pings do not count); the attempt is given up as stalled after `stallAfterMs`. */
  | { type: 'waiting'; quietMs: number; stallAfterMs: number }
  | { type: 'provider_error'; error: ProviderError };

/**
 * `connect`: no HTTP response (refused, DNS, TLS, no headers in time). `pre-stream`: an HTTP
 * error status. `mid-stream`: the stream started and then failed (an `error` event, a reset
 * connection, a stall, a malformed line). Providers never retry; `retryable` tells the turn
 * machine whether trying again can help.
 */
export type ProviderErrorPhase = 'connect' | 'pre-stream' | 'mid-stream';

export interface ProviderError {
  code: ErrorCode;
  message: string;
  phase: ProviderErrorPhase;
  retryable: boolean;
  status?: number;
  /** How long the server asked to wait (retry-after), uncapped; the turn machine caps its wait. */
  retryAfterMs?: number;
}

export type ProviderId = 'anthropic' | 'openai-compatible' | 'demo' | 'scripted';

export interface ModelProvider {
  readonly id: ProviderId;
  /** What the UI shows as the model, e.g. "claude-sonnet-5-5" or "demo model". */
  readonly label: string;
  /**
   * Streams one model response. Contract: never throws and never rejects; ends with
   * `message_stop` on success or with exactly one `provider_error`; stops promptly (ending with
   * a `provider_error` of code `cancelled`) when `signal` aborts.
   */
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
  /**
   * Optional: the same response pushed instead of pulled, one `emit` per event, synchronously and
   * in order, with the same contract; resolves (never rejects) after the last event. It saves an
   * async hop per event, so the provider-stream actor prefers it.
   */
  streamTo?(request: ProviderRequest, signal: AbortSignal, emit: EmitProviderEvent): Promise<void>;
}

/** Receives a pushed provider event; it must not throw and should return quickly. */
export type EmitProviderEvent = (event: ProviderEvent) => void;

export interface ProviderConfig {
  provider: Exclude<ProviderId, 'scripted'>;
  model: string;
  baseUrl?: string;
  apiKey?: string;
  /**
   * No part of the answer for this long (pings do not count) is a `stream_stalled` mid-stream
   * failure. Unset: the provider's default (timeouts.ts). Set by the person: `--stall-timeout`,
   * `keel.timeouts.stallSeconds`.
   */
  stallTimeoutMs?: number;
  /**
   * No response headers for this long is a `stream_stalled` failure in the connect phase. Unset:
   * the provider's default (timeouts.ts). Set by the person: `--response-timeout`,
   * `keel.timeouts.responseSeconds`.
   */
  headerTimeoutMs?: number;
}
