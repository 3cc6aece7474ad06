import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
import { cliBundle, ofType, runCli, type CliRun, endedWithin } from './cliHarness';

/**
 * `keel tasks replay` of a task that was interrupted — SIGTERM, Ctrl+C, its worker killed, no API
 * key — compares the events up to the interruption and reports no difference (docs/persistence.md,
 * "Deterministic replay"): what the person or the machine did to stop the run is not the machines'
 * to re-create. Each task is recorded by a real `keel run` against the fake model server and
 * stopped for real.
 */
let server: FakeModelServer;
let dir: string;
let ws: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const GONE_WITHIN_MS = 30_000;

beforeAll(async () => {
  await cliBundle();
  server = await startFakeModelServer();
  dir = mkdtempSync(join(tmpdir(), 'keel-replay-int-'));
  ws = join(dir, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'a.txt'), 'hello\n');
}, 120_000);
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const runArgs = (prompt: string, ...extra: string[]) => ['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', ws, '--output-format', 'stream-json', ...extra];

const ended = (run: CliRun) => endedWithin(run, GONE_WITHIN_MS);

async function replay(run: CliRun): Promise<{ code: number | null; out: string }> {
  const id = String(run.events[0]!.taskId);
  const r = await runCli(['tasks', 'replay', id], {}, run.storage);
  const exit = await r.exit;
  return { code: exit.code, out: r.stdout() + r.stderr() };
}

const storage = (name: string) => join(dir, name);

/** A person's own rule (their ~/.keel/settings.json, HOME being the storage folder here) that lets `sleep` run in default mode. */
function withSleepAllowed(st: string): string {
  mkdirSync(join(st, '.keel'), { recursive: true });
  writeFileSync(join(st, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(sleep:*)'] } }));
  return st;
}

describe('keel tasks replay of an interrupted task compares up to the interruption', () => {
  it('SIGTERM while the answer streams', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Let me read it.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'a.txt' } }] });
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(runArgs('read a.txt, then answer slowly'), KEY, storage('sigterm'));
    await waitUntil(() => ofType(run.events, 'tool_result').length > 0 && ofType(run.events, 'text').length > 1, () => `no second answer yet; stderr: ${run.stderr()}`, 60_000);
    run.child.kill('SIGTERM');
    await ended(run);
    expect(run.events.at(-1)).toMatchObject({ type: 'task', state: 'interrupted' });
    const r = await replay(run);
    expect(r.out).toMatch(/came out the same, in the same order/);
    expect(r.out).toMatch(/compared up to event \d+: the task was interrupted/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('Ctrl+C while the answer streams (the task is cancelled)', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(runArgs('answer slowly'), KEY, storage('sigint'));
    await waitUntil(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, 60_000);
    run.child.kill('SIGINT');
    await ended(run);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    const r = await replay(run);
    expect(r.out).toMatch(/came out the same, in the same order/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('its worker killed while the answer streams', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(runArgs('answer slowly', '--workers', '1'), KEY, storage('worker'));
    await waitUntil(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, 60_000);
    const workers = execFileSync('pgrep', ['-P', String(run.child.pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
    expect(workers.length).toBeGreaterThan(0);
    for (const pid of workers) process.kill(pid, 'SIGKILL');
    await ended(run);
    expect(ofType(run.events, 'error').at(-1)).toMatchObject({ code: 'worker_lost' });
    const r = await replay(run);
    expect(r.out).toMatch(/came out the same, in the same order/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('no API key', async () => {
    const run = await runCli(runArgs('hello'), { ANTHROPIC_API_KEY: undefined }, storage('nokey'));
    await ended(run);
    expect(ofType(run.events, 'error').at(-1)).toMatchObject({ code: 'no_api_key' });
    const r = await replay(run);
    expect(r.out).toMatch(/came out the same, in the same order/);
    expect(r.code).toBe(0);
  }, 120_000);
  it('SIGTERM while a command runs', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 30' } }] });
    const run = await runCli(runArgs('sleep a while'), KEY, withSleepAllowed(storage('sigterm-tool')));
    await waitUntil(() => ofType(run.events, 'turn').some((e) => e.state === 'executingTool'), () => `no command yet; stderr: ${run.stderr()}`, 60_000);
    run.child.kill('SIGTERM');
    await ended(run);
    const r = await replay(run);
    expect(r.out).toMatch(/came out the same, in the same order/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('Ctrl+C while a command runs, then a follow-up: the cancel is played back where it came, and the next run compared too', async () => {
    const st = withSleepAllowed(storage('sigint-tool'));
    server.enqueue({ blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 30' } }] });
    const run = await runCli(runArgs('sleep a while'), KEY, st);
    await waitUntil(() => ofType(run.events, 'turn').some((e) => e.state === 'executingTool'), () => `no command yet; stderr: ${run.stderr()}`, 60_000);
    run.child.kill('SIGINT');
    await ended(run);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    server.enqueue({ blocks: [{ type: 'text', text: 'Stopped the sleep as asked.' }] });
    const id = String(run.events[0]!.taskId);
    const next = await runCli(runArgs('never mind', '--resume', id), KEY, st);
    expect((await next.exit).code, next.stderr()).toBe(0);
    const r = await replay(run);
    expect(r.out).toMatch(/came out the same, in the same order/);
    expect(r.out).not.toMatch(/compared up to/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('kill -9 while the answer streams (the log just ends)', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(runArgs('answer slowly'), KEY, storage('kill9'));
    await waitUntil(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, 60_000);
    run.child.kill('SIGKILL');
    await ended(run);
    const r = await replay(run);
    expect(r.out).toMatch(/compared up to event \d+: the log ends here while the task was running/);
    expect(r.out).toMatch(/came out the same, in the same order/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('still shows a difference before the interruption', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(runArgs('answer slowly'), KEY, storage('altered'));
    await waitUntil(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, 60_000);
    run.child.kill('SIGTERM');
    await ended(run);
    const path = join(run.storage, 'tasks', String(run.events[0]!.taskId), 'events.jsonl');
    // What the machines decide, not what is played back: the log now says the turn began at 7.
    writeFileSync(path, readFileSync(path, 'utf8').replace('"state":"checkingContext","turn":0', '"state":"checkingContext","turn":7'));
    const r = await replay(run);
    expect(r.out).toMatch(/first difference at event \d+/);
    expect(r.out).toContain('"turn":7');
    expect(r.code).toBe(1);
  }, 120_000);
});
