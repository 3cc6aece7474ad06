import type Anthropic from '@anthropic-ai/sdk';
import type { StopReason } from '../../shared/domain/messages';
import type { ProviderEvent, RawContentBlockStart, RawDelta, RawUsage } from './types';

const KNOWN_DELTAS: ReadonlySet<string> = new Set(['text_delta', 'input_json_delta', 'thinking_delta', 'signature_delta']);

const STOP_REASONS: ReadonlySet<string> = new Set(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal']);

function stopReason(reason: string | null): StopReason | null {
  if (reason === null) return null;
  if (STOP_REASONS.has(reason)) return reason as StopReason;
  // A full context window ends the answer like max_tokens does.
  if (reason === 'model_context_window_exceeded') return 'max_tokens';
  return 'end_turn';
}

function usage(u: Partial<Anthropic.MessageDeltaUsage> | Partial<Anthropic.Usage>): RawUsage {
  return {
    input_tokens: u.input_tokens ?? null,
    output_tokens: u.output_tokens ?? null,
    cache_read_input_tokens: u.cache_read_input_tokens ?? null,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? null,
  };
}

function blockStart(b: Anthropic.RawContentBlockStartEvent['content_block']): RawContentBlockStart | undefined {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> };
    case 'thinking':
      return { type: 'thinking', thinking: b.thinking, signature: b.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: b.data };
    default:
      return undefined;
  }
}

function delta(d: Anthropic.RawContentBlockDelta): RawDelta | undefined {
  switch (d.type) {
    case 'text_delta':
      return { type: 'text_delta', text: d.text };
    case 'input_json_delta':
      return { type: 'input_json_delta', partial_json: d.partial_json };
    case 'thinking_delta':
      return { type: 'thinking_delta', thinking: d.thinking };
    case 'signature_delta':
      return { type: 'signature_delta', signature: d.signature };
    default:
      return undefined;
  }
}

/**
 * A delta or stop of a block the stream never started (not one Keel drops): a protocol error,
 * never dropped silently. The answer fails as malformed (retried like any malformed stream).
 */
function unstartedBlock(index: number, what: string): ProviderEvent {
  return {
    type: 'provider_error',
    error: {
      code: 'malformed_response',
      message: `The model's stream sent ${what} of content block ${index}, which it never started (a protocol error); this answer is not used.`,
      phase: 'mid-stream',
      retryable: true,
    },
  };
}

/**
 * Re-emits SDK raw stream events as `ProviderEvent`s. Blocks Keel does not handle (server tools,
 * citations) are dropped with all their events, and the remaining blocks are renumbered 0..n-1
 * so the consumer sees contiguous indices.
 */
export class AnthropicEventMapper {
  readonly #indices = new Map<number, number>();
  /** Blocks Keel drops (their later events are dropped with them, legitimately). */
  readonly #dropped = new Set<number>();
  #next = 0;

  map(e: Anthropic.RawMessageStreamEvent): ProviderEvent | undefined {
    switch (e.type) {
      case 'message_start':
        return { type: 'message_start', message: { id: e.message.id, model: e.message.model, usage: usage(e.message.usage) } };
      case 'content_block_start': {
        const block = blockStart(e.content_block);
        if (!block) {
          this.#dropped.add(e.index);
          return undefined;
        }
        const index = this.#next++;
        this.#indices.set(e.index, index);
        return { type: 'content_block_start', index, content_block: block };
      }
      case 'content_block_delta': {
        const index = this.#indices.get(e.index);
        if (index === undefined) return this.#dropped.has(e.index) ? undefined : unstartedBlock(e.index, 'a delta');
        // The hot path (one event per token burst): a delta of a known kind whose block kept its
        // number is already in Keel's shape, so it passes through without a copy.
        if (index === e.index && KNOWN_DELTAS.has(e.delta.type)) return e as ProviderEvent;
        const d = delta(e.delta);
        return d ? { type: 'content_block_delta', index, delta: d } : undefined;
      }
      case 'content_block_stop': {
        const index = this.#indices.get(e.index);
        if (index === undefined) return this.#dropped.has(e.index) ? undefined : unstartedBlock(e.index, 'the end');
        return { type: 'content_block_stop', index };
      }
      case 'message_delta':
        return { type: 'message_delta', delta: { stop_reason: stopReason(e.delta.stop_reason) }, usage: usage(e.usage) };
      case 'message_stop':
        return { type: 'message_stop' };
      default:
        return undefined;
    }
  }
}
