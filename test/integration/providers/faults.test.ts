import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ProviderConfig } from '../../../src/core/providers/types';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { TurnLimits } from '../../../src/core/machines/turn/turn.machine';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';

/**
 * Provider faults that used to hang or hide, through the whole agent loop as a task runs it: the
 * real providers (official SDKs) against the fake model server, a real loopback HTTP server.
 * Retrying has one owner, the turn machine: the server's request count is the proof.
 */
let server: FakeModelServer;
let workspace: string;
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-faults-'));
});
afterEach(async () => {
  await server.close();
});

type Api = 'anthropic' | 'openai';

function config(api: Api, extra: Partial<ProviderConfig> = {}): ProviderConfig {
  return api === 'anthropic'
    ? { provider: 'anthropic', model: 'claude-test', apiKey: 'sk-test', baseUrl: server.url, ...extra }
    : { provider: 'openai-compatible', model: 'local-test', baseUrl: `${server.url}/v1`, ...extra };
}

async function run(provider: ProviderConfig, limits: Partial<TurnLimits> = {}, mode: 'default' | 'bypassPermissions' = 'default') {
  const runtime = new TaskRuntime({ workspace, limits: { retryBaseMs: 5, ...limits } });
  const task = runtime.startTask({ prompt: 'go', provider, mode });
  const events: TaskEvent[] = [];
  task.subscribe((e) => events.push(e));
  const done = await task.settled();
  const of = <T extends TaskEvent['type']>(type: T) => events.filter((e): e is Extract<TaskEvent, { type: T }> => e.type === type);
  return { done, events, of, transcript: task.transcript() };
}

const answer = { blocks: [{ type: 'text' as const, text: 'All good.' }] };

describe('connection failures that cannot succeed are final, at once, naming the URL', () => {
  it('a port fetch refuses (http://127.0.0.1:9) is not retried', async () => {
    const r = await run(config('anthropic', { baseUrl: 'http://127.0.0.1:9' }));
    expect(r.done.status).toBe('failed');
    expect(r.of('retry')).toEqual([]);
    const [error] = r.of('error');
    expect(error).toMatchObject({ code: 'connection_refused', retryable: false });
    expect(error!.message).toContain('http://127.0.0.1:9');
    expect(error!.message).toContain('port 9');
  });

  it('a closed port (connection refused) is not retried', async () => {
    const gone = await startFakeModelServer();
    const url = gone.url;
    await gone.close();
    const r = await run(config('openai', { baseUrl: `${url}/v1` }));
    expect(r.done.status).toBe('failed');
    expect(r.of('retry')).toEqual([]);
    expect(r.of('error')[0]).toMatchObject({ code: 'connection_refused', retryable: false });
    expect(r.of('error')[0]!.message).toContain(`${url}/v1`);
  });

  it('https:// to a plain-http server (a TLS failure) is not retried, and no request arrives', async () => {
    const url = server.url.replace('http://', 'https://');
    const r = await run(config('anthropic', { baseUrl: url }));
    expect(r.of('retry')).toEqual([]);
    expect(r.of('error')[0]).toMatchObject({ code: 'connection_refused', retryable: false });
    expect(r.of('error')[0]!.message).toContain(url);
    expect(server.requests).toHaveLength(0);
  });

  it('a base URL that is not http(s) is refused before any request', async () => {
    for (const baseUrl of ['ftp://127.0.0.1:21/v1', 'localhost:11434']) {
      const r = await run(config('openai', { baseUrl }));
      expect(r.done.status).toBe('failed');
      expect(r.of('retry')).toEqual([]);
      expect(r.of('error')[0]).toMatchObject({ code: 'invalid_input', retryable: false });
      expect(r.of('error')[0]!.message).toContain(baseUrl);
    }
  });
});

