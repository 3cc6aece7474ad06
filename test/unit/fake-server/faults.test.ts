import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer } from '../../fixtures/fake-model-server';
import type { FakeModelServer } from '../../fixtures/fake-model-server';
import { eventually } from '../helpers/changes';

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
const text = { type: 'text' as const, text: 'some text that is long enough to need several deltas' };

/** Consumes a raw stream; returns the event types seen and the error thrown, if any. */
async function consume(signal?: AbortSignal): Promise<{ types: string[]; error: unknown }> {
  const types: string[] = [];
  try {
    const stream = await client.messages.create({ ...base, stream: true }, { signal });
    for await (const e of stream) types.push(e.type);
    return { types, error: undefined };
  } catch (error) {
    return { types, error };
  }
}

describe('fake model server: faults seen through the real Anthropic SDK', () => {
  it('answers an http fault with the real error shape and retry-after', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'http', status: 429, retryAfterSeconds: 7 } });
    const { error } = await consume();
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const e = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.status).toBe(429);
    expect(e.type).toBe('rate_limit_error');
    expect(e.headers.get('retry-after')).toBe('7');
  });

  it('a 529 repeated twice is retried by the SDK, then the third request succeeds', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 529, retryAfterSeconds: 0.01 }, repeat: 2 }, { blocks: [text] });
    const retrying = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 2, logLevel: 'off' });
    const message = await retrying.messages.stream(base).finalMessage();
    expect(message.content[0]).toMatchObject({ text: text.text });
    expect(server.requests.length).toBe(3);
  });

  it('requireApiKey: a wrong key gets a 401 authentication_error; the right one (header or bearer) passes', async () => {
    const guarded = await startFakeModelServer({ requireApiKey: 'sk-right' });
    try {
      const wrong = new Anthropic({ apiKey: 'sk-wrong', baseURL: guarded.url, maxRetries: 0, logLevel: 'off' });
      const err = await wrong.messages.create(base).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((err as InstanceType<typeof Anthropic.AuthenticationError>).type).toBe('authentication_error');
      const right = new Anthropic({ apiKey: 'sk-right', baseURL: guarded.url, maxRetries: 0 });
      await expect(right.messages.create(base)).resolves.toMatchObject({ type: 'message' });
      const bearer = new Anthropic({ authToken: 'sk-right', baseURL: guarded.url, maxRetries: 0 });
      await expect(bearer.messages.create(base)).resolves.toMatchObject({ type: 'message' });
    } finally {
      await guarded.close();
    }
  });

  it('midstream-error: an `event: error` overloaded_error after some events', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'midstream-error', afterEvents: 4 } });
    const { types, error } = await consume();
    expect(types).toEqual(['message_start', 'content_block_start', 'content_block_delta']); // the ping is not surfaced
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const e = error as InstanceType<typeof Anthropic.APIError>;
    expect(e.status).toBeUndefined();
    expect(e.type).toBe('overloaded_error');
  });

  it('reset: the socket is destroyed mid-stream and the SDK iteration fails', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'reset', afterEvents: 3 } });
    const { types, error } = await consume();
    expect(types).toEqual(['message_start', 'content_block_start']);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(Anthropic.APIError);
  });

  it('malformed: a data line that is not JSON makes the SDK throw a SyntaxError', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'malformed', afterEvents: 2 } });
    const { types, error } = await consume();
    expect(types).toEqual(['message_start']);
    expect(error).toBeInstanceOf(SyntaxError);
  });

  it('stall with ms pauses then completes; stall without ms holds until the client gives up', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'stall', afterEvents: 2, ms: 50 } });
    const paused = await consume();
    expect(paused.error).toBeUndefined();
    expect(paused.types.at(-1)).toBe('message_stop');

    server.enqueue({ blocks: [text], fault: { kind: 'stall', afterEvents: 2 } });
    const controller = new AbortController();
    const watching = consume(controller.signal);
    // Give up once the first events have arrived and nothing else comes.
    await waitFor(() => server.requests.length === 2);
    setTimeout(() => controller.abort(), 200);
    const stalled = await watching;
    expect(stalled.types).toEqual(['message_start']);
    expect(stalled.types).not.toContain('message_stop');
  });

  it('stall until a promise holds the stream open until the test releases it, then completes', async () => {
    let release!: () => void;
    const until = new Promise<void>((r) => (release = r));
    server.enqueue({ blocks: [text], fault: { kind: 'stall', afterEvents: 2, until } });
    const types: string[] = [];
    const stream = await client.messages.create({ ...base, stream: true });
    const reading = (async () => {
      for await (const e of stream) types.push(e.type);
    })();
    await waitFor(() => types.length === 1);
    // Held: the request is still in flight and nothing past the stall point arrives.
    await new Promise((r) => setTimeout(r, 100));
    expect(types).toEqual(['message_start']);
    expect(server.requests[0]?.finishedSeq).toBeNull();
    release();
    await reading;
    expect(types.at(-1)).toBe('message_stop');
  });

  it('records path, lower-cased headers, parsed body and the x-keel-task-id', async () => {
    server.enqueue({ blocks: [text] });
    await client.messages.create(base, { headers: { 'X-Keel-Task-Id': 'task-42' } });
    const [r] = server.requests;
    expect(r?.path).toBe('/v1/messages');
    expect(r?.taskId).toBe('task-42');
    // This SDK version sends the key as a bearer token; older ones used x-api-key.
    expect(r?.headers['x-api-key'] ?? r?.headers['authorization']).toMatch(/^(Bearer )?test-key$/);
    expect(r?.body).toMatchObject({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(typeof r?.receivedAt).toBe('number');
  });

  it('counts requests in flight at the same time, per task and overall', async () => {
    const stalled = { blocks: [text], fault: { kind: 'stall' as const, afterEvents: 1 } };
    server.enqueue(stalled, stalled, stalled, stalled);
    const controller = new AbortController();
    const send = (taskId: string): Promise<unknown> => consume(controller.signal).then(() => taskId);
    const withTask = (taskId: string, signal: AbortSignal = controller.signal): Promise<unknown> =>
      client.messages
        .create({ ...base, stream: true }, { signal, headers: { 'x-keel-task-id': taskId } })
        .then(async (s) => {
          for await (const _ of s) void _;
        })
        .catch(() => undefined);
    const all = [withTask('a'), withTask('a'), withTask('b'), send('none')];
    await waitFor(() => server.requests.length === 4);
    expect(server.maxConcurrent()).toBe(4);
    expect(server.maxConcurrentByTask()).toEqual(new Map([['a', 2], ['b', 1]]));
    controller.abort();
    await Promise.all(all);

    // Sequential requests of one task never overlap.
    server.enqueue({ blocks: [text] }, { blocks: [text] });
    await withTask('c', new AbortController().signal);
    await withTask('c', new AbortController().signal);
    expect(server.maxConcurrentByTask().get('c')).toBe(1);
  });
});

