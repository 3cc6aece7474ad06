import type { ProviderError, ProviderErrorPhase } from './types';

/**
 * Provider failures, first as SDK-neutral facts (`Failure`), then as the user-facing
 * `ProviderError` with a code, a phase and a plain-language message.
 */

export type Failure =
  | { kind: 'cancelled' }
  | { kind: 'stalled'; timeoutMs: number }
  /** An HTTP error status (the SDK has already retried what it retries). */
  | { kind: 'http'; status: number; errorType?: string; apiMessage?: string; retryAfterMs?: number }
  /** An error event inside a started stream (Anthropic `event: error`, OpenAI `data: {"error":…}`). */
  | { kind: 'stream-error'; errorType?: string; apiMessage?: string }
  /** No HTTP response at all. `code` is the system error code when one was found (ECONNREFUSED…). */
  | { kind: 'connection'; code?: string; timedOut: boolean; detail: string }
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

const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT',
]);

/** Finds a system error code (ECONNREFUSED…) anywhere in an error's cause chain. */
export function findErrorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  const stack: unknown[] = [err];
  while (stack.length > 0) {
    const e = stack.pop();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return code;
    stack.push((e as { cause?: unknown }).cause);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) stack.push(...errors);
  }
  return undefined;
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

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
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
        message: `${who} sent nothing for ${seconds(f.timeoutMs)}; the answer was abandoned.`,
        phase,
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
    case 'connection': {
      if (f.timedOut) {
        return { code: 'stream_stalled', message: `No response from ${baseUrl} (timed out).`, phase: 'connect', retryable: true };
      }
      if (f.code === 'ECONNREFUSED') {
        return { code: 'connection_refused', message: `Could not connect to ${baseUrl} (connection refused).`, phase: 'connect', retryable: true };
      }
      if (f.code === 'ENOTFOUND' || f.code === 'EAI_AGAIN') {
        return { code: 'connection_refused', message: `Could not connect to ${baseUrl} (host not found).`, phase: 'connect', retryable: true };
      }
      return {
        code: 'connection_reset',
        message: `Could not connect to ${baseUrl} (${f.code ?? f.detail}).`,
        phase: 'connect',
        retryable: true,
      };
    }
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

function httpError(f: Extract<Failure, { kind: 'http' }>, ctx: FailureContext): ProviderError {
  const { who } = ctx;
  const s = f.status;
  const base = { phase: 'pre-stream' as const, status: s, ...(f.retryAfterMs !== undefined ? { retryAfterMs: f.retryAfterMs } : {}) };
  if (s === 401) {
    return { ...base, code: 'auth_failed', message: `${who} rejected the API key (401).${ctx.keyHint}`, retryable: false };
  }
  if (s === 403) {
    return { ...base, code: 'auth_failed', message: `${who} refused access (403)${withDetail(f.apiMessage)}.${ctx.keyHint}`, retryable: false };
  }
  if (s === 429) {
    const wait = f.retryAfterMs !== undefined ? ` Try again in ${seconds(f.retryAfterMs)}.` : ' Try again shortly.';
    return { ...base, code: 'rate_limited', message: `${who} rate limit reached (429)${withDetail(f.apiMessage)}.${wait}`, retryable: true };
  }
  if (s === 529 || f.errorType === 'overloaded_error') {
    return { ...base, code: 'overloaded', message: `${who} is overloaded (${s}). Try again in a moment.`, retryable: true };
  }
  if (s >= 500) {
    return { ...base, code: 'server_error', message: `${who} had a server error (${s})${withDetail(f.apiMessage)}.`, retryable: true };
  }
  if (s === 408 || s === 409) {
    return { ...base, code: 'server_error', message: `${who} could not finish the request (${s})${withDetail(f.apiMessage)}.`, retryable: true };
  }
  return { ...base, code: 'bad_request', message: `${who} rejected the request (${s})${withDetail(f.apiMessage)}.`, retryable: false };
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
