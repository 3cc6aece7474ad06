import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Provider faults as a user of `keel run` meets them: the built CLI as a child process, the real
 * Anthropic provider, the fake model server (a real loopback HTTP server).
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (baseUrl: string, ...extra: string[]) => ['run', 'hi', '--provider', 'anthropic', '--base-url', baseUrl, '--model', 'claude-test', '--workspace', workspace, ...extra];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cli-faults-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel run: provider faults are final or visibly retried', () => {
  it('--base-url http://127.0.0.1:9 (a port fetch refuses) fails at once, with no retry, naming the URL', async () => {
    const run = await runCli(args('http://127.0.0.1:9', '--output-format', 'stream-json'), KEY);
    expect((await run.exit).code).toBe(1);
    expect(ofType(run.events, 'retry')).toEqual([]);
    const errors = ofType(run.events, 'error');
    expect(errors).toEqual([expect.objectContaining({ code: 'connection_refused', retryable: false })]);
    expect(String(errors[0]!.message)).toContain('http://127.0.0.1:9');
  });

  it('a refused connection: what to check is said once, then where the address comes from (issue 26 item 17)', async () => {
    // A port nothing listens on: the fake server's, once it is closed.
    const closed = await startFakeModelServer();
    const url = closed.url;
    await closed.close();
    const run = await runCli(args(url), KEY);
    expect((await run.exit).code).toBe(1);
    const error = run.stderr().split('\n').find((l) => l.startsWith('Error (connection_refused)'));
    expect(error).toBe(`Error (connection_refused): Could not connect to ${url}: connection refused (nothing is listening there). Check that the server is running and that the base URL is right. The address is the one --base-url gives (else the provider's default).`);
    expect(run.stderr().match(/Check that the server is running/g)).toHaveLength(1);
  });

  it('--max-turns 1 that is reached: "after 1 model call" (issue 26 item 17)', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_ls', name: 'Glob', input: { pattern: '*' } }] });
    const run = await runCli(args(server.url, '--max-turns', '1', '--no-memory', '--output-format', 'stream-json'), KEY);
    expect((await run.exit).code).toBe(1);
    expect(ofType(run.events, 'error')).toEqual([expect.objectContaining({ code: 'max_turns', message: expect.stringContaining('Stopped after 1 model call (the max-turns limit).') })]);
  });

  it('a quiet answer is visible while Keel waits, then the answer goes on (issue 26 item 11)', async () => {
    // 16 s of silence mid-answer: past the first look of the stall clock (7.5 s of 30), short of a stall.
    server.enqueue({ blocks: [{ type: 'text', text: 'Part one. Part two.' }], chunkSize: 10, fault: { kind: 'stall', afterEvents: 4, ms: 16_000 } });
    const run = await runCli(args(server.url, '--no-memory', '--output-format', 'stream-json'), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    const waiting = ofType(run.events, 'waiting');
    expect(waiting).toEqual([expect.objectContaining({ quietMs: 7500, stallAfterMs: 30_000 })]);
    // Said while the answer was under way: after its first words, before the rest.
    const at = run.events.indexOf(waiting[0]!);
    expect(run.events.findIndex((e) => e.type === 'text'), run.events.map((e) => `${String(e.type)}:${JSON.stringify(e.delta ?? e.mode ?? '')}`).join(' ')).toBeLessThan(at);
    expect(run.events.findLastIndex((e) => e.type === 'text')).toBeGreaterThan(at);
    expect(ofType(run.events, 'retry')).toEqual([]);

    // In text mode, on stderr.
    server.enqueue({ blocks: [{ type: 'text', text: 'Part one. Part two.' }], chunkSize: 10, fault: { kind: 'stall', afterEvents: 4, ms: 16_000 } });
    const text = await runCli(args(server.url, '--no-memory'), KEY);
    expect((await text.exit).code, text.stderr()).toBe(0);
    expect(text.stderr()).toContain('(waiting) No part of the answer for 8 s; Keel waits up to 30 s of silence, then gives this attempt up as stalled and tries again.');
    // The answer on stdout is whole: the notice went to stderr alone.
    expect(text.stdout()).toBe('Part one. Part two.\n');
  }, 120_000);

  it('a delta of a block never started is a visible protocol error: retried, then the run fails saying so (issue 26 item 11)', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Some words.' }], fault: { kind: 'unstarted-delta', afterEvents: 4, index: 6 }, repeat: 4 });
    const run = await runCli(args(server.url, '--no-memory', '--output-format', 'stream-json'), KEY);
    expect((await run.exit).code).toBe(1);
    const said = "The model's stream sent a delta of content block 6, which it never started (a protocol error); this answer is not used.";
    expect(ofType(run.events, 'retry')).toEqual([1, 2, 3].map((attempt) => expect.objectContaining({ attempt, code: 'malformed_response', message: said })));
    expect(ofType(run.events, 'error')).toEqual([expect.objectContaining({ code: 'malformed_response', message: said })]);
    expect(ofType(run.events, 'text').map((e) => e.delta).join('')).not.toContain('stray');
  }, 60_000);

  it('a 429 is retried by the machine alone, and the wait is printed', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 429, retryAfterSeconds: 0.2 } }, { blocks: [{ type: 'text', text: 'Answered.' }] });
    const run = await runCli(args(server.url), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(run.stdout()).toContain('Answered.');
    expect(run.stderr()).toMatch(/\(rate_limited\) .*rate limit reached \(429\).* Retrying in 0\.2 s \(retry 1\)\./);
    expect(server.requests).toHaveLength(3); // the 429, the retry, the gatekeeper's lesson call
  });
});