describe('fake model server: faults that hang or hide', () => {
  it('no-headers: the request arrives and is never answered until the client gives up', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'no-headers' } });
    const controller = new AbortController();
    const pending = consume(controller.signal);
    await waitFor(() => server.requests.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    const { types, error } = await pending;
    expect(types).toEqual([]);
    expect(error).toBeInstanceOf(Anthropic.APIUserAbortError);
  });

  it('drop: the socket is destroyed before any response', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'drop' } });
    const { error } = await consume();
    expect(error).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(server.requests).toHaveLength(1);
  });

  it('pings: after the given events, only ping frames, which the SDK swallows', async () => {
    server.enqueue({ blocks: [text], fault: { kind: 'pings', afterEvents: 3, everyMs: 10 } });
    const controller = new AbortController();
    const types: string[] = [];
    const raw: string[] = [];
    const response = await client.messages.create({ ...base, stream: true }, { signal: controller.signal }).asResponse();
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    while (raw.join('').split('event: ping').length < 6) {
      const { value, done } = await reader.read();
      if (done) break;
      raw.push(decoder.decode(value));
    }
    controller.abort();
    for (const m of raw.join('').matchAll(/^event: (\w+)/gm)) types.push(m[1]!);
    expect(types.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(new Set(types.slice(3))).toEqual(new Set(['ping']));
  });

  it('rawInput: the tool input is streamed as given, even when it is not JSON', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', id: 't1', name: 'Bash', input: {}, rawInput: '{"command": "ls"}}' }], chunkSize: 4 });
    const stream = await client.messages.create({ ...base, stream: true });
    let json = '';
    for await (const e of stream) if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') json += e.delta.partial_json;
    expect(json).toBe('{"command": "ls"}}');
  });
});

/** No deadline: the test's timeout bounds it. */
function waitFor(cond: () => boolean): Promise<void> {
  return eventually(cond, () => 'condition not reached');
}
