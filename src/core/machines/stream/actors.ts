import { fromCallback, type EventObject } from 'xstate';
import type { TaskEvent } from '../../../shared/domain/events';
import type { ModelProvider, ProviderEvent } from '../../providers/types';
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
    // Whether the provider said the answer is quiet (`waiting`, which the machine publishes) and
    // no part of it has come since: the next part, of any kind, is told to views at once
    // (`waiting_ended`), as a tool's input has no view event of its own until it is whole.
    let quiet = false;
    const push = (e: ProviderEvent): void => {
      if (signal.aborted) return;
      if (e.type === 'waiting') quiet = true;
      else if (quiet && e.type !== 'ping' && e.type !== 'provider_error') {
        quiet = false;
        publish({ type: 'waiting_ended', taskId: input.taskId });
      }
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

type DeltaEvent = Extract<ProviderEvent, { type: 'content_block_delta' }>;
type Delta = DeltaEvent['delta'];

/**
 * Merges consecutive deltas of the same block and kind (text, thinking, tool JSON, signature)
 * into one event, so the stream machine and everything downstream handle one event per burst of
 * network data instead of one per token. Order is kept: any other event flushes the pending
 * delta first, and `flush` (called when the producer yields to the event loop) emits what is left.
 * Contract: the concatenation of the emitted deltas equals the concatenation of the received ones.
 * A delta that had nothing to merge with is emitted as received (no copy).
 */
export class DeltaCoalescer {
  /** The first pending delta; merged only when a second one of the same kind arrives. */
  private first: DeltaEvent | undefined;
  /**
   * The texts to merge, joined once on flush: the result is one flat string, which is what gets
   * kept (in the message, in the transcript), rather than a rope with a node per token.
   */
  private parts: string[] = [];

  constructor(private readonly emit: (e: ProviderEvent) => void) {}

  push(e: ProviderEvent): void {
    if (e.type === 'content_block_delta') {
      const first = this.first;
      if (first === undefined) {
        this.first = e;
        return;
      }
      if (first.delta.type === e.delta.type && first.index === e.index) {
        if (this.parts.length === 0) this.parts.push(deltaText(first.delta));
        this.parts.push(deltaText(e.delta));
        return;
      }
      this.flush();
      this.first = e;
      return;
    }
    this.flush();
    this.emit(e);
  }

  flush(): void {
    const first = this.first;
    if (first === undefined) return;
    this.first = undefined;
    if (this.parts.length === 0) {
      this.emit(first);
      return;
    }
    const merged = this.parts.join('');
    this.parts = [];
    this.emit({ type: 'content_block_delta', index: first.index, delta: makeDelta(first.delta.type, merged) });
  }
}

function deltaText(d: Delta): string {
  switch (d.type) {
    case 'text_delta':
      return d.text;
    case 'thinking_delta':
      return d.thinking;
    case 'input_json_delta':
      return d.partial_json;
    case 'signature_delta':
      return d.signature;
  }
}

function makeDelta(kind: Delta['type'], s: string): Delta {
  switch (kind) {
    case 'text_delta':
      return { type: 'text_delta', text: s };
    case 'thinking_delta':
      return { type: 'thinking_delta', thinking: s };
    case 'input_json_delta':
      return { type: 'input_json_delta', partial_json: s };
    case 'signature_delta':
      return { type: 'signature_delta', signature: s };
  }
}
