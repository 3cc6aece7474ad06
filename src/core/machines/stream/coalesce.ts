import type { ProviderEvent } from '../../providers/types';

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
