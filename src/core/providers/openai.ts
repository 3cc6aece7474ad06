import OpenAI from 'openai';
import { DEFAULT_MAX_RETRIES, DEFAULT_STALL_TIMEOUT_MS } from './anthropic';
import { describeCause, findErrorCode, guardedError, internalError, retryAfterMs } from './failures';
import type { Failure, FailureContext } from './failures';
import { ChatChunkTranslator } from './openaiChunks';
import type { LooseChunk } from './openaiChunks';
import { toChatParams } from './openaiRequest';
import { StreamGuard } from './streamGuard';
import type { ModelProvider, ProviderErrorPhase, ProviderEvent, ProviderRequest } from './types';

export const DEFAULT_OPENAI_BASE_URL = 'http://localhost:11434/v1';

export interface OpenAICompatibleProviderOptions {
  model: string;
  /** e.g. http://localhost:11434/v1 (Ollama), http://localhost:1234/v1 (LM Studio). */
  baseUrl?: string;
  /** Local servers need none; a dummy is sent then. */
  apiKey?: string;
  stallTimeoutMs?: number;
  maxRetries?: number;
}

/**
 * An OpenAI-compatible chat.completions server (Ollama, LM Studio, vLLM) through the `openai`
 * SDK, translated to and from the Anthropic grammar. Same contract as every provider: see
 * {@link ModelProvider.stream}.
 */
export class OpenAICompatibleProvider implements ModelProvider {
  readonly id = 'openai-compatible' as const;
  readonly label: string;
  readonly #opts: Required<OpenAICompatibleProviderOptions>;
  readonly #ctx: FailureContext;

  constructor(opts: OpenAICompatibleProviderOptions) {
    this.#opts = {
      model: opts.model,
      baseUrl: (opts.baseUrl || DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, ''),
      apiKey: opts.apiKey || 'not-needed',
      stallTimeoutMs: opts.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
      maxRetries: opts.maxRetries ?? DEFAULT_MAX_RETRIES,
    };
    this.label = opts.model;
    this.#ctx = {
      who: `The OpenAI-compatible server at ${this.#opts.baseUrl}`,
      baseUrl: this.#opts.baseUrl,
      keyHint: ' Check the API key configured for it.',
    };
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent, void, undefined> {
    const guard = new StreamGuard(signal, this.#opts.stallTimeoutMs);
    const fail = (f: Failure, phase: ProviderErrorPhase): ProviderEvent => ({ type: 'provider_error', error: guardedError(f, phase, guard, this.#ctx) });
    try {
      const client = new OpenAI({
        apiKey: this.#opts.apiKey,
        baseURL: this.#opts.baseUrl,
        organization: null,
        project: null,
        maxRetries: this.#opts.maxRetries,
        timeout: this.#opts.stallTimeoutMs,
        fetch: guard.fetch,
        logLevel: 'off',
      });
      let stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
      try {
        const headers = request.taskId ? { 'x-keel-task-id': request.taskId } : undefined;
        stream = await client.chat.completions.create(toChatParams(request), { signal: guard.signal, headers });
      } catch (err) {
        yield fail(this.#classify(err, false), 'pre-stream');
        return;
      }

      const translator = new ChatChunkTranslator(request.model);
      guard.arm();
      try {
        for await (const chunk of stream) {
          const events = translator.push(chunk as unknown as LooseChunk);
          if (events.length === 0) continue;
          guard.suspend();
          for (const e of events) yield e;
          if (guard.cancelled) break;
          guard.arm();
        }
      } catch (err) {
        yield fail(this.#classify(err, true), 'mid-stream');
        return;
      }
      guard.suspend();
      if (guard.cancelled || guard.stalled || !translator.finished) {
        yield fail({ kind: 'truncated' }, 'mid-stream');
        return;
      }
      yield* translator.end();
    } catch (err) {
      yield { type: 'provider_error', error: internalError(err) };
    } finally {
      guard.dispose();
    }
  }


  #classify(err: unknown, started: boolean): Failure {
    if (err instanceof OpenAI.APIUserAbortError) return { kind: 'cancelled' };
    if (err instanceof OpenAI.APIConnectionTimeoutError) return { kind: 'connection', timedOut: true, detail: 'timed out' };
    if (err instanceof OpenAI.APIConnectionError) {
      const code = findErrorCode(err);
      return { kind: 'connection', timedOut: false, detail: describeCause(err), ...(code ? { code } : {}) };
    }
    if (err instanceof OpenAI.APIError) {
      const body = err.error as { message?: unknown } | undefined;
      const apiMessage = typeof body?.message === 'string' ? body.message : undefined;
      const errorType = typeof err.type === 'string' ? err.type : undefined;
      if (err.status === undefined) return { kind: 'stream-error', errorType, apiMessage };
      return { kind: 'http', status: err.status, errorType, apiMessage, retryAfterMs: retryAfterMs(err.headers) };
    }
    if (err instanceof SyntaxError) return { kind: 'malformed', detail: 'not JSON' };
    const code = findErrorCode(err);
    if (started) return { kind: 'reset', detail: code ?? describeCause(err) };
    return { kind: 'connection', timedOut: false, detail: describeCause(err), ...(code ? { code } : {}) };
  }
}
