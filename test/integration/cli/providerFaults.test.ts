import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../../fixtures/fake-model-server';
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
    // A stall timeout of 6 s: the clock looks every 1.5 s. The first part of the answer comes at
    // once, so the first quiet look is the one at 3 s, which says "quiet for 1.5 s" (a quarter of
    // the timeout); the stall would be declared at the fourth (7.5 s). 5 s of silence lies between.
    const quiet = (): FakeTurn => ({ blocks: [{ type: 'text', text: 'Part one. Part two.' }], chunkSize: 10, fault: { kind: 'stall', afterEvents: 4, ms: 5_000 } });
    const other = await startFakeModelServer();
    onTestFinished(() => other.close());
    server.enqueue(quiet());
    other.enqueue(quiet());
    // The same answer in both output formats, side by side (each on its own server).
    const [json, text] = await Promise.all([
      runCli(args(server.url, '--stall-timeout', '6', '--no-memory', '--output-format', 'stream-json'), KEY),
      runCli(args(other.url, '--stall-timeout', '6', '--no-memory'), KEY),
    ]);

    expect((await json.exit).code, json.stderr()).toBe(0);
    const waiting = ofType(json.events, 'waiting');
    expect(waiting).toEqual([expect.objectContaining({ quietMs: 1500, stallAfterMs: 6000 })]);
    // Said while the answer was under way: after its first words, before the rest.
    const at = json.events.indexOf(waiting[0]!);
    expect(json.events.findIndex((e) => e.type === 'text'), json.events.map((e) => `${String(e.type)}:${JSON.stringify(e.delta ?? e.mode ?? '')}`).join(' ')).toBeLessThan(at);
    expect(json.events.findLastIndex((e) => e.type === 'text')).toBeGreaterThan(at);
    // The wait ends with the answer's next part (a chat's waiting line goes then): told once, before that part.
    expect(ofType(json.events, 'waiting_ended')).toHaveLength(1);
    const ended = json.events.findIndex((e) => e.type === 'waiting_ended');
    expect(ended).toBeGreaterThan(at);
    expect(ended).toBeLessThan(json.events.findIndex((e, i) => i > at && e.type === 'text'));
    expect(ofType(json.events, 'retry')).toEqual([]);
    expect(server.requests).toHaveLength(1);

    // In text mode, on stderr, with the timeout the person set.
    expect((await text.exit).code, text.stderr()).toBe(0);
    expect(text.stderr()).toContain('(waiting) No part of the answer for 1.5 s; Keel waits up to 6 s of silence, then gives this attempt up as stalled and tries again.');
    // The answer on stdout is whole: the notice went to stderr alone.
    expect(text.stdout()).toBe('Part one. Part two.\n');
  }, 60_000);

  it('--stall-timeout 2 gives a 4 s silence up as stalled and retries; without it (30 s) the same silence is waited out', async () => {
    const silent = (): FakeTurn => ({ blocks: [{ type: 'text', text: 'Part one. Part two.' }], chunkSize: 10, fault: { kind: 'stall', afterEvents: 4, ms: 4_000 } });
    const patient = await startFakeModelServer();
    onTestFinished(() => patient.close());
    server.enqueue(silent(), { blocks: [{ type: 'text', text: 'Answered on the retry.' }] });
    patient.enqueue(silent());
    const [short, dflt] = await Promise.all([
      runCli(args(server.url, '--stall-timeout', '2', '--no-memory', '--output-format', 'stream-json'), KEY),
      runCli(args(patient.url, '--no-memory', '--output-format', 'stream-json'), KEY),
    ]);

    expect((await short.exit).code, short.stderr()).toBe(0);
    expect(ofType(short.events, 'waiting')).toEqual([expect.objectContaining({ quietMs: 500, stallAfterMs: 2000 })]);
    expect(ofType(short.events, 'retry')).toEqual([expect.objectContaining({ attempt: 1, code: 'stream_stalled', message: 'Anthropic sent no part of the answer for 2 s; the answer was abandoned.' })]);
    expect(ofType(short.events, 'text').map((e) => e.delta).join('')).toContain('Answered on the retry.');
    expect(server.requests).toHaveLength(2);

    expect((await dflt.exit).code, dflt.stderr()).toBe(0);
    expect(ofType(dflt.events, 'retry')).toEqual([]);
    expect(ofType(dflt.events, 'text').map((e) => e.delta).join('')).toBe('Part one. Part two.');
    expect(patient.requests).toHaveLength(1);
  }, 60_000);

  it('--response-timeout 1: a server that sends no response headers for 1 s is retried, naming the wait', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'no-headers' } }, { blocks: [{ type: 'text', text: 'Answered.' }] });
    const run = await runCli(args(server.url, '--response-timeout', '1', '--no-memory', '--output-format', 'stream-json'), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'retry')).toEqual([expect.objectContaining({ attempt: 1, code: 'stream_stalled', message: `${server.url} sent no response within 1 s.` })]);
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    [['run', 'hi', '--stall-timeout', '0'], 'run', '--stall-timeout must be a number of seconds from 1 to 3600, such as 120 (got "0")'],
    [['run', 'hi', '--stall-timeout', '10s'], 'run', '--stall-timeout must be a number of seconds from 1 to 3600, such as 120 (got "10s")'],
    [['run', 'hi', '--response-timeout', '-5'], 'run', '--response-timeout must be a number of seconds from 1 to 3600, such as 120 (got "-5")'],
    [['loop', 'make it pass', '--stall-timeout', 'NaN'], 'loop', '--stall-timeout must be a number of seconds from 1 to 3600, such as 120 (got "NaN")'],
    [['run', 'hi', '--response-timeout'], 'run', '--response-timeout needs a value'],
  ])('keel %j is bad usage: one line, exit 2, and nothing runs', async (argv, command, problem) => {
    const run = await runCli([...argv, '--provider', 'anthropic', '--base-url', server.url, '--workspace', workspace], KEY);
    expect((await run.exit).code).toBe(2);
    expect(run.stderr()).toBe(`keel ${command}: ${problem} (see keel ${command} --help)\n`);
    expect(run.stdout()).toBe('');
    expect(server.requests).toEqual([]);
  });

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
