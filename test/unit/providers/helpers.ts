import { expect } from 'vitest';
import type { ModelProvider, ProviderError, ProviderEvent, ProviderRequest } from '../../../src/core/providers/types';

export function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    model: 'claude-test',
    system: ['You are Keel.'],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    maxTokens: 1024,
    ...overrides,
  };
}

/**
 * Drains a provider stream and checks the contract on the way: it never throws, and it ends with
 * message_stop or with exactly one provider_error as its last event.
 */
export async function collect(
  provider: ModelProvider,
  req: ProviderRequest,
  signal: AbortSignal = new AbortController().signal,
  onEvent?: (e: ProviderEvent) => void | Promise<void>,
): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const e of provider.stream(req, signal)) {
    events.push(e);
    await onEvent?.(e);
  }
  const errors = events.filter((e) => e.type === 'provider_error');
  const last = events.at(-1);
  expect(last?.type === 'message_stop' || last?.type === 'provider_error').toBe(true);
  expect(errors.length).toBeLessThanOrEqual(1);
  if (errors.length === 1) expect(last?.type).toBe('provider_error');
  return events;
}

export function errorOf(events: ProviderEvent[]): ProviderError | undefined {
  const last = events.at(-1);
  return last?.type === 'provider_error' ? last.error : undefined;
}

export function textOf(events: ProviderEvent[]): string {
  return events
    .map((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : ''))
    .join('');
}

/** The reassembled tool inputs, by block index. */
export function toolInputs(events: ProviderEvent[]): { id: string; name: string; input: unknown }[] {
  const calls = new Map<number, { id: string; name: string; json: string }>();
  for (const e of events) {
    if (e.type === 'content_block_start' && e.content_block.type === 'tool_use') {
      calls.set(e.index, { id: e.content_block.id, name: e.content_block.name, json: '' });
    }
    if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') {
      const c = calls.get(e.index);
      if (c) c.json += e.delta.partial_json;
    }
  }
  return [...calls.values()].map((c) => ({ id: c.id, name: c.name, input: c.json === '' ? {} : JSON.parse(c.json) }));
}

export function stopReasonOf(events: ProviderEvent[]): string | null | undefined {
  const d = events.find((e) => e.type === 'message_delta');
  return d?.type === 'message_delta' ? d.delta.stop_reason : undefined;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
