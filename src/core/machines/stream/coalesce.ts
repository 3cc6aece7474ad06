import type { ProviderEvent } from '../../providers/types';

/**
 * Merges consecutive deltas of the same block and kind (text, thinking, tool JSON, signature)
 * into one event, so the stream machine and everything downstream handle one event per burst of
 * network data instead of one per token. Order is kept: any other event flushes the pending
 * delta first, and `flush` (called when the producer yields to the event loop) emits what is left.
 * Contract: the concatenation of the emitted deltas equals the concatenation of the received ones.
 */
export class DeltaCoalescer {
  private index = -1;
  private kind: Delta['type'] | null = null;
  private parts: string[] = [];

  constructor(private readonly emit: (e: ProviderEvent) => void) {}

  push(e: ProviderEvent): void {
    if (e.type === 'content_block_delta') {
      if (this.kind !== e.delta.type || this.index !== e.index) {
        this.flush();
        this.index = e.index;
        this.kind = e.delta.type;
      }
      this.parts.push(deltaText(e.delta));
      return;
    }
    this.flush();
    this.emit(e);
  }

  flush(): void {
    const kind = this.kind;
    if (kind === null) return;
    const joined = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.kind = null;
    this.parts = [];
    this.emit({ type: 'content_block_delta', index: this.index, delta: makeDelta(kind, joined) });
  }
}

type Delta = Extract<ProviderEvent, { type: 'content_block_delta' }>['delta'];

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
