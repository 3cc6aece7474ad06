import type { ModelProvider, ProviderEvent, ProviderRequest } from '../../../src/core/providers/types';

/**
 * A ModelProvider for unit tests of the machines: plays scripted event lists, one per request,
 * and records every request and how many were in flight at once.
 */
export type Step = ProviderEvent[] | ((req: ProviderRequest) => ProviderEvent[]);

export class ListProvider implements ModelProvider {
  readonly id = 'scripted' as const;
  readonly label = 'list provider';
  readonly requests: ProviderRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;

  constructor(private readonly steps: Step[], private readonly delayMs = 0) {}

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const step = this.steps.shift() ?? textTurn('(no more steps)');
      const events = typeof step === 'function' ? step(request) : step;
      for (const e of events) {
        if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
        if (signal.aborted) {
          yield { type: 'provider_error', error: { code: 'cancelled', message: 'cancelled', phase: 'mid-stream', retryable: false } };
          return;
        }
        yield e;
      }
    } finally {
      this.inFlight--;
    }
  }
}

let n = 0;
export function start(): ProviderEvent {
  return { type: 'message_start', message: { id: `msg_${++n}`, model: 'test-model', usage: { input_tokens: 10, output_tokens: 1 } } };
}
export function end(stop: 'end_turn' | 'tool_use' | 'max_tokens' | 'pause_turn' | 'refusal', output = 5): ProviderEvent[] {
  return [
    { type: 'message_delta', delta: { stop_reason: stop }, usage: { output_tokens: output } },
    { type: 'message_stop' },
  ];
}
export function textBlock(index: number, text: string, chunk = 4): ProviderEvent[] {
  const out: ProviderEvent[] = [{ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }];
  for (let i = 0; i < text.length; i += chunk) out.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: text.slice(i, i + chunk) } });
  out.push({ type: 'content_block_stop', index });
  return out;
}
export function toolBlock(index: number, id: string, name: string, input: Record<string, unknown>, { stop = true } = {}): ProviderEvent[] {
  const json = JSON.stringify(input);
  const out: ProviderEvent[] = [{ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }];
  for (let i = 0; i < json.length; i += 5) out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 5) } });
  if (stop) out.push({ type: 'content_block_stop', index });
  return out;
}
export function thinkingBlock(index: number, thinking: string, signature: string): ProviderEvent[] {
  return [
    { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } },
    { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } },
    { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } },
    { type: 'content_block_stop', index },
  ];
}
export function textTurn(text: string): ProviderEvent[] {
  return [start(), ...textBlock(0, text), ...end('end_turn')];
}
export function toolTurn(id: string, name: string, input: Record<string, unknown>, preface = ''): ProviderEvent[] {
  return preface
    ? [start(), ...textBlock(0, preface), ...toolBlock(1, id, name, input), ...end('tool_use')]
    : [start(), ...toolBlock(0, id, name, input), ...end('tool_use')];
}
export function midStreamError(code: 'overloaded' | 'connection_reset' = 'overloaded'): ProviderEvent[] {
  return [start(), ...textBlock(0, 'partial answer that will be cut').slice(0, 3), { type: 'provider_error', error: { code, message: `${code} mid-stream`, phase: 'mid-stream', retryable: true } }];
}
