import Anthropic from '@anthropic-ai/sdk';
import { AnthropicEventMapper } from './anthropicEvents';
import { toAnthropicParams } from './anthropicRequest';
import { baseUrlProblem } from './connectionErrors';
import { connectionFailure, guardedError, internalError, retryAfterMs, shouldRetryHeader } from './failures';
import type { Failure, FailureContext } from './failures';
import { pulled } from './pulled';
import { StreamGuard } from './streamGuard';
import { DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS, DEFAULT_STALL_TIMEOUT_MS } from './timeouts';
import type { EmitProviderEvent, ModelProvider, ProviderErrorPhase, ProviderEvent, ProviderRequest } from './types';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

export interface AnthropicProviderOptions {
  /** Passed by the host (SecretStorage or the CLI's environment); core never reads env. */
  apiKey: string;
  model: string;
  baseUrl?: string;
  /** Default {@link DEFAULT_STALL_TIMEOUT_MS}. */
  stallTimeoutMs?: number;
  /** Default {@link DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS}. */
  headerTimeoutMs?: number;
}

/**
 * The Anthropic Messages API through `@anthropic-ai/sdk`. It never retries: the SDK's own retries
 * are off (`maxRetries: 0`), and every failure — a 429 with its retry-after, a 5xx, a refused
 * connection, a stream cut off — is reported once, as a `provider_error` that says whether it is
 * retryable. The turn machine owns retrying (backoff, capped retry-after, visible `retry` events).
 * See {@link ModelProvider.stream} for the contract.
 */
export class AnthropicProvider implements ModelProvider {
  readonly id = 'anthropic' as const;
  readonly label: string;
  readonly #opts: Required<AnthropicProviderOptions>;
  readonly #ctx: FailureContext;
  readonly #urlProblem: string | undefined;
  #client: Anthropic | undefined;

  constructor(opts: AnthropicProviderOptions) {
    this.#opts = {
      apiKey: opts.apiKey,
      model: opts.model,
      baseUrl: (opts.baseUrl || DEFAULT_ANTHROPIC_BASE_URL).replace(/\/+$/, ''),
      stallTimeoutMs: opts.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
      headerTimeoutMs: opts.headerTimeoutMs ?? DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS,
    };
    this.#urlProblem = baseUrlProblem(this.#opts.baseUrl);
    this.label = opts.model;
    this.#ctx = {
      who: 'Anthropic',
      baseUrl: this.#opts.baseUrl,
      // How to set a key is the host's advice (TaskRuntimeOptions.advise), not the provider's.
      keyHint: '',
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
      let stream: AsyncIterable<Anthropic.RawMessageStreamEvent>;
      try {
        const headers = request.taskId ? { 'x-keel-task-id': request.taskId } : undefined;
        stream = await this.#sdk().messages.create(toAnthropicParams(request), { signal: guard.signal, headers });
      } catch (err) {
        fail(this.#classify(err, false), 'pre-stream');
        return;
      }
      const mapper = new AnthropicEventMapper();
      guard.progress();
      try {
        for await (const raw of stream) {
          // A buffered answer is read in microtasks: let timers and I/O run now and then.
          if (guard.turnDue()) await guard.giveTurn();
          // Pings (and blocks Keel drops) map to nothing: they are not progress.
          const event = mapper.map(raw);
          if (event === undefined) continue;
          emit(event);
          if (event.type === 'message_stop' || event.type === 'provider_error') return;
          if (guard.cancelled) break;
          guard.progress();
        }
      } catch (err) {
        fail(this.#classify(err, true), 'mid-stream');
        return;
      }
      fail({ kind: 'truncated' }, 'mid-stream');
    } catch (err) {
      // Only reachable through a bug (e.g. the SDK rejecting its options): still a terminal event.
      emit({ type: 'provider_error', error: internalError(err) });
    } finally {
      guard.dispose();
    }
  }

  /** One client per provider: it holds no per-request state (signal and headers are per call). */
  #sdk(): Anthropic {
    this.#client ??= new Anthropic({
      apiKey: this.#opts.apiKey,
      baseURL: this.#opts.baseUrl,
      // One owner of retries: the turn machine. The SDK would otherwise retry up to its own limit
      // inside each of the machine's attempts, and obey any retry-after, however long.
      maxRetries: 0,
      // Only until the response headers arrive; after that the stall clock watches the stream.
      timeout: this.#opts.headerTimeoutMs,
      logLevel: 'off',
    });
    return this.#client;
  }

  #classify(err: unknown, started: boolean): Failure {
    if (err instanceof Anthropic.APIUserAbortError) return { kind: 'cancelled' };
    if (err instanceof Anthropic.APIConnectionTimeoutError) return { kind: 'no-response', timeoutMs: this.#opts.headerTimeoutMs };
    if (err instanceof Anthropic.APIError && !(err instanceof Anthropic.APIConnectionError)) {
      const errorType = err.type ?? undefined;
      const apiMessage = err.apiMessage ?? undefined;
      if (err.status === undefined) return { kind: 'stream-error', errorType, apiMessage };
      return { kind: 'http', status: err.status, errorType, apiMessage, retryAfterMs: retryAfterMs(err.headers), shouldRetry: shouldRetryHeader(err.headers) };
    }
    if (err instanceof SyntaxError) return { kind: 'malformed', detail: 'not JSON' };
    const failure = connectionFailure(err);
    return started && failure.kind === 'connection' ? { kind: 'reset', detail: failure.code ?? failure.detail } : failure;
  }
}
