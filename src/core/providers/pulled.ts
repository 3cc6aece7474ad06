import { internalError } from './failures';
import type { EmitProviderEvent, ProviderEvent } from './types';

/**
 * A pushed provider stream (`streamTo`) as an async iterable, for consumers that pull (tests, the
 * summariser). The request runs at the network's pace, not the consumer's: events wait in a
 * queue, so a slow consumer never looks like a stalled server. When `signal` aborts, or the
 * consumer stops iterating, the request is aborted; after an abort only the terminal event is
 * still delivered. The iteration ends only once the request has really ended.
 */
export async function* pulled(run: (signal: AbortSignal, emit: EmitProviderEvent) => Promise<void>, signal: AbortSignal): AsyncGenerator<ProviderEvent, void, undefined> {
  const inner = new AbortController();
  const onAbort = (): void => inner.abort(signal.reason);
  if (signal.aborted) inner.abort(signal.reason);
  else signal.addEventListener('abort', onAbort, { once: true });

  let queue: ProviderEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const emit = (e: ProviderEvent): void => {
    queue.push(e);
    wake?.();
  };
  const done = run(inner.signal, emit)
    .catch((err: unknown) => emit({ type: 'provider_error', error: internalError(err) }))
    .finally(() => {
      ended = true;
      wake?.();
    });
  try {
    for (;;) {
      const batch = queue;
      queue = [];
      for (const e of batch) {
        if (inner.signal.aborted && e.type !== 'provider_error') continue;
        yield e;
      }
      if (ended && queue.length === 0) return;
      if (queue.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    }
  } finally {
    inner.abort();
    signal.removeEventListener('abort', onAbort);
    await done;
  }
}