describe('one owner of retries: the turn machine', () => {
  it.each<Api>(['anthropic', 'openai'])('%s: a 500 every time makes one request per visible attempt', async (api) => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 500 }, repeat: 20 });
    const r = await run(config(api), { retryLimit: 3 });
    expect(r.done.status).toBe('failed');
    expect(r.of('retry').map((e) => e.code)).toEqual(['server_error', 'server_error', 'server_error']);
    expect(server.requests).toHaveLength(4);
    expect(r.of('error').at(-1)).toMatchObject({ code: 'server_error', retryable: true });
  });

  it.each<Api>(['anthropic', 'openai'])('%s: a connection dropped before the response is retried visibly by the machine', async (api) => {
    server.enqueue({ blocks: [], fault: { kind: 'drop' } }, answer);
    const r = await run(config(api));
    expect(r.done.status).toBe('completed');
    expect(r.of('retry')).toEqual([expect.objectContaining({ code: 'connection_reset', attempt: 1 })]);
    expect(server.requests).toHaveLength(2);
  });

  it('a 529 with retry-after waits what the server asked, visibly', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 529, retryAfterSeconds: 0.25 } }, answer);
    const r = await run(config('anthropic'));
    expect(r.done.status).toBe('completed');
    expect(r.of('retry')).toEqual([expect.objectContaining({ code: 'overloaded', delayMs: 250 })]);
    expect(server.requests).toHaveLength(2);
  });

  it('a 429 asking to wait 100000 s waits only the cap, says so in a retry event, and the chat shows it', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 429, retryAfterSeconds: 100_000 } }, answer);
    const r = await run(config('anthropic'), { maxRetryDelayMs: 300 });
    expect(r.done.status).toBe('completed');
    const [retry] = r.of('retry');
    expect(retry).toMatchObject({ code: 'rate_limited', attempt: 1, delayMs: 300 });
    expect(retry!.message).toContain('27 h 47 min');
    expect(server.requests).toHaveLength(2);
    const notice = r.transcript.items.find((i) => i.kind === 'notice');
    expect(notice).toMatchObject({ kind: 'notice' });
    expect(notice && 'text' in notice ? notice.text : '').toMatch(/rate limit.*Retrying in 0\.3 s \(retry 1\)/);
  });

  it('a server that never sends response headers costs one header timeout per attempt', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'no-headers' }, repeat: 20 });
    const r = await run(config('anthropic', { headerTimeoutMs: 300, stallTimeoutMs: 300 }), { retryLimit: 2 });
    expect(r.done.status).toBe('failed');
    expect(r.of('retry').map((e) => e.code)).toEqual(['stream_stalled', 'stream_stalled']);
    expect(server.requests).toHaveLength(3);
    expect(r.of('error').at(-1)!.message).toContain('sent no response within 0.3 s');
  });
});

describe('keep-alives are not progress', () => {
  it.each<Api>(['anthropic', 'openai'])('%s: a stream that only pings is stalled, then retried', async (api) => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Thinking about it…' }], fault: { kind: 'pings', afterEvents: 3, everyMs: 40 } }, answer);
    const r = await run(config(api, { stallTimeoutMs: 400 }));
    expect(r.done.status).toBe('completed');
    expect(r.of('retry')).toEqual([expect.objectContaining({ code: 'stream_stalled', attempt: 1 })]);
    expect(r.of('retry')[0]!.message).toContain('no part of the answer for 0.4 s');
    expect(server.requests).toHaveLength(2);
  });
});

describe('a tool call whose input is not valid JSON', () => {
  it.each<Api>(['anthropic', 'openai'])('%s: is recorded, never run, and the model is told; the run goes on', async (api) => {
    const bad = '{"command": "touch pwned.txt"}}';
    server.enqueue(
      { blocks: [{ type: 'text', text: 'Creating it.' }, { type: 'tool_use', id: 'call_bad', name: 'Bash', input: {}, rawInput: bad }] },
      { blocks: [{ type: 'text', text: 'Sorry, I will fix my input.' }] },
    );
    const r = await run(config(api), {}, 'bypassPermissions');
    expect(r.done).toMatchObject({ status: 'completed', stopReason: 'end_turn' });
    expect(existsSync(join(workspace, 'pwned.txt'))).toBe(false);
    // The assistant message with the call is recorded, and the call is answered with an error.
    const recorded = r.of('message').map((e) => e.message);
    const call = recorded.find((m) => m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use' && b.id === 'call_bad'));
    expect(call).toBeDefined();
    expect(r.of('tool_result')).toEqual([expect.objectContaining({ id: 'call_bad', is_error: true })]);
    expect(server.requests).toHaveLength(2);
    const sent = JSON.stringify(server.requests[1]!.body);
    expect(sent).toContain('call_bad');
    expect(sent).toContain('not valid JSON');
    expect(sent).toContain('touch pwned.txt');
    expect(r.transcript.items.find((i) => i.kind === 'tool')).toMatchObject({ id: 'call_bad', result: { isError: true } });
  });
});
