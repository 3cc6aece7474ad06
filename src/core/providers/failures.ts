import { formatDuration } from '../../shared/domain/duration';
import { connectionError } from './connectionErrors';
import type { ProviderError, ProviderErrorPhase } from './types';

/**
 * Provider failures, first as SDK-neutral facts (`Failure`), then as the user-facing
 * `ProviderError` with a code, a phase and a plain-language message.
 */

export type Failure =
  | { kind: 'cancelled' }
  /** The stream started, then no part of the answer came for `timeoutMs` (keep-alive pings do not count). */
  | { kind: 'stalled'; timeoutMs: number }
  /** No response headers within `timeoutMs`. */
  | { kind: 'no-response'; timeoutMs: number }
  /** An HTTP error status. `shouldRetry` is the server's own `x-should-retry` header, when sent. */
  | { kind: 'http'; status: number; errorType?: string; apiMessage?: string; retryAfterMs?: number; shouldRetry?: boolean }
  /** An error event inside a started stream (Anthropic `event: error`, OpenAI `data: {"error":…}`). */
  | { kind: 'stream-error'; errorType?: string; apiMessage?: string }
  /**
   * No HTTP response at all. `code` is the first error code in the cause chain (ECONNREFUSED,
   * DEPTH_ZERO_SELF_SIGNED_CERT…), `detail` its innermost message ("bad port", "unknown scheme"…).
   */
  | { kind: 'connection'; code?: string; detail: string }
  /** The body broke off after the stream started. */
  | { kind: 'reset'; detail: string }
  /** The stream ended cleanly but before its final event. */
  | { kind: 'truncated' }
  | { kind: 'malformed'; detail: string };

export interface FailureContext {
  /** "Anthropic" or "The OpenAI-compatible server". */
  who: string;
  baseUrl: string;
  /** Appended to an authentication failure: how to set a key. */
  keyHint: string;
}

/** Finds the first error code (ECONNREFUSED, UND_ERR_SOCKET, CERT_HAS_EXPIRED…) in an error's cause chain. */
export function findErrorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    queue.push((e as { cause?: unknown }).cause);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return undefined;
}

/** A connection failure as a `Failure`: its code and innermost message. */
export function connectionFailure(err: unknown): Failure {
  const code = findErrorCode(err);
  return { kind: 'connection', detail: describeCause(err), ...(code ? { code } : {}) };
}

/** `x-should-retry: true|false`, the server's own verdict on retrying (sent by Anthropic). */
export function shouldRetryHeader(headers: Headers | undefined): boolean | undefined {
  const v = headers?.get('x-should-retry');
  return v === 'true' ? true : v === 'false' ? false : undefined;
}

/** Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && !Number.isNaN(parseFloat(ms))) return Math.max(0, parseFloat(ms));
  const after = headers?.get('retry-after');
  if (!after) return undefined;
  const seconds = parseFloat(after);
  if (!Number.isNaN(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** A detail for messages: the innermost message of an error chain. */
export function describeCause(err: unknown): string {
  let e: unknown = err;
  let text = err instanceof Error ? err.message : String(err);
  for (let i = 0; i < 5 && e instanceof Error && e.cause !== undefined; i += 1) {
    e = e.cause;
    if (e instanceof Error && e.message) text = e.message;
  }
  return text;
}

function withDetail(text: string | undefined): string {
  return text ? `: ${text.replace(/\.$/, '')}` : '';
}

const STREAM_ERROR_CODES: Record<string, ProviderError['code']> = {
  overloaded_error: 'overloaded',
  rate_limit_error: 'rate_limited',
  api_error: 'server_error',
  invalid_request_error: 'bad_request',
  authentication_error: 'auth_failed',
  permission_error: 'auth_failed',
};

