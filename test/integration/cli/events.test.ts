import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BusEndpoint } from '../../../src/core/events/busSocket';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { eventually } from '../../unit/helpers/changes';
import { cliBundle, runCli, type CliRun } from './cliHarness';

/**
 * `keel events --follow` as a person would use it: a real `keel run` child whose model response
 * stalls mid-stream (the fake server stops sending after a few SSE events), and a second `keel`
 * process following its event bus over the socket.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const started: CliRun[] = [];
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const FAULTY_MCP = resolve(__dirname, '../../fixtures/mcp/faultyServer.mjs');
type Line = Record<string, unknown>;

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-events-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-events-home-'));
});
afterEach(async () => {
  for (const r of started.splice(0)) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  await server.close();
});

describe('keel events --follow', () => {
  it('prints the live bus of a running keel run as NDJSON, through a 0600 socket, up to its AppShutdown', async () => {
    // The follower first: it joins buses that start later.
    const follower = await runCli(['events', '--follow'], {}, storage);
    started.push(follower);
    server.enqueue({ blocks: [{ type: 'text', text: 'a long answer that never finishes' }], fault: { kind: 'stall', afterEvents: 3 } });
    const run = await runCli(['run', 'explain the build', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace], KEY, storage);
    started.push(run);
    const pid = run.child.pid!;
    const fromRun = () => follower.events.filter((e) => e.pid === pid);
    // The run is inside its stalled model call: its assistant message started streaming. (The
    // follower joins a bus once it sees it, so it may miss the run's first events: the bus is live.)
    await eventually(() => fromRun().some((e) => e.kind === 'TaskEvent' && (e.event as { type: string }).type === 'assistant_start') || run.child.exitCode !== null, () => `no streaming answer on the bus: ${follower.stdout()}\n${follower.stderr()}\n${run.stderr()}`, follower.changes, run.changes);
    expect(run.child.exitCode, run.stderr()).toBeNull();
    const seen = fromRun();
    expect(seen[0]).toMatchObject({ kind: 'AppStarted', host: 'keel run', pid, seq: 1 });
    // Only the task's own events follow (its hook events included) — and, when the suite runs on
    // workers (keel run's default; KEEL_WORKERS=0 runs it in process), its worker's states; in
    // process, never those.
    const onWorkers = Number(process.env.KEEL_WORKERS || '4') > 0;
    // The task's hook events (SessionStart, UserPromptSubmit: announced even with no hook
    // configured) are its own too; a follower that joins early sees them.
    const fromTask = (kind: string) => kind === 'TaskEvent' || kind === 'HookEvent' || kind.startsWith('Session') || (onWorkers && kind === 'WorkerStateChanged');
    expect(seen.slice(1).filter((e) => !fromTask(String(e.kind)))).toEqual([]);
    // Each line is the bus's own event, numbered without gaps after the reader joined.
    const seqs = seen.slice(1).map((e) => e.seq as number);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    // Only the user can read the socket.
    const ep = JSON.parse(readFileSync(join(storage, 'events', `${pid}.json`), 'utf8')) as BusEndpoint;
    expect(statSync(ep.socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(storage, 'events')).mode & 0o777).toBe(0o700);

    run.child.kill('SIGTERM');
    await run.exit;
    await eventually(() => fromRun().some((e) => e.kind === 'AppShutdown'), () => `no AppShutdown: ${follower.stdout()}`, follower.changes);
    expect(fromRun().at(-1)).toMatchObject({ kind: 'AppShutdown', pid });
    follower.child.kill('SIGINT');
    expect((await follower.exit).code).toBe(0);
    expect(follower.stderr()).toContain(`joined keel run (pid ${pid})`);
  }, 120_000);

  it('shows the worker of a `keel run --workers 1` become ready and busy, and its crash when it is killed', async () => {
    const follower = await runCli(['events', '--follow'], {}, storage);
    started.push(follower);
    // The answer stalls: the worker stays busy with the task's query until the test kills it.
    server.enqueue({ blocks: [{ type: 'text', text: 'a long answer that never finishes' }], fault: { kind: 'stall', afterEvents: 3 } });
    const run = await runCli(['run', 'explain the build', '--workers', '1', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace], KEY, storage);
    started.push(run);
    const pid = run.child.pid!;
    const workerEvents = () => follower.events.filter((e) => e.pid === pid && e.kind === 'WorkerStateChanged');
    const streaming = () => follower.events.find((e) => e.pid === pid && e.kind === 'TaskEvent' && (e.event as { type: string }).type === 'assistant_start');
    // The worker streams the answer (its turn events reach the bus through the task).
    await eventually(() => (workerEvents().some((e) => e.state === 'busy') && streaming() !== undefined) || run.child.exitCode !== null, () => `no busy worker streaming on the bus: ${follower.stdout()}\n${run.stderr()}`, follower.changes, run.changes);
    const [ready, busy] = workerEvents() as Line[];
    const taskId = streaming()!.taskId as string;
    // A worker process of its own (not the run's), started for the task and bound to it.
    expect(ready).toMatchObject({ kind: 'WorkerStateChanged', state: 'ready', taskId, workerPid: expect.any(Number) });
    expect(ready!.workerPid).not.toBe(pid);
    expect(busy).toMatchObject({ state: 'busy', workerId: ready!.workerId, workerPid: ready!.workerPid, taskId, queryId: expect.any(String) });

    process.kill(ready!.workerPid as number, 'SIGKILL');
    await eventually(() => workerEvents().some((e) => e.state === 'stopped'), () => `no stopped worker: ${follower.stdout()}`, follower.changes);
    const first = workerEvents().filter((e) => e.workerId === ready!.workerId);
    expect(first.map((e) => e.state)).toEqual(['ready', 'busy', 'crashed', 'stopped']);
    expect(first[2]).toMatchObject({ workerPid: ready!.workerPid, taskId, reason: expect.stringMatching(/SIGKILL/) });

    run.child.kill('SIGTERM');
    await run.exit;
    follower.child.kill('SIGINT');
    await follower.exit;
  }, 120_000);

  it('a `keel run --workers 1` that completes: its worker is ready, busy, idle and stopped before the AppShutdown', async () => {
    const follower = await runCli(['events', '--follow'], {}, storage);
    started.push(follower);
    server.enqueue({ blocks: [{ type: 'text', text: 'The build uses esbuild.' }] });
    const run = await runCli(['run', 'explain the build', '--workers', '1', '--no-memory', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace], KEY, storage);
    started.push(run);
    const pid = run.child.pid!;
    expect((await run.exit).code, run.stderr()).toBe(0);
    await eventually(() => follower.events.some((e) => e.pid === pid && e.kind === 'AppShutdown'), () => `no AppShutdown: ${follower.stdout()}`, follower.changes);
    const fromRun = follower.events.filter((e) => e.pid === pid);
    const workers = fromRun.filter((e) => e.kind === 'WorkerStateChanged');
    expect(workers.map((e) => e.state)).toEqual(['ready', 'busy', 'idle', 'stopped']);
    expect(new Set(workers.map((e) => e.workerPid)).size).toBe(1);
    expect(fromRun.at(-1)).toMatchObject({ kind: 'AppShutdown' });
    follower.child.kill('SIGINT');
    await follower.exit;
  }, 120_000);

  it('shows the MCP server of a `keel run --mcp-config` connect, each state naming the one it left', async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'keel-events-mcp-')), 'servers.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { faulty: { command: process.execPath, args: [FAULTY_MCP] } } }));
    const follower = await runCli(['events', '--follow'], {}, storage);
    started.push(follower);
    server.enqueue({ blocks: [{ type: 'text', text: 'a long answer that never finishes' }], fault: { kind: 'stall', afterEvents: 3 } });
    const run = await runCli(['run', 'explain the build', '--mcp-config', config, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace], KEY, storage);
    started.push(run);
    const pid = run.child.pid!;
    const mcpEvents = () => follower.events.filter((e) => e.pid === pid && e.kind === 'McpServerStateChanged');
    // The tools are listed before the first model request: the server is ready by then.
    await eventually(() => mcpEvents().some((e) => e.state === 'ready.idle') || run.child.exitCode !== null, () => `no ready MCP server on the bus: ${follower.stdout()}\n${run.stderr()}`, follower.changes, run.changes);
    const seen = mcpEvents();
    expect(seen.at(-1)).toMatchObject({ server: 'faulty', phase: 'ready', state: 'ready.idle', previous: 'initializing', approval: 'not-needed', attempts: 0 });
    expect(seen.at(-1)!.tools as number).toBeGreaterThan(0);
    // No transition missing from what the follower saw (it may have joined after the first).
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.previous).toBe(seen[i - 1]!.state);

    run.child.kill('SIGTERM');
    await run.exit;
    follower.child.kill('SIGINT');
    await follower.exit;
  }, 120_000);

  it('a reader that stops reading: the follower stops reading the bus, the run is not held up and says Lagged; the first SIGTERM ends the follower (issue 26 item 9)', async () => {
    const follower = await runCli(['events', '--follow'], {}, storage);
    started.push(follower);
    // The person's pager does not read (yet).
    follower.child.stdout!.pause();
    // With no Keel process yet it says that it waits (issue 26 item 17).
    await eventually(() => follower.stderr().includes('keel events: waiting for a Keel process'), () => `no waiting line: ${follower.stderr()}`, follower.changes);
    const BLOCKS = 10_000;
    /**
     * A run that streams 10,000 text blocks (one `text` event each: far more than a bus reader's
     * 1,000-event queue), then waits for `release` before it ends its answer.
     */
    const flood = async () => {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const blocks = Array.from({ length: BLOCKS }, () => ({ type: 'text' as const, text: 'xy' }));
      // message_start, then 3 events a block; then the stall, before message_delta and message_stop.
      server.enqueue({ blocks, fault: { kind: 'stall', afterEvents: 1 + 3 * BLOCKS, until: released } });
      const run = await runCli(['run', 'write a lot', '--no-memory', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace], KEY, storage);
      started.push(run);
      // Every delta went through the run's bus: its own output has the whole text.
      await eventually(() => (run.stdout().match(/xy/g)?.length ?? 0) >= BLOCKS || run.child.exitCode !== null, () => `the run did not stream: ${run.stderr()}`, run.changes);
      expect(run.child.exitCode, run.stderr()).toBeNull();
      expect(follower.stderr()).toContain(`joined keel run (pid ${run.child.pid!})`);
      return { run, pid: run.child.pid!, release };
    };

    const first = await flood();
    // The reader reads again: the bus dropped what did not fit and says so.
    follower.child.stdout!.resume();
    await eventually(() => follower.events.some((e) => e.pid === first.pid && e.kind === 'Lagged'), () => `no Lagged line: ${follower.stdout().slice(-500)}`, follower.changes);
    first.release();
    expect((await first.run.exit).code, first.run.stderr()).toBe(0);
    await eventually(() => follower.events.some((e) => e.pid === first.pid && e.kind === 'AppShutdown'), () => `no AppShutdown: ${follower.stderr()}`, follower.changes);
    const lines = follower.events.filter((e) => e.pid === first.pid);
    const missed = lines.filter((e) => e.kind === 'Lagged').reduce((n, e) => n + (e.missed as number), 0);
    expect(missed).toBeGreaterThan(1000);
    // What it printed is what it did not miss: fewer than the text events published.
    expect(lines.filter((e) => e.kind === 'TaskEvent' && (e.event as { type: string }).type === 'text').length).toBeLessThan(BLOCKS);
    expect(lines.at(-1)).toMatchObject({ kind: 'AppShutdown' });

    // Stuck again, with output waiting for its reader: one SIGTERM ends the follower at once.
    follower.child.stdout!.pause();
    const second = await flood();
    follower.child.kill('SIGTERM');
    expect(await follower.exit).toEqual({ code: 0, signal: null });
    second.release();
    expect((await second.run.exit).code, second.run.stderr()).toBe(0);
  }, 300_000);

  it('refuses to run without --follow (the bus is live only)', async () => {
    const r = await runCli(['events'], {}, storage);
    expect((await r.exit).code).toBe(2);
    expect(r.stderr()).toContain('--follow is required');
  });
});
