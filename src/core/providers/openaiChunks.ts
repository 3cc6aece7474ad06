import type { StopReason } from '../../shared/domain/messages';
import type { ProviderEvent, RawUsage } from './types';

/**
 * What a chat.completion.chunk may look like across OpenAI-compatible servers. Parsed loosely on
 * purpose: some servers omit `index` or `id` on tool-call fragments, or send arguments as objects.
 */
export interface LooseChunk {
  id?: string;
  model?: string;
  choices?: {
    delta?: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: LooseToolCall[] | null;
    } | null;
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | null;
}
interface LooseToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: unknown };
}
interface Call {
  id?: string;
  name: string;
  args: string;
}

let callCounter = 0;
function generatedCallId(): string {
  callCounter += 1;
  return `call_keel_${Date.now().toString(36)}_${callCounter}`;
}

/**
 * Turns chat.completion.chunks into the Anthropic stream grammar. Text and reasoning stream as
 * they arrive; tool calls are accumulated by index and emitted as tool_use blocks once the
 * stream ends, from the calls actually received (whatever finish_reason says).
 */
export class ChatChunkTranslator {
  readonly #model: string;
  #started = false;
  #next = 0;
  #open: { kind: 'text' | 'thinking'; index: number } | undefined;
  readonly #calls: Call[] = [];
  readonly #byIndex = new Map<number, Call>();
  #finishReason: string | undefined;
  #usage: RawUsage = { input_tokens: null, output_tokens: null, cache_read_input_tokens: null, cache_creation_input_tokens: null };

  constructor(model: string) {
    this.#model = model;
  }

  /** A finish_reason was seen: the answer is complete once the stream ends. */
  get finished(): boolean {
    return this.#finishReason !== undefined;
  }

  push(chunk: LooseChunk): ProviderEvent[] {
    const out: ProviderEvent[] = [];
    if (!this.#started) {
      this.#started = true;
      out.push({
        type: 'message_start',
        message: { id: chunk.id || generatedCallId(), model: chunk.model || this.#model, usage: { input_tokens: 0, output_tokens: 0 } },
      });
    }
    if (chunk.usage) this.#setUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    const delta = choice.delta ?? {};
    const reasoning = delta.reasoning_content || delta.reasoning;
    if (reasoning) {
      out.push(...this.#openBlock('thinking'));
      out.push({ type: 'content_block_delta', index: this.#next - 1, delta: { type: 'thinking_delta', thinking: reasoning } });
    }
    if (delta.content) {
      out.push(...this.#openBlock('text'));
      out.push({ type: 'content_block_delta', index: this.#next - 1, delta: { type: 'text_delta', text: delta.content } });
    }
    for (const fragment of delta.tool_calls ?? []) this.#addFragment(fragment);
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    return out;
  }

  /** The closing events: open block stop, tool_use blocks, message_delta, message_stop. */
  end(): ProviderEvent[] {
    const out: ProviderEvent[] = this.#closeOpen();
    const calls = this.#calls.filter((c) => c.name || c.args);
    for (const call of calls) {
      const index = this.#next++;
      out.push(
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id || generatedCallId(), name: call.name, input: {} } },
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.args || '{}' } },
        { type: 'content_block_stop', index },
      );
    }
    out.push({ type: 'message_delta', delta: { stop_reason: this.#stopReason(calls.length > 0) }, usage: this.#usage }, { type: 'message_stop' });
    return out;
  }

  #stopReason(hasCalls: boolean): StopReason {
    // A cut-off answer is max_tokens even with tool calls: their input may be truncated.
    if (this.#finishReason === 'length') return 'max_tokens';
    if (hasCalls) return 'tool_use';
    if (this.#finishReason === 'content_filter') return 'refusal';
    return 'end_turn';
  }

  #openBlock(kind: 'text' | 'thinking'): ProviderEvent[] {
    if (this.#open?.kind === kind) return [];
    const out = this.#closeOpen();
    const index = this.#next++;
    this.#open = { kind, index };
    out.push({
      type: 'content_block_start',
      index,
      content_block: kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' },
    });
    return out;
  }

  #closeOpen(): ProviderEvent[] {
    if (!this.#open) return [];
    const { index } = this.#open;
    this.#open = undefined;
    return [{ type: 'content_block_stop', index }];
  }

  #addFragment(f: LooseToolCall): void {
    const call = this.#callFor(f);
    if (f.id && !call.id) call.id = f.id;
    if (f.function?.name && !call.name) call.name = f.function.name;
    const args = f.function?.arguments;
    if (typeof args === 'string') call.args += args;
    else if (args !== undefined && args !== null) call.args = JSON.stringify(args);
  }

  /** By index when given; without one, a fragment continues the last call unless it plainly starts a new one. */
  #callFor(f: LooseToolCall): Call {
    if (typeof f.index === 'number') {
      let call = this.#byIndex.get(f.index);
      if (!call) {
        call = { name: '', args: '' };
        this.#byIndex.set(f.index, call);
        this.#calls.push(call);
      }
      return call;
    }
    const last = this.#calls.at(-1);
    const startsNew =
      !last ||
      (f.id !== undefined && last.id !== undefined && f.id !== last.id) ||
      (f.function?.name !== undefined && f.function.name !== '' && last.name !== '');
    if (!startsNew) return last;
    const call: Call = { name: '', args: '' };
    this.#calls.push(call);
    return call;
  }

  #setUsage(u: NonNullable<LooseChunk['usage']>): void {
    const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
    this.#usage = {
      input_tokens: u.prompt_tokens !== undefined ? Math.max(0, u.prompt_tokens - cached) : null,
      output_tokens: u.completion_tokens ?? null,
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: 0,
    };
  }
}