/** The user-facing error for a failure in a given phase. */
export function toProviderError(f: Failure, phase: ProviderErrorPhase, ctx: FailureContext): ProviderError {
  const { who, baseUrl } = ctx;
  switch (f.kind) {
    case 'cancelled':
      return { code: 'cancelled', message: 'The request was cancelled.', phase, retryable: false };
    case 'stalled':
      return {
        code: 'stream_stalled',
        message: `${who} sent no part of the answer for ${formatDuration(f.timeoutMs)}; the answer was abandoned.`,
        phase,
        retryable: true,
      };
    case 'no-response':
      return {
        code: 'stream_stalled',
        message: `${baseUrl} sent no response within ${formatDuration(f.timeoutMs)}.`,
        phase: 'connect',
        retryable: true,
      };
    case 'http':
      return httpError(f, ctx);
    case 'stream-error': {
      const code = STREAM_ERROR_CODES[f.errorType ?? ''] ?? 'server_error';
      const what =
        code === 'overloaded'
          ? `${who} became overloaded while answering (overloaded_error). Try again in a moment.`
          : `${who} reported an error while answering (${f.errorType ?? 'unknown error'})${withDetail(f.apiMessage)}.`;
      return { code, message: what, phase: 'mid-stream', retryable: code !== 'bad_request' && code !== 'auth_failed' };
    }
    case 'connection':
      return connectionError(f, baseUrl);
    case 'reset':
      return {
        code: 'connection_reset',
        message: `The connection to ${baseUrl} was lost while the answer was streaming (${f.detail}).`,
        phase: 'mid-stream',
        retryable: true,
      };
    case 'truncated':
      return {
        code: 'connection_reset',
        message: `The stream from ${baseUrl} ended before the answer was complete.`,
        phase: 'mid-stream',
        retryable: true,
      };
    case 'malformed':
      return {
        code: 'malformed_response',
        message: `${who} sent a malformed stream event (${f.detail}).`,
        phase: 'mid-stream',
        retryable: true,
      };
  }
}

/** The status's own verdict on retrying, as the SDKs decide it; `x-should-retry` overrides it. */
function statusRetryable(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function httpError(f: Extract<Failure, { kind: 'http' }>, ctx: FailureContext): ProviderError {
  const { who } = ctx;
  const s = f.status;
  const retryable = f.shouldRetry ?? statusRetryable(s);
  const base = { phase: 'pre-stream' as const, status: s, retryable, ...(f.retryAfterMs !== undefined ? { retryAfterMs: f.retryAfterMs } : {}) };
  const detail = withDetail(f.apiMessage);
  if (s === 401) return { ...base, code: 'auth_failed', message: `${who} rejected the API key (401).${ctx.keyHint}` };
  if (s === 403) return { ...base, code: 'auth_failed', message: `${who} refused access (403)${detail}.${ctx.keyHint}` };
  if (s === 429) {
    const wait = f.retryAfterMs !== undefined ? ` The server asks to wait ${formatDuration(f.retryAfterMs)}.` : '';
    return { ...base, code: 'rate_limited', message: `${who} rate limit reached (429)${detail}.${wait}` };
  }
  if (s === 529 || f.errorType === 'overloaded_error') return { ...base, code: 'overloaded', message: `${who} is overloaded (${s}).` };
  if (s >= 500) return { ...base, code: 'server_error', message: `${who} had a server error (${s})${detail}.` };
  if (s === 408 || s === 409) return { ...base, code: 'server_error', message: `${who} could not finish the request (${s})${detail}.` };
  return { ...base, code: 'bad_request', message: `${who} rejected the request (${s})${detail}.` };
}

/** An unexpected exception inside a provider, reported instead of thrown. */
export function internalError(err: unknown): ProviderError {
  return { code: 'internal', message: `Internal error in the provider: ${describeCause(err)}`, phase: 'connect', retryable: false };
}

/**
 * The error to report for a failure seen while `guard` watched the request. Cancellation and
 * stalls come first: after our own abort, whatever the SDK threw is a consequence of it.
 */
export function guardedError(f: Failure, phase: ProviderErrorPhase, guard: { cancelled: boolean; stalled: boolean; stallTimeoutMs: number }, ctx: FailureContext): ProviderError {
  if (guard.cancelled) return toProviderError({ kind: 'cancelled' }, phase, ctx);
  if (guard.stalled) return toProviderError({ kind: 'stalled', timeoutMs: guard.stallTimeoutMs }, 'mid-stream', ctx);
  return toProviderError(f, phase, ctx);
}
