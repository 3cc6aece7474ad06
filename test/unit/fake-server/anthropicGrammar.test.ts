import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderAnthropicSse, startFakeModelServer } from '../../fixtures/fake-model-server';
import type { FakeModelServer } from '../../fixtures/fake-model-server';

let server: FakeModelServer;
let client: Anthropic;

beforeEach(async () => {
  server = await startFakeModelServer();
  client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0, logLevel: 'off' });
});
afterEach(async () => {
  await server.close();
});

const base = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };

async function rawEvents(): Promise<Anthropic.RawMessageStreamEvent[]> {
  const stream = await client.messages.create({ ...base, stream: true });
  const out: Anthropic.RawMessageStreamEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe('fake model server: Anthropic grammar through the real SDK', () => {
  it('streams text in several deltas that the SDK assembles', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Hello from the fake model server!' }], chunkSize: 5 });
    const stream = client.messages.stream(base);
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the fake model server!' }]);
    expect(deltas.length).toBe(7);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.model).toBe('claude-test');
  });

  it('reassembles tool input JSON split across many input_json_delta fragments', async () => {
    const input = { path: 'src/a.ts', content: 'export const x = "ü";\n', nested: { n: [1, 2, 3] } };
    server.enqueue({ blocks: [{ type: 'text', text: 'Writing.' }, { type: 'tool_use', id: 'toolu_1', name: 'write_file', input }], chunkSize: 4 });
    const events = await rawEvents();
    const fragments = events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta');
    expect(fragments.length).toBeGreaterThan(10);

    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_2', name: 'write_file', input }], chunkSize: 3 });
    const message = await client.messages.stream(base).finalMessage();
    expect(message.content).toEqual([{ type: 'tool_use', id: 'toolu_2', name: 'write_file', input }]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('streams thinking with its signature', async () => {
    server.enqueue({ blocks: [{ type: 'thinking', thinking: 'Let me think about this.', signature: 'sig-abc' }, { type: 'text', text: 'Done.' }] });
    const message = await client.messages.stream(base).finalMessage();
    expect(message.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think about this.', signature: 'sig-abc' });
    expect(message.content[1]).toMatchObject({ type: 'text', text: 'Done.' });
  });

  it('reports cumulative usage in message_delta and the scripted stop reason', async () => {
    server.enqueue({
      blocks: [{ type: 'text', text: 'cut' }],
      stopReason: 'max_tokens',
      usage: { input_tokens: 1000, output_tokens: 50, cache_read_input_tokens: 900, cache_creation_input_tokens: 10 },
    });
    const events = await rawEvents();
    const delta = events.find((e) => e.type === 'message_delta');
    expect(delta).toMatchObject({
      delta: { stop_reason: 'max_tokens' },
      usage: { input_tokens: 1000, output_tokens: 50, cache_read_input_tokens: 900, cache_creation_input_tokens: 10 },
    });
    expect(events.at(-1)?.type).toBe('message_stop');
  });

  it('interleaves ping events, and renderAnthropicSse yields the bytes the server sends', async () => {
    const turn = { blocks: [{ type: 'text' as const, text: 'abcdefghijklmnopqrstuvwxyz' }], chunkSize: 4 };
    server.enqueue(turn);
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...base, stream: true }),
    });
    const served = await res.text();
    const pings = served.split('\n').filter((l) => l === 'event: ping').length;
    expect(pings).toBeGreaterThanOrEqual(2);
    const normalize = (s: string): string => s.replace(/"msg_fake_[^"]+"/g, '"ID"');
    expect(normalize(served)).toBe(normalize(renderAnthropicSse(turn, { model: 'claude-test' })));
  });

  it('plays the fallback turn, or a short default text, when the queue is empty', async () => {
    const message = await client.messages.stream(base).finalMessage();
    expect(message.content[0]).toMatchObject({ text: '(fake model: no scripted turn)' });
    const other = await startFakeModelServer({ fallback: { blocks: [{ type: 'text', text: 'fallback!' }] } });
    try {
      const c2 = new Anthropic({ apiKey: 'k', baseURL: other.url, maxRetries: 0 });
      const m1 = await c2.messages.stream(base).finalMessage();
      const m2 = await c2.messages.stream(base).finalMessage();
      expect([m1.content[0], m2.content[0]]).toMatchObject([{ text: 'fallback!' }, { text: 'fallback!' }]);
    } finally {
      await other.close();
    }
  });

  it('answers stream:false with a whole Message', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'whole' }] });
    const message = await client.messages.create(base);
    expect(message.content).toEqual([{ type: 'text', text: 'whole' }]);
  });
});
