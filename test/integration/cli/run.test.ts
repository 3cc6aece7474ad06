import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../../unit/tools/helpers';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { eventually, watchDir } from '../../unit/helpers/changes';
import { cliBundle, ofType, runCli } from './cliHarness';
import { startTruncatingServer } from './truncatingServer';

/**
 * `keel run … --output-format stream-json` as a user runs it: a child process of the built CLI,
 * the real Anthropic provider against the fake model server (a real loopback HTTP server).
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (prompt: string, baseUrl: string, ...extra: string[]) => ['run', prompt, '--provider', 'anthropic', '--base-url', baseUrl, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', ...extra];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cli-ws-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel run against the fake model server', () => {
  it('reads, greps, edits, runs a command over several turns and finishes', async () => {
    writeFileSync(join(workspace, 'greeting.txt'), 'hello world\n');
    writeFileSync(join(workspace, 'notes.md'), 'TODO: say goodbye\n');
    server.enqueue(
      { blocks: [{ type: 'text', text: 'Reading first.' }, { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'greeting.txt' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_grep', name: 'Grep', input: { pattern: 'TODO' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_edit', name: 'Edit', input: { file_path: 'greeting.txt', old_string: 'hello world', new_string: 'goodbye world' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'cat greeting.txt && echo ran-ok' } }] },
      { blocks: [{ type: 'text', text: 'Changed the greeting and checked it.' }] },
    );
    const run = await runCli(args('change the greeting', server.url, '--mode', 'bypassPermissions'), KEY);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(readFileSync(join(workspace, 'greeting.txt'), 'utf8')).toBe('goodbye world\n');
    expect(ofType(run.events, 'tool_call').map((e) => e.name)).toEqual(['Read', 'Grep', 'Edit', 'Bash']);
    const results = ofType(run.events, 'tool_result');
    expect(results.map((e) => [e.id, e.is_error])).toEqual([['toolu_read', false], ['toolu_grep', false], ['toolu_edit', false], ['toolu_bash', false]]);
    expect(ofType(run.events, 'tool_output').map((e) => e.chunk).join('')).toContain('ran-ok');
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed', stopReason: 'end_turn' });
    // Five turns, then the gatekeeper's one short lesson call (docs/memory.md).
    expect(server.requests).toHaveLength(6);
    expect(JSON.stringify((server.requests[5]!.body as { system: unknown }).system)).toContain('You maintain a small memory');
    // The grep found the TODO and the model was told so.
    expect(JSON.stringify((server.requests[2]!.body as { messages: unknown[] }).messages.at(-1))).toContain('notes.md');
    for (const e of run.events) expect(typeof e.taskId).toBe('string');
  });

  it('retries a mid-stream overloaded error and completes', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'partial answer that breaks' }], fault: { kind: 'midstream-error', afterEvents: 4 } }, { blocks: [{ type: 'text', text: 'Recovered.' }] });
    const run = await runCli(args('hi', server.url), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'retry')).toEqual([expect.objectContaining({ code: 'overloaded', attempt: 1 })]);
    expect(server.requests).toHaveLength(3); // the failed try, the retry, the lesson call
    expect(JSON.stringify(server.requests[1]!.body)).not.toContain('partial answer');
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('never runs a tool call whose input was cut off by max_tokens', async () => {
    const cut = await startTruncatingServer();
    try {
      const run = await runCli(args('write a file', cut.url, '--mode', 'bypassPermissions'), KEY);
      expect((await run.exit).code, run.stderr()).toBe(0);
      expect(existsSync(join(workspace, 'never.txt'))).toBe(false);
      expect(ofType(run.events, 'tool_call')).toEqual([]);
      expect(ofType(run.events, 'tool_result')).toEqual([]);
      expect(cut.bodies).toHaveLength(3); // the cut-off turn, the next, the lesson call
      expect(JSON.stringify(cut.bodies[1])).toContain('NOT run');
      expect(JSON.stringify(cut.bodies[1])).not.toContain('toolu_cut');
    } finally {
      await cut.close();
    }
  });

  it('Ctrl+C during a command cancels the task and kills the command', async () => {
    const pidfile = join(workspace, 'sleep.pid');
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: `sleep 60 & echo $! > ${pidfile}; wait` } }] });
    const run = await runCli(args('wait a minute', server.url, '--mode', 'bypassPermissions'), KEY);
    await eventually(() => existsSync(pidfile) && readFileSync(pidfile, 'utf8').trim() !== '', () => 'the command never started', watchDir(workspace));
    const pid = Number(readFileSync(pidfile, 'utf8').trim());
    expect(alive(pid)).toBe(true);
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    expect(code).toBe(1);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    await eventually(() => !alive(pid), () => `sleep ${pid} still running`);
    expect(alive(pid)).toBe(false);
  });
});

describe('keel run: bad inputs end with exit 1 and a message', () => {
  it('no API key', async () => {
    const run = await runCli(args('hi', server.url), {});
    expect((await run.exit).code).toBe(1);
    expect(ofType(run.events, 'error')).toEqual([expect.objectContaining({ code: 'no_api_key' })]);
    expect(String(ofType(run.events, 'error')[0]!.message)).toMatch(/ANTHROPIC_API_KEY/);
    expect(server.requests).toHaveLength(0);
  });

  it('connection refused', async () => {
    const port = await closedPort();
    const run = await runCli(args('hi', `http://127.0.0.1:${port}`), KEY);
    expect((await run.exit).code).toBe(1);
    expect(ofType(run.events, 'error').at(-1)).toMatchObject({ code: 'connection_refused' });
    expect(String(ofType(run.events, 'error').at(-1)!.message).length).toBeGreaterThan(0);
  });

  it('401 from the server', async () => {
    const guarded = await startFakeModelServer({ requireApiKey: 'sk-right' });
    try {
      const run = await runCli(args('hi', guarded.url), { ANTHROPIC_API_KEY: 'sk-wrong' });
      expect((await run.exit).code).toBe(1);
      expect(ofType(run.events, 'error').at(-1)).toMatchObject({ code: 'auth_failed' });
      expect(run.stdout() + run.stderr()).not.toContain('sk-wrong');
    } finally {
      await guarded.close();
    }
  });

  it('malformed SSE every time: retried, then exit 1 with malformed_response', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'some text here' }], fault: { kind: 'malformed', afterEvents: 3 }, repeat: 10 });
    const run = await runCli(args('hi', server.url), KEY);
    expect((await run.exit).code).toBe(1);
    expect(ofType(run.events, 'retry').length).toBeGreaterThan(0);
    expect(ofType(run.events, 'error').at(-1)).toMatchObject({ code: 'malformed_response' });
  });

  it('malformed SSE once, then a good turn: recovered', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'some text here' }], fault: { kind: 'malformed', afterEvents: 3 } }, { blocks: [{ type: 'text', text: 'Fine now.' }] });
    const run = await runCli(args('hi', server.url), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'retry')).toEqual([expect.objectContaining({ code: 'malformed_response' })]);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  });
});

/** Running, not a zombie (an orphan here may wait a while to be reaped). */
function alive(pid: number): boolean {
  return isAlive(pid);
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
