import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer } from '../../fixtures/fake-model-server';
import type { FakeModelServer } from '../../fixtures/fake-model-server';

let server: FakeModelServer;
let client: OpenAI;

beforeEach(async () => {
  server = await startFakeModelServer();
  client = new OpenAI({ apiKey: 'not-needed', baseURL: `${server.url}/v1`, maxRetries: 0, logLevel: 'off' });
});
afterEach(async () => {
  await server.close();
});

const base = { model: 'qwen-test', messages: [{ role: 'user' as const, content: 'hi' }] };

async function chunks(includeUsage: boolean): Promise<OpenAI.Chat.Completions.ChatCompletionChunk[]> {
  const stream = await client.chat.completions.create({
    ...base,
    stream: true,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  });
  const out: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

describe('fake model server: OpenAI chat.completions streaming through the real SDK', () => {
  it('streams text deltas and a final usage chunk when include_usage is set', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Hello there, OpenAI client.' }], usage: { input_tokens: 12, output_tokens: 7 } });
    const got = await chunks(true);
    const text = got.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Hello there, OpenAI client.');
    expect(got.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(got.at(-1)?.choices).toEqual([]);
    expect(got.at(-1)?.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });

    server.enqueue({ blocks: [{ type: 'text', text: 'no usage' }] });
    const without = await chunks(false);
    expect(without.some((c) => c.usage)).toBe(false);
  });

  it('sends tool calls as fragments by index that the SDK stream helper reassembles', async () => {
    const a = { path: 'a.txt' };
    const b = { command: 'ls -la', timeout: 5 };
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'call_a', name: 'read', input: a }, { type: 'tool_use', id: 'call_b', name: 'bash', input: b }], chunkSize: 3 });
    const completion = await client.chat.completions.stream(base).finalChatCompletion();
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const calls = choice?.message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : []));
    expect(calls).toEqual([['call_a', 'read', a], ['call_b', 'bash', b]]);
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
  });

  it('can omit the tool-call index and id and override finish_reason, as some servers do', async () => {
    server.enqueue({
      blocks: [{ type: 'tool_use', name: 'read', input: { path: 'x' } }],
      openai: { omitToolCallIndex: true, omitToolCallId: true, finishReason: 'stop' },
    });
    const got = await chunks(false);
    const fragments = got.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(fragments.length).toBeGreaterThan(1);
    expect(fragments.every((f) => f.index === undefined && f.id === undefined)).toBe(true);
    expect(got.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('faults: 429 with the OpenAI error shape, midstream error, malformed line', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 429, retryAfterSeconds: 3 } });
    const e1 = await chunks(true).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(OpenAI.RateLimitError);
    expect((e1 as InstanceType<typeof OpenAI.RateLimitError>).type).toBe('rate_limit_error');

    server.enqueue({ blocks: [{ type: 'text', text: 'abcdefghijklmnop' }], fault: { kind: 'midstream-error', afterEvents: 2 } });
    const e2 = await chunks(true).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(OpenAI.APIError);
    expect((e2 as InstanceType<typeof OpenAI.APIError>).type).toBe('overloaded_error');

    server.enqueue({ blocks: [{ type: 'text', text: 'abcdefghijklmnop' }], fault: { kind: 'malformed', afterEvents: 2 } });
    const e3 = await chunks(true).catch((e: unknown) => e);
    expect(e3).toBeInstanceOf(SyntaxError);
  });

  it('sends thinking as reasoning_content deltas', async () => {
    server.enqueue({ blocks: [{ type: 'thinking', thinking: 'hmm, let me see' }, { type: 'text', text: 'ok' }] });
    const got = await chunks(false);
    const reasoning = got.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('');
    expect(reasoning).toBe('hmm, let me see');
  });
});
