import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAICompatibleProvider } from '../../../src/core/providers/openai';
import type { OpenAICompatibleProviderOptions } from '../../../src/core/providers/openai';
import { startFakeModelServer } from '../../fixtures/fake-model-server';
import type { FakeModelServer } from '../../fixtures/fake-model-server';
import { collect, errorOf, request, stopReasonOf, textOf, toolInputs } from './helpers';

let server: FakeModelServer;
beforeEach(async () => {
  server = await startFakeModelServer();
});
afterEach(async () => {
  await server.close();
});

function provider(opts: Partial<OpenAICompatibleProviderOptions> = {}): OpenAICompatibleProvider {
  return new OpenAICompatibleProvider({ model: 'qwen-test', baseUrl: `${server.url}/v1`, ...opts });
}

const long = { type: 'text' as const, text: 'Local models answer in the same grammar.' };
const tool = { name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };

describe('OpenAICompatibleProvider against the fake server', () => {
  it('streams text into one text block, with usage from the final chunk', async () => {
    server.enqueue({ blocks: [long], chunkSize: 5, usage: { input_tokens: 30, output_tokens: 9, cache_read_input_tokens: 20 } });
    const events = await collect(provider(), request({ model: 'qwen-test' }));
    expect(events[0]).toMatchObject({ type: 'message_start', message: { model: 'qwen-test' } });
    expect(textOf(events)).toBe(long.text);
    expect(events.filter((e) => e.type === 'content_block_start')).toHaveLength(1);
    expect(events.find((e) => e.type === 'message_delta')).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn' },
      usage: { input_tokens: 30, output_tokens: 9, cache_read_input_tokens: 20, cache_creation_input_tokens: 0 },
    });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('accumulates tool-call fragments by index into tool_use blocks', async () => {
    const a = { path: 'README.md' };
    const b = { path: 'src/index.ts' };
    server.enqueue({
      blocks: [{ type: 'text', text: 'Reading both.' }, { type: 'tool_use', id: 'call_1', name: 'read_file', input: a }, { type: 'tool_use', id: 'call_2', name: 'read_file', input: b }],
      chunkSize: 4,
    });
    const events = await collect(provider(), request({ tools: [tool] }));
    expect(textOf(events)).toBe('Reading both.');
    expect(toolInputs(events)).toEqual([{ id: 'call_1', name: 'read_file', input: a }, { id: 'call_2', name: 'read_file', input: b }]);
    expect(stopReasonOf(events)).toBe('tool_use');
  });

  it('tolerates fragments without index or id, and trusts the calls over finish_reason', async () => {
    server.enqueue({
      blocks: [{ type: 'tool_use', name: 'read_file', input: { path: 'a.txt' } }],
      openai: { omitToolCallIndex: true, omitToolCallId: true, finishReason: 'stop' },
      chunkSize: 3,
    });
    const events = await collect(provider(), request({ tools: [tool] }));
    const [call] = toolInputs(events);
    expect(call).toMatchObject({ name: 'read_file', input: { path: 'a.txt' } });
    expect(call?.id).toMatch(/^call_/);
    expect(stopReasonOf(events)).toBe('tool_use');

    // Two calls without index: a fragment carrying a name starts the next call.
    server.enqueue({
      blocks: [
        { type: 'tool_use', name: 'read_file', input: { path: 'a.txt' } },
        { type: 'tool_use', name: 'list_dir', input: { path: '.' } },
      ],
      openai: { omitToolCallIndex: true, omitToolCallId: true },
      chunkSize: 3,
    });
    const two = toolInputs(await collect(provider(), request({ tools: [tool] })));
    expect(two.map((c) => [c.name, c.input])).toEqual([['read_file', { path: 'a.txt' }], ['list_dir', { path: '.' }]]);
    expect(new Set(two.map((c) => c.id)).size).toBe(2);
  });

  it('finish_reason length is max_tokens even with a tool call (its input may be cut)', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', name: 'read_file', input: { path: 'a' } }], openai: { finishReason: 'length' } });
    expect(stopReasonOf(await collect(provider(), request()))).toBe('max_tokens');
  });

  it('streams reasoning_content as a thinking block before the text', async () => {
    server.enqueue({ blocks: [{ type: 'thinking', thinking: 'let me see' }, { type: 'text', text: 'ok' }] });
    const events = await collect(provider(), request());
    const starts = events.flatMap((e) => (e.type === 'content_block_start' ? [e.content_block.type] : []));
    expect(starts).toEqual(['thinking', 'text']);
  });

  it('translates the Anthropic-shaped request: system joined, tool_use to tool_calls, tool_result to tool messages', async () => {
    server.enqueue({ blocks: [long] });
    await collect(
      provider(),
      request({
        system: ['part one', 'part two'],
        tools: [tool],
        taskId: 'task-oa',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'read it' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hidden', signature: 's' },
              { type: 'text', text: 'Sure.' },
              { type: 'tool_use', id: 'call_9', name: 'read_file', input: { path: 'x' } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_9', content: 'no such file', is_error: true }, { type: 'text', text: 'hm' }] },
        ],
      }),
    );
    const r = server.requests[0];
    expect(r?.path).toBe('/v1/chat/completions');
    expect(r?.taskId).toBe('task-oa');
    expect(r?.body).toMatchObject({
      model: 'claude-test',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 1024,
      tools: [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: tool.input_schema } }],
      messages: [
        { role: 'system', content: 'part one\n\npart two' },
        { role: 'user', content: 'read it' },
        { role: 'assistant', content: 'Sure.', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'read_file', arguments: '{"path":"x"}' } }] },
        { role: 'tool', tool_call_id: 'call_9', content: 'Error: no such file' },
        { role: 'user', content: 'hm' },
      ],
    });
    expect(r?.headers['authorization']).toBe('Bearer not-needed');
  });

  it('maps failures like the Anthropic provider', async () => {
    server.enqueue(
      { blocks: [], fault: { kind: 'http', status: 401 } },
      { blocks: [], fault: { kind: 'http', status: 429, retryAfterSeconds: 0.01 } },
      { blocks: [long] },
      { blocks: [long], fault: { kind: 'midstream-error', afterEvents: 3 } },
      { blocks: [long], fault: { kind: 'reset', afterEvents: 3 } },
      { blocks: [long], fault: { kind: 'malformed', afterEvents: 3 } },
      { blocks: [long], fault: { kind: 'stall', afterEvents: 3 } },
    );
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'auth_failed', phase: 'pre-stream', retryable: false });
    // Never retried by the provider (the turn machine does): one request, the wait reported.
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'rate_limited', phase: 'pre-stream', retryable: true, retryAfterMs: 10 });
    expect(textOf(await collect(provider(), request()))).toBe(long.text);
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'overloaded', phase: 'mid-stream', retryable: true });
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'connection_reset', phase: 'mid-stream', retryable: true });
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'malformed_response', phase: 'mid-stream' });
    expect(errorOf(await collect(provider({ stallTimeoutMs: 200 }), request()))).toMatchObject({ code: 'stream_stalled', phase: 'mid-stream' });
    expect(server.requests.length).toBe(7);

    server.enqueue({ blocks: [long], fault: { kind: 'pings', afterEvents: 2, everyMs: 30 } });
    expect(errorOf(await collect(provider({ stallTimeoutMs: 300 }), request()))).toMatchObject({ code: 'stream_stalled', phase: 'mid-stream' });
  });

  it('a closed port is connection_refused; abort is cancelled', async () => {
    const gone = await startFakeModelServer();
    const url = `${gone.url}/v1`;
    await gone.close();
    expect(errorOf(await collect(provider({ baseUrl: url }), request()))).toEqual({
      code: 'connection_refused',
      phase: 'connect',
      retryable: false,
      message: `Could not connect to ${url}: connection refused (nothing is listening there). Check that the server is running and that the base URL is right.`,
    });

    server.enqueue({ blocks: [long], chunkSize: 2, delayMs: 20 });
    const controller = new AbortController();
    const events = await collect(provider(), request(), controller.signal, (e) => {
      if (e.type === 'content_block_delta') controller.abort();
    });
    expect(errorOf(events)).toMatchObject({ code: 'cancelled', retryable: false });
  });
});
