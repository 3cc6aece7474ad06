import Anthropic from '@anthropic-ai/sdk';
import { AnthropicEventMapper } from './anthropicEvents';
import { toAnthropicParams } from './anthropicRequest';
import { describeCause, findErrorCode, guardedError, internalError, retryAfterMs } from './failures';
import type { Failure, FailureContext } from './failures';
import { StreamGuard } from './streamGuard';
import type { ModelProvider, ProviderErrorPhase, ProviderEvent, ProviderRequest } from './types';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_STALL_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;

export interface AnthropicProviderOptions {
  /** Passed by the host (SecretStorage or the CLI's environment); core never reads env. */
  apiKey: string;
  model: string;
  baseUrl?: string;
  stallTimeoutMs?: number;
  maxRetries?: number;
}

/**
 * The Anthropic Messages API through `@anthropic-ai/sdk`. The SDK retries 429/529/5xx and
 * connection failures before the stream starts (honouring retry-after); everything after the
 * first byte is reported, never retried here. See {@link ModelProvider.stream} for the contract.
 */
export class AnthropicProvider implements ModelProvider {
  readonly id = 'anthropic' as const;
  readonly label: string;
  readonly #opts: Required<AnthropicProviderOptions>;
  readonly #ctx: FailureContext;

  constructor(opts: AnthropicProviderOptions) {
    this.#opts = {
      apiKey: opts.apiKey,
      model: opts.model,
      baseUrl: (opts.baseUrl || DEFAULT_ANTHROPIC_BASE_URL).replace(/\/+$/, ''),
      stallTimeoutMs: opts.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
      maxRetries: opts.maxRetries ?? DEFAULT_MAX_RETRIES,
    };
    this.label = opts.model;
    this.#ctx = {
      who: 'Anthropic',
      baseUrl: this.#opts.baseUrl,
      // How to set a key is the host's advice (TaskRuntimeOptions.advise), not the provider's.
      keyHint: '',
    };
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent, void, undefined> {
    const guard = new StreamGuard(signal, this.#opts.stallTimeoutMs);
    const fail = (f: Failure, phase: ProviderErrorPhase): ProviderEvent => ({ type: 'provider_error', error: guardedError(f, phase, guard, this.#ctx) });
    try {
      const client = new Anthropic({
        apiKey: this.#opts.apiKey,
        baseURL: this.#opts.baseUrl,
        maxRetries: this.#opts.maxRetries,
        // Until the response headers arrive, the SDK's own timeout is the stall guard (and is retried).
        timeout: this.#opts.stallTimeoutMs,
        fetch: guard.fetch,
        logLevel: 'off',
      });
      let stream: AsyncIterable<Anthropic.RawMessageStreamEvent>;
      try {
        const headers = request.taskId ? { 'x-keel-task-id': request.taskId } : undefined;
        stream = await client.messages.create(toAnthropicParams(request), { signal: guard.signal, headers });
      } catch (err) {
        yield fail(this.#classify(err, false), 'pre-stream');
        return;
      }

      const mapper = new AnthropicEventMapper();
      let finished = false;
      guard.arm();
      try {
        for await (const raw of stream) {
          const event = mapper.map(raw);
          if (!event) continue;
          guard.suspend();
          yield event;
          if (event.type === 'message_stop') {
            finished = true;
            return;
          }
          if (guard.cancelled) break;
          guard.arm();
        }
      } catch (err) {
        yield fail(this.#classify(err, true), 'mid-stream');
        return;
      }
      if (!finished) yield fail({ kind: 'truncated' }, 'mid-stream');
    } catch (err) {
      // Only reachable through a bug (e.g. the SDK rejecting its options): still a terminal event.
      yield { type: 'provider_error', error: internalError(err) };
    } finally {
      guard.dispose();
    }
  }


  #classify(err: unknown, started: boolean): Failure {
    if (err instanceof Anthropic.APIUserAbortError) return { kind: 'cancelled' };
    if (err instanceof Anthropic.APIConnectionTimeoutError) return { kind: 'connection', timedOut: true, detail: 'timed out' };
    if (err instanceof Anthropic.APIConnectionError) {
      const code = findErrorCode(err);
      return { kind: 'connection', timedOut: false, detail: describeCause(err), ...(code ? { code } : {}) };
    }
    if (err instanceof Anthropic.APIError) {
      const errorType = err.type ?? undefined;
      const apiMessage = err.apiMessage ?? undefined;
      if (err.status === undefined) return { kind: 'stream-error', errorType, apiMessage };
      return { kind: 'http', status: err.status, errorType, apiMessage, retryAfterMs: retryAfterMs(err.headers) };
    }
    if (err instanceof SyntaxError) return { kind: 'malformed', detail: 'not JSON' };
    const code = findErrorCode(err);
    if (started) return { kind: 'reset', detail: code ?? describeCause(err) };
    return { kind: 'connection', timedOut: false, detail: describeCause(err), ...(code ? { code } : {}) };
  }
}
