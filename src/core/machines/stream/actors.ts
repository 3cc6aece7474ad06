import { fromCallback, type EventObject } from 'xstate';
import type { ModelProvider } from '../../providers/types';
import { DeltaCoalescer } from './coalesce';
import type { StreamInput } from './stream.machine';

/**
 * The I/O of the stream machine: iterates `provider.stream` and sends every event back, in
 * order, with consecutive deltas of one block merged (DeltaCoalescer) until the next turn of the
 * event loop, so a burst of tokens is one machine event. Stopping the actor (cancel, the parent
 * leaving its state) aborts the request.
 * Contract: the promise given to `track` settles only once the provider's iteration has ended.
 */
export function providerStreamActor(getProvider: () => ModelProvider, track: (done: Promise<void>) => void = () => {}) {
  return fromCallback<EventObject, StreamInput>(({ sendBack, input }) => {
    const controller = new AbortController();
    const coalescer = new DeltaCoalescer((e) => {
      if (!controller.signal.aborted) sendBack(e);
    });
    let flushScheduled = false;
    const scheduleFlush = () => {
      if (flushScheduled) return;
      flushScheduled = true;
      setImmediate(() => {
        flushScheduled = false;
        coalescer.flush();
      });
    };
    // `track` learns when the request has really ended (after an abort too), so the task lock
    // can be held until then: at most one request per task is ever in flight.
    track(
      (async () => {
        try {
          for await (const event of getProvider().stream({ ...input.request, taskId: input.taskId }, controller.signal)) {
            if (controller.signal.aborted) return;
            coalescer.push(event);
            scheduleFlush();
          }
          coalescer.flush();
        } catch (err) {
          // Providers must not throw; if one does, it is still a defined failure, not a crash.
          coalescer.flush();
          if (!controller.signal.aborted) {
            sendBack({ type: 'provider_error', error: { code: 'internal', message: `Provider failed: ${(err as Error).message}`, phase: 'mid-stream', retryable: false } });
          }
        }
      })(),
    );
    return () => controller.abort();
  });
}
