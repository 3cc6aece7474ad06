import type { StopReason } from '../../shared/domain/messages';
import type { ModelProvider, ProviderError, ProviderEvent, ProviderId, ProviderRequest, RawUsage } from './types';

/** One scripted model answer (the in-core twin of the fake server's FakeTurn). */
export interface ScriptedTurn {
  blocks: ScriptedBlock[];
  /** Default: tool_use if any tool_use block, else end_turn. */
  stopReason?: StopReason;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  /** Characters per delta (default 8). */
  chunkSize?: number;
  /** Delay before each event after the first, in ms (default 0). */
  delayMs?: number;
  /** End with this error after `afterEvents` events instead of finishing. */
  error?: { afterEvents: number; error: ProviderError };
  model?: string;
}
export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id?: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature?: string };

/** Either a queue of turns or a function that answers each request. */
export type Script = ScriptedTurn[] | ((request: ProviderRequest, callIndex: number) => ScriptedTurn);

export interface ScriptedProviderOptions {
  id?: Extract<ProviderId, 'scripted' | 'demo'>;
  label?: string;
  /** Played when a queue script runs out (default: a short text turn). */
  fallback?: ScriptedTurn;
}

let idCounter = 0;
function nextId(prefix: string): string {
  idCounter += 1;
  return `${prefix}${Date.now().toString(36)}${idCounter.toString(36)}`;
}

function pieces(text: string, size: number): string[] {
  if (text.length === 0) return [''];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The full event sequence of a turn in the provider grammar (without its scripted error). */
export function scriptedEvents(turn: ScriptedTurn, model: string): ProviderEvent[] {
  const size = Math.max(1, turn.chunkSize ?? 8);
  const u = turn.usage ?? {};
  const usage: RawUsage = {
    input_tokens: u.input_tokens ?? 10,
    output_tokens: u.output_tokens ?? 0,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
  };
  const events: ProviderEvent[] = [
    { type: 'message_start', message: { id: nextId('msg_scripted_'), model: turn.model ?? model, usage: { ...usage, output_tokens: 1 } } },
    { type: 'ping' },
  ];
  let outputChars = 0;
  turn.blocks.forEach((b, index) => {
    if (b.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const text of pieces(b.text, size)) events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      outputChars += b.text.length;
    } else if (b.type === 'thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of pieces(b.thinking, size)) events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature ?? `sig_scripted_${index}` } });
      outputChars += b.thinking.length;
    } else {
      const json = JSON.stringify(b.input);
      events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id ?? nextId('toolu_scripted_'), name: b.name, input: {} } });
      for (const partial_json of pieces(json, size)) events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      outputChars += json.length;
    }
    events.push({ type: 'content_block_stop', index });
  });
  const stop = turn.stopReason ?? (turn.blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  events.push(
    { type: 'message_delta', delta: { stop_reason: stop }, usage: { ...usage, output_tokens: u.output_tokens ?? Math.ceil(outputChars / 4) + 1 } },
    { type: 'message_stop' },
  );
  return events;
}

const CANCELLED: ProviderError = { code: 'cancelled', message: 'The request was cancelled.', phase: 'mid-stream', retryable: false };
const DEFAULT_FALLBACK: ScriptedTurn = { blocks: [{ type: 'text', text: '(scripted provider: no scripted turn)' }] };

/**
 * Plays scripted turns through the provider grammar, with an optional delay per event, and
 * honours abort (ending with `cancelled`). Records every request it was given. Used by unit
 * tests and by the demo provider; never touches the network.
 */
export class ScriptedProvider implements ModelProvider {
  readonly id: Extract<ProviderId, 'scripted' | 'demo'>;
  readonly label: string;
  readonly requests: ProviderRequest[] = [];
  readonly #queue: ScriptedTurn[];
  readonly #answer: ((request: ProviderRequest, callIndex: number) => ScriptedTurn) | undefined;
  readonly #fallback: ScriptedTurn;

  constructor(script: Script = [], opts: ScriptedProviderOptions = {}) {
    this.id = opts.id ?? 'scripted';
    this.label = opts.label ?? 'scripted model';
    this.#queue = Array.isArray(script) ? [...script] : [];
    this.#answer = Array.isArray(script) ? undefined : script;
    this.#fallback = opts.fallback ?? DEFAULT_FALLBACK;
  }

  /** Adds turns to a queue script. */
  enqueue(...turns: ScriptedTurn[]): void {
    this.#queue.push(...turns);
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent, void, undefined> {
    const callIndex = this.requests.length;
    this.requests.push(request);
    let turn: ScriptedTurn;
    try {
      turn = this.#answer ? this.#answer(request, callIndex) : (this.#queue.shift() ?? this.#fallback);
    } catch (err) {
      yield { type: 'provider_error', error: { code: 'internal', message: `The script failed: ${String(err)}`, phase: 'connect', retryable: false } };
      return;
    }
    const events = scriptedEvents(turn, request.model);
    const cut = turn.error ? Math.min(turn.error.afterEvents, events.length) : events.length;
    for (let i = 0; i < cut; i += 1) {
      if (i > 0 && (turn.delayMs ?? 0) > 0) await delay(turn.delayMs ?? 0, signal);
      if (signal.aborted) {
        yield { type: 'provider_error', error: { ...CANCELLED, phase: i === 0 ? 'connect' : 'mid-stream' } };
        return;
      }
      const e = events[i];
      if (e) yield e;
    }
    // Without a scripted error the loop ended with message_stop.
    if (turn.error) yield { type: 'provider_error', error: signal.aborted ? CANCELLED : turn.error.error };
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
