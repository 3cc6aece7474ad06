import { fromCallback, type EventObject } from 'xstate';
import type { TaskEvent } from '../../../shared/domain/events';
import type { ModelProvider, ProviderEvent } from '../../providers/types';
import { DeltaCoalescer } from './coalesce';
import { deltaEvent, type StreamInput } from './stream.machine';
import { errorMessage } from '../../../shared/domain/errors';

/**
 * The I/O of the stream machine: runs `provider.streamTo` (or iterates `provider.stream`) and
 * hands every event on, in order. Consecutive deltas of one block are merged (DeltaCoalescer)
 * until the next turn of the event loop; each merged delta of text or thinking is published to
 * views through `publish` (at most one update per block per turn), then merged again until the
 * block's next other event before the machine gets it. So the machine assembles the message from
 * one delta per block rather than one per token, yet still sees the whole grammar (block starts
 * and stops, stop reason, errors), and a view always has a block's text before the machine
 * handles what follows it. Stopping the actor (cancel, the parent leaving its state) aborts the
 * request. Contract: the promise given to `track` settles only once the request has ended.
 */
export function providerStreamActor(getProvider: () => ModelProvider, track: (done: Promise<void>) => void = () => {}, publish: (e: TaskEvent) => void = () => {}) {
  return fromCallback<EventObject, StreamInput>(({ sendBack, input }) => {
    const controller = new AbortController();
    const { signal } = controller;
    // Second lane: the turn's merged deltas, merged again until the block's next other event.
    const toMachine = new DeltaCoalescer((e) => {
      if (!signal.aborted) sendBack(e);
    });
    // First lane: deltas merged until the next turn of the event loop; text and thinking go to
    // views, and every merged delta on to the machine's lane.
    // Blocks the stream started: a delta of any other is not shown (the machine fails the answer).
    const started = new Set<number>();
    const perTurn = new DeltaCoalescer((e) => {
      if (signal.aborted || e.type !== 'content_block_delta') return;
      const published = started.has(e.index) ? deltaEvent(input.taskId, e) : null;
      if (published) publish(published);
      toMachine.push(e);
    });
    let flushScheduled = false;
    const flushTurn = (): void => {
      flushScheduled = false;
      perTurn.flush();
    };
    const push = (e: ProviderEvent): void => {
      if (signal.aborted) return;
      if (e.type === 'content_block_delta') {
        perTurn.push(e);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flushTurn);
        }
        return;
      }
      perTurn.flush();
      if (e.type === 'content_block_start') started.add(e.index);
      toMachine.push(e);
    };
    const end = (): void => {
      perTurn.flush();
      toMachine.flush();
    };
    // `track` learns when the request has really ended (after an abort too), so the task lock
    // can be held until then: at most one request per task is ever in flight.
    track(
      (async () => {
        try {
          const provider = getProvider();
          const request = { ...input.request, taskId: input.taskId };
          if (provider.streamTo) {
            await provider.streamTo(request, signal, push);
          } else {
            for await (const event of provider.stream(request, signal)) {
              if (signal.aborted) return;
              push(event);
            }
          }
          end();
        } catch (err) {
          // Providers must not throw; if one does, it is still a defined failure, not a crash.
          end();
          if (!signal.aborted) {
            sendBack({ type: 'provider_error', error: { code: 'internal', message: `Provider failed: ${errorMessage(err)}`, phase: 'mid-stream', retryable: false } });
          }
        }
      })(),
    );
    return () => controller.abort();
  });
}
