import * as net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../../src/core/providers/anthropic';
import type { AnthropicProviderOptions } from '../../../src/core/providers/anthropic';
import type { ProviderEvent } from '../../../src/core/providers/types';
import { startFakeModelServer } from '../../fixtures/fake-model-server';
import type { FakeModelServer } from '../../fixtures/fake-model-server';
import { collect, errorOf, request, stopReasonOf, textOf, toolInputs } from './helpers';

let server: FakeModelServer;
beforeEach(async () => {
  server = await startFakeModelServer({ requireApiKey: 'sk-test' });
});
afterEach(async () => {
  await server.close();
});

function provider(opts: Partial<AnthropicProviderOptions> = {}): AnthropicProvider {
  return new AnthropicProvider({ apiKey: 'sk-test', model: 'claude-test', baseUrl: server.url, ...opts });
}

const long = { type: 'text' as const, text: 'The quick brown fox jumps over the lazy dog.' };

describe('AnthropicProvider against the fake server', () => {
  it('streams text as the raw event grammar, ending with message_stop', async () => {
    server.enqueue({ blocks: [long], chunkSize: 6, usage: { input_tokens: 40, output_tokens: 12 } });
    const events = await collect(provider(), request());
    expect(events[0]).toMatchObject({ type: 'message_start', message: { model: 'claude-test', usage: { input_tokens: 40 } } });
    expect(events.map((e) => e.type)).toContain('content_block_start');
    expect(textOf(events)).toBe(long.text);
    expect(events.filter((e) => e.type === 'content_block_delta').length).toBe(8);
    expect(events.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 12 } });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('re-emits fragmented tool input that reassembles to the scripted input', async () => {
    const input = { path: 'src/x.ts', edits: [{ old: 'a', new: 'b "quoted"' }] };
    server.enqueue({ blocks: [{ type: 'text', text: 'Editing.' }, { type: 'tool_use', id: 'toolu_9', name: 'edit', input }], chunkSize: 5 });
    const events = await collect(provider(), request());
    expect(toolInputs(events)).toEqual([{ id: 'toolu_9', name: 'edit', input }]);
    expect(stopReasonOf(events)).toBe('tool_use');
  });

  it('streams thinking with its signature and sends thinking blocks back unchanged', async () => {
    server.enqueue({ blocks: [{ type: 'thinking', thinking: 'Consider the options.', signature: 'sig-XYZ' }, { type: 'text', text: 'Answer.' }] });
    const events = await collect(provider(), request({ thinkingBudgetTokens: 2048, maxTokens: 4096 }));
    const thinking = events
      .map((e) => (e.type === 'content_block_delta' && e.delta.type === 'thinking_delta' ? e.delta.thinking : ''))
      .join('');
    const signature = events.find((e) => e.type === 'content_block_delta' && e.delta.type === 'signature_delta');
    expect(thinking).toBe('Consider the options.');
    expect(signature).toMatchObject({ delta: { signature: 'sig-XYZ' } });
    expect(server.requests[0]?.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });

    server.enqueue({ blocks: [{ type: 'text', text: 'ok' }] });
    const thinkingBlock = { type: 'thinking' as const, thinking: 'Consider the options.', signature: 'sig-XYZ' };
    await collect(
      provider(),
      request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'q' }] },
          { role: 'assistant', content: [thinkingBlock, { type: 'text', text: 'Answer.' }] },
          { role: 'user', content: [{ type: 'text', text: 'next' }] },
        ],
      }),
    );
    const body = server.requests[1]?.body as { messages: { content: unknown[] }[]; thinking?: unknown };
    expect(body.messages[1]?.content[0]).toEqual(thinkingBlock);
    expect(body.thinking).toBeUndefined();
  });

  it('marks the last system block, last tool and last block of the latest user message for caching', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'ok' }] });
    const tool = (name: string) => ({ name, description: `${name} tool`, input_schema: { type: 'object', properties: {} } });
    await collect(
      provider(),
      request({
        system: ['stable instructions', 'environment details'],
        tools: [tool('read'), tool('write')],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'first' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'A' }, { type: 'text', text: 'and now?' }] },
        ],
      }),
    );
    const eph = { type: 'ephemeral' };
    const body = server.requests[0]?.body as {
      system: { cache_control?: unknown }[];
      tools: { cache_control?: unknown }[];
      messages: { content: { cache_control?: unknown }[] }[];
    };
    expect(body.system.map((s) => s.cache_control)).toEqual([undefined, eph]);
    expect(body.tools.map((t) => t.cache_control)).toEqual([undefined, eph]);
    expect(body.messages.map((m) => m.content.map((b) => b.cache_control))).toEqual([[undefined], [undefined], [undefined, eph]]);
  });

  it('sends x-keel-task-id when the request has a task id', async () => {
    server.enqueue({ blocks: [long] }, { blocks: [long] });
    await collect(provider(), request({ taskId: 'task-7' }));
    await collect(provider(), request());
    expect(server.requests.map((r) => r.taskId)).toEqual(['task-7', null]);
  });

  it('never retries itself: a 429 or a 529 is one request and one retryable error (the turn machine retries)', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 529, retryAfterSeconds: 0.01 } }, { blocks: [long] });
    const error = errorOf(await collect(provider(), request()));
    expect(error).toMatchObject({ code: 'overloaded', phase: 'pre-stream', retryable: true, status: 529, retryAfterMs: 10 });
    expect(server.requests.length).toBe(1);
  });

  it('429: rate_limited with the retry-after the server asked for, uncapped, in the message too', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 429, retryAfterSeconds: 30 } }, { blocks: [], fault: { kind: 'http', status: 429, retryAfterSeconds: 100_000 } });
    const error = errorOf(await collect(provider(), request()));
    expect(error).toMatchObject({ code: 'rate_limited', phase: 'pre-stream', retryable: true, status: 429, retryAfterMs: 30_000 });
    expect(error?.message).toMatch(/rate limit.*The server asks to wait 30 s\.$/);
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ retryAfterMs: 100_000_000 });
    expect(server.requests.length).toBe(2);
  });

  it('x-should-retry from the server overrides the status', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 500, shouldRetry: false } }, { blocks: [], fault: { kind: 'http', status: 400, shouldRetry: true } });
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'server_error', retryable: false });
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'bad_request', retryable: true });
  });

  it('401 is auth_failed, not retried, with a message that names no host command (the host adds its advice)', async () => {
    const events = await collect(provider({ apiKey: 'sk-wrong' }), request());
    expect(errorOf(events)).toEqual({
      code: 'auth_failed',
      phase: 'pre-stream',
      retryable: false,
      status: 401,
      message: 'Anthropic rejected the API key (401).',
    });
    expect(server.requests.length).toBe(1);
  });

  it('500 and 400 map to server_error and bad_request', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 500 } }, { blocks: [], fault: { kind: 'http', status: 400, message: 'max_tokens: too large' } });
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'server_error', retryable: true, status: 500 });
    const bad = errorOf(await collect(provider(), request()));
    expect(bad).toMatchObject({ code: 'bad_request', retryable: false, status: 400 });
    expect(bad?.message).toContain('max_tokens: too large');
  });

  it('a closed port is connection_refused in the connect phase', async () => {
    const gone = await startFakeModelServer();
    const url = gone.url;
    await gone.close();
    const error = errorOf(await collect(provider({ baseUrl: url }), request()));
    expect(error).toEqual({
      code: 'connection_refused',
      phase: 'connect',
      retryable: false,
      message: `Could not connect to ${url}: connection refused (nothing is listening there). Check that the server is running and that the base URL is right.`,
    });
  });

  it('a mid-stream overloaded_error is a retryable mid-stream overloaded error after the events so far', async () => {
    server.enqueue({ blocks: [long], fault: { kind: 'midstream-error', afterEvents: 5 } });
    const events = await collect(provider(), request());
    expect(events.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'provider_error']);
    expect(errorOf(events)).toMatchObject({ code: 'overloaded', phase: 'mid-stream', retryable: true });
    expect(server.requests.length).toBe(1);
  });

  it('a reset socket is connection_reset mid-stream', async () => {
    server.enqueue({ blocks: [long], fault: { kind: 'reset', afterEvents: 4 } });
    const events = await collect(provider(), request());
    expect(errorOf(events)).toMatchObject({ code: 'connection_reset', phase: 'mid-stream', retryable: true });
    expect(textOf(events).length).toBeGreaterThan(0);
  });

  it('a malformed data line is malformed_response mid-stream', async () => {
    server.enqueue({ blocks: [long], fault: { kind: 'malformed', afterEvents: 3 } });
    expect(errorOf(await collect(provider(), request()))).toMatchObject({ code: 'malformed_response', phase: 'mid-stream', retryable: true });
  });

  it('no bytes for stallTimeoutMs is stream_stalled; a shorter pause is not', async () => {
    server.enqueue({ blocks: [long], fault: { kind: 'stall', afterEvents: 3 } });
    const stalled = errorOf(await collect(provider({ stallTimeoutMs: 200 }), request()));
    expect(stalled).toMatchObject({ code: 'stream_stalled', phase: 'mid-stream', retryable: true });

    server.enqueue({ blocks: [long], fault: { kind: 'stall', afterEvents: 3, ms: 50 } });
    const paused = await collect(provider({ stallTimeoutMs: 2_000 }), request());
    expect(paused.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('a delta of a block the stream never started is a protocol error, never dropped (issue 26 item 11)', async () => {
    // Block 0 is started; then a delta of block 5, which never was.
    server.enqueue({ blocks: [long], fault: { kind: 'unstarted-delta', afterEvents: 4, index: 5 } });
    const events = await collect(provider(), request());
    expect(errorOf(events)).toEqual({
      code: 'malformed_response',
      message: "The model's stream sent a delta of content block 5, which it never started (a protocol error); this answer is not used.",
      phase: 'mid-stream',
      retryable: true,
    });
    expect(textOf(events)).not.toContain('stray');
  });

  it('a quiet answer is announced once per silence, before the stall (issue 26 item 11)', async () => {
    server.enqueue({ blocks: [long], fault: { kind: 'pings', afterEvents: 4, everyMs: 30 } });
    const events = await collect(provider({ stallTimeoutMs: 400 }), request());
    expect(events.filter((e) => e.type === 'waiting')).toEqual([{ type: 'waiting', quietMs: 100, stallAfterMs: 400 }]);
    const waited = events.findIndex((e) => e.type === 'waiting');
    expect(waited).toBeLessThan(events.findIndex((e) => e.type === 'provider_error'));
    // An answer that pauses shorter than a quarter of the timeout says nothing of the kind.
    server.enqueue({ blocks: [long], fault: { kind: 'stall', afterEvents: 3, ms: 20 } });
    expect((await collect(provider({ stallTimeoutMs: 4_000 }), request())).filter((e) => e.type === 'waiting')).toEqual([]);
  });

  it('pings are not progress: a stream that only pings after it started is stream_stalled', async () => {
    server.enqueue({ blocks: [long], fault: { kind: 'pings', afterEvents: 4, everyMs: 30 } });
    const events = await collect(provider({ stallTimeoutMs: 300 }), request());
    expect(errorOf(events)).toMatchObject({ code: 'stream_stalled', phase: 'mid-stream', retryable: true });
    expect(textOf(events).length).toBeGreaterThan(0);
  });

  it('an answer arriving in pieces of a few bytes (events split anywhere) streams exactly', async () => {
    const input = { path: 'src/ü.ts', text: 'naïve — “quoted” 🚀' };
    server.enqueue({ blocks: [long, { type: 'tool_use', id: 'toolu_p', name: 'edit', input }], chunkSize: 3, pieceBytes: 7 });
    const events = await collect(provider(), request());
    expect(textOf(events)).toBe(long.text);
    expect(toolInputs(events)).toEqual([{ id: 'toolu_p', name: 'edit', input }]);
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('a slow consumer is not mistaken for a stalled server', async () => {
    server.enqueue({ blocks: [long], chunkSize: 20, delayMs: 10 });
    const events = await collect(provider({ stallTimeoutMs: 100 }), request(), undefined, () => new Promise((r) => setTimeout(r, 150)));
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('aborting mid-stream ends the stream with cancelled', async () => {
    server.enqueue({ blocks: [long], chunkSize: 2, delayMs: 20 });
    const controller = new AbortController();
    const events = await collect(provider(), request(), controller.signal, (e) => {
      if (e.type === 'content_block_delta') controller.abort();
    });
    expect(errorOf(events)).toMatchObject({ code: 'cancelled', retryable: false });
    expect(events.filter((e) => e.type === 'content_block_delta').length).toBe(1);
  });

  it('a consumer that stops iterating early ends the request at once', async () => {
    server.enqueue({ blocks: [long], chunkSize: 2, fault: { kind: 'stall', afterEvents: 5 } });
    const seen: string[] = [];
    // The server holds the stream open; without the abort this loop would wait for the stall timeout.
    for await (const e of provider({ stallTimeoutMs: 120_000 }).stream(request(), new AbortController().signal)) {
      seen.push(e.type);
      if (e.type === 'content_block_delta') break;
    }
    expect(seen).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
  });

  it('streamTo pushes the same events as stream, synchronously', async () => {
    server.enqueue({ blocks: [long], chunkSize: 5 }, { blocks: [long], chunkSize: 5 });
    const pulled = await collect(provider(), request());
    const pushed: ProviderEvent[] = [];
    await provider().streamTo(request(), new AbortController().signal, (e) => pushed.push(e));
    const shape = (events: ProviderEvent[]) => events.map((e) => (e.type === 'message_start' ? e.type : e));
    expect(shape(pushed)).toEqual(shape(pulled));
  });

  it('aborting while waiting for the response headers, or before starting, is cancelled', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'no-headers' } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(errorOf(await collect(provider(), request(), controller.signal))).toMatchObject({ code: 'cancelled' });

    const aborted = new AbortController();
    aborted.abort();
    expect(errorOf(await collect(provider(), request(), aborted.signal))).toMatchObject({ code: 'cancelled' });
  });

  it('a server that never answers is stream_stalled in the connect phase (the header timeout)', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const error = errorOf(await collect(provider({ baseUrl: `http://127.0.0.1:${port}`, headerTimeoutMs: 200 }), request()));
      expect(error).toMatchObject({ code: 'stream_stalled', phase: 'connect', retryable: true });
      expect(error?.message).toBe(`http://127.0.0.1:${port} sent no response within 0.2 s.`);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});
