import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BusEndpoint } from '../../../src/core/events/busSocket';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
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
    await waitUntil(
      () => fromRun().some((e) => e.kind === 'TaskEvent' && (e.event as { type: string }).type === 'assistant_start') || run.child.exitCode !== null,
      () => `no streaming answer on the bus: ${follower.stdout()}\n${follower.stderr()}\n${run.stderr()}`,
      60_000,
    );
    expect(run.child.exitCode, run.stderr()).toBeNull();
    const seen = fromRun();
    expect(seen[0]).toMatchObject({ kind: 'AppStarted', host: 'keel run', pid, seq: 1 });
    expect(seen.slice(1).every((e) => e.kind === 'TaskEvent' || String(e.kind).startsWith('Session'))).toBe(true);
    // Each line is the bus's own event, numbered without gaps after the reader joined.
    const seqs = seen.slice(1).map((e) => e.seq as number);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    // Only the user can read the socket.
    const ep = JSON.parse(readFileSync(join(storage, 'events', `${pid}.json`), 'utf8')) as BusEndpoint;
    expect(statSync(ep.socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(storage, 'events')).mode & 0o777).toBe(0o700);

    run.child.kill('SIGTERM');
    await run.exit;
    await waitUntil(() => fromRun().some((e) => e.kind === 'AppShutdown'), () => `no AppShutdown: ${follower.stdout()}`, 30_000);
    expect(fromRun().at(-1)).toMatchObject({ kind: 'AppShutdown', pid });
    follower.child.kill('SIGINT');
    expect((await follower.exit).code).toBe(0);
    expect(follower.stderr()).toContain(`joined keel run (pid ${pid})`);
  }, 120_000);

  it('refuses to run without --follow (the bus is live only)', async () => {
    const r = await runCli(['events'], {}, storage);
    expect((await r.exit).code).toBe(2);
    expect(r.stderr()).toContain('--follow is required');
  });
});
