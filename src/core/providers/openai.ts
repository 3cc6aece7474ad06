import OpenAI from 'openai';
import { baseUrlProblem } from './connectionErrors';
import { connectionFailure, guardedError, internalError, retryAfterMs, shouldRetryHeader } from './failures';
import type { Failure, FailureContext } from './failures';
import { ChatChunkTranslator } from './openaiChunks';
import type { LooseChunk } from './openaiChunks';
import { toChatParams } from './openaiRequest';
import { pulled } from './pulled';
import { StreamGuard } from './streamGuard';
import { DEFAULT_OPENAI_HEADER_TIMEOUT_MS, DEFAULT_STALL_TIMEOUT_MS } from './timeouts';
import type { EmitProviderEvent, ModelProvider, ProviderErrorPhase, ProviderEvent, ProviderRequest } from './types';

export const DEFAULT_OPENAI_BASE_URL = 'http://localhost:11434/v1';

export interface OpenAICompatibleProviderOptions {
  model: string;
  /** e.g. http://localhost:11434/v1 (Ollama), http://localhost:1234/v1 (LM Studio). */
  baseUrl?: string;
  /** Local servers need none; a dummy is sent then. */
  apiKey?: string;
  /** Default {@link DEFAULT_STALL_TIMEOUT_MS}. */
  stallTimeoutMs?: number;
  /** Default {@link DEFAULT_OPENAI_HEADER_TIMEOUT_MS}. */
  headerTimeoutMs?: number;
}

/**
 * An OpenAI-compatible chat.completions server (Ollama, LM Studio, vLLM) through the `openai`
 * SDK, translated to and from the Anthropic grammar. Like the Anthropic provider it never
 * retries (the SDK's retries are off); the turn machine does. Same contract as every provider:
 * see {@link ModelProvider.stream}.
 */
export class OpenAICompatibleProvider implements ModelProvider {
  readonly id = 'openai-compatible' as const;
  readonly label: string;
  readonly #opts: Required<OpenAICompatibleProviderOptions>;
  readonly #ctx: FailureContext;
  readonly #urlProblem: string | undefined;
  #client: OpenAI | undefined;

  constructor(opts: OpenAICompatibleProviderOptions) {
    this.#opts = {
      model: opts.model,
      baseUrl: (opts.baseUrl || DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, ''),
      apiKey: opts.apiKey || 'not-needed',
      stallTimeoutMs: opts.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
      headerTimeoutMs: opts.headerTimeoutMs ?? DEFAULT_OPENAI_HEADER_TIMEOUT_MS,
    };
    this.#urlProblem = baseUrlProblem(this.#opts.baseUrl);
    this.label = opts.model;
    this.#ctx = {
      who: `The OpenAI-compatible server at ${this.#opts.baseUrl}`,
      baseUrl: this.#opts.baseUrl,
      keyHint: ' Check the API key configured for it.',
    };
  }

  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    return pulled((s, emit) => this.streamTo(request, s, emit), signal);
  }

  async streamTo(request: ProviderRequest, signal: AbortSignal, emit: EmitProviderEvent): Promise<void> {
    if (this.#urlProblem) {
      emit({ type: 'provider_error', error: { code: 'invalid_input', message: this.#urlProblem, phase: 'connect', retryable: false } });
      return;
    }
    const stallAfterMs = this.#opts.stallTimeoutMs;
    const guard = new StreamGuard(signal, stallAfterMs, (quietMs) => emit({ type: 'waiting', quietMs, stallAfterMs }));
    const fail = (f: Failure, phase: ProviderErrorPhase): void => emit({ type: 'provider_error', error: guardedError(f, phase, guard, this.#ctx) });
    try {
      let stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
      try {
        const headers = request.taskId ? { 'x-keel-task-id': request.taskId } : undefined;
        stream = await this.#sdk().chat.completions.create(toChatParams(request), { signal: guard.signal, headers });
      } catch (err) {
        fail(this.#classify(err, false), 'pre-stream');
        return;
      }
      const translator = new ChatChunkTranslator(request.model);
      guard.progress();
      try {
        for await (const chunk of stream) {
          // A buffered answer is read in microtasks: let timers and I/O run now and then.
          if (guard.turnDue()) await guard.giveTurn();
          // A chunk with nothing in it (an empty delta) is not progress; SSE comments never get here.
          const events = translator.push(chunk as unknown as LooseChunk);
          if (events.length === 0) continue;
          for (const e of events) emit(e);
          if (guard.cancelled) break;
          guard.progress();
        }
      } catch (err) {
        fail(this.#classify(err, true), 'mid-stream');
        return;
      }
      if (guard.cancelled || guard.stalled || !translator.finished) {
        fail({ kind: 'truncated' }, 'mid-stream');
        return;
      }
      for (const e of translator.end()) emit(e);
    } catch (err) {
      emit({ type: 'provider_error', error: internalError(err) });
    } finally {
      guard.dispose();
    }
  }

  /** One client per provider: it holds no per-request state (signal and headers are per call). */
  #sdk(): OpenAI {
    this.#client ??= new OpenAI({
      apiKey: this.#opts.apiKey,
      baseURL: this.#opts.baseUrl,
      organization: null,
      project: null,
      // One owner of retries: the turn machine (see AnthropicProvider).
      maxRetries: 0,
      // Only until the response headers arrive; after that the stall clock watches the stream.
      timeout: this.#opts.headerTimeoutMs,
      logLevel: 'off',
    });
    return this.#client;
  }

  #classify(err: unknown, started: boolean): Failure {
    if (err instanceof OpenAI.APIUserAbortError) return { kind: 'cancelled' };
    if (err instanceof OpenAI.APIConnectionTimeoutError) return { kind: 'no-response', timeoutMs: this.#opts.headerTimeoutMs };
    if (err instanceof OpenAI.APIError && !(err instanceof OpenAI.APIConnectionError)) {
      const body = err.error as { message?: unknown } | undefined;
      const apiMessage = typeof body?.message === 'string' ? body.message : undefined;
      const errorType = typeof err.type === 'string' ? err.type : undefined;
      if (err.status === undefined) return { kind: 'stream-error', errorType, apiMessage };
      return { kind: 'http', status: err.status, errorType, apiMessage, retryAfterMs: retryAfterMs(err.headers), shouldRetry: shouldRetryHeader(err.headers) };
    }
    if (err instanceof SyntaxError) return { kind: 'malformed', detail: 'not JSON' };
    const failure = connectionFailure(err);
    return started && failure.kind === 'connection' ? { kind: 'reset', detail: failure.code ?? failure.detail } : failure;
  }
}
