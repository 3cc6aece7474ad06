import { scriptedEvents } from '../../../src/core/providers/scripted';
import type { ModelProvider, ProviderEvent, ProviderRequest } from '../../../src/core/providers/types';
import type { ConversationMessage } from '../../../src/shared/domain/messages';
import { Changes } from './changes';

/**
 * A model whose every request waits until the test answers it (or the request is aborted: it
 * then ends `cancelled`, as the real providers do), and which keeps each request's conversation
 * and counts the requests in flight at once.
 */
export class CountingModel implements ModelProvider {
  readonly id = 'scripted' as const;
  readonly label = 'counting model';
  readonly requests: ConversationMessage[][] = [];
  inFlight = 0;
  maxInFlight = 0;
  private readonly waiting: ((text: string) => void)[] = [];
  /** Notified when a request arrives or ends. */
  readonly changes = new Changes();

  /** Answers the oldest request waiting with `text`; throws when none waits. */
  answer(text: string): void {
    const next = this.waiting.shift();
    if (!next) throw new Error('no request is waiting for an answer');
    next(text);
  }

  /** Resolves once `n` requests have arrived (at a request's arrival: no clock). */
  requestsSeen(n: number): Promise<void> {
    return this.changes.until(() => this.requests.length >= n, () => `${n} requests (got ${this.requests.length})`);
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent, void, undefined> {
    this.requests.push(structuredClone(request.messages));
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.changes.notify();
    try {
      const text = await new Promise<string | null>((resolve) => {
        this.waiting.push(resolve);
        signal.addEventListener('abort', () => resolve(null), { once: true });
      });
      if (text === null) {
        yield { type: 'provider_error', error: { code: 'cancelled', message: 'The request was cancelled.', phase: 'connect', retryable: false } };
        return;
      }
      yield* scriptedEvents({ blocks: [{ type: 'text', text }] }, request.model);
    } finally {
      this.inFlight -= 1;
      this.changes.notify();
    }
  }
}

