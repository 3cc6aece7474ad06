import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { followBuses } from '../../../src/core/events/busFollower';
import { BusSocketServer, listBusEndpoints } from '../../../src/core/events/busSocket';
import { EventBus } from '../../../src/core/events/eventBus';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function waitFor<T>(check: () => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const tick = () => {
      const v = check();
      if (v !== undefined) resolve(v);
      else setTimeout(tick, 5);
    };
    tick();
  });
}

describe('the bus over a local socket', () => {
  it('streams the live bus as JSON lines to a follower, private to the user, and cleans up', async () => {
    const storage = mkdtempSync(join(tmpdir(), 'keel-bus-'));
    roots.push(storage);
    const bus = new EventBus();
    const hello = bus.publish({ kind: 'AppStarted', host: 'test', pid: process.pid, version: '0' });
    const server = await BusSocketServer.start(bus, { storage, label: 'test host', hello });
    expect(statSync(server.endpoint.socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(storage, 'events')).mode & 0o777).toBe(0o700);
    expect(listBusEndpoints(storage).map((e) => e.pid)).toEqual([process.pid]);

    const lines: Record<string, unknown>[] = [];
    const stop = new AbortController();
    const joined = new Promise<void>((resolve) => {
      void followBuses(storage, { signal: stop.signal, onLine: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>), onEndpoint: (_, c) => c === 'joined' && resolve() });
    });
    await joined;
    await waitFor(() => (lines.length > 0 ? true : undefined));
    for (let i = 0; i < 50; i++) bus.publish({ kind: 'SessionCreated', taskId: `t${i}`, title: 'x', resumed: false });
    bus.publish({ kind: 'AppShutdown', host: 'test', pid: process.pid, reason: 'test over' });
    await server.close();
    await waitFor(() => (lines.some((l) => l.kind === 'AppShutdown') ? true : undefined));
    stop.abort();
    expect(lines[0]).toMatchObject({ kind: 'AppStarted', seq: 1, pid: process.pid });
    const created = lines.filter((l) => l.kind === 'SessionCreated').map((l) => l.taskId);
    expect(created).toEqual(Array.from({ length: 50 }, (_, i) => `t${i}`));
    expect(listBusEndpoints(storage)).toEqual([]);
  });
});
