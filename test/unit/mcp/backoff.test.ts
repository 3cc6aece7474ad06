import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor, fromCallback, fromPromise, type EventObject } from 'xstate';
import { DEFAULT_MCP_LIMITS } from '../../../src/core/mcp/limits';
import { mcpConnectionMachine } from '../../../src/core/machines/mcpConnection/mcpConnection.machine';
import { McpConnectFailure, type McpConnectionEvent, type McpInitialized, type McpVia } from '../../../src/core/machines/mcpConnection/types';

/**
 * Restart timing of the mcpConnection machine with fake timers. The transport actors are
 * replaced behind the machine's actor interface (a mock in a unit test): opening fails at once,
 * or succeeds and a test-held `watchConnection` reports the connection lost.
 */
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const LIMITS = { maxRestartAttempts: DEFAULT_MCP_LIMITS.maxRestartAttempts, backoffMs: DEFAULT_MCP_LIMITS.backoffMs, stableAfterMs: DEFAULT_MCP_LIMITS.stableAfterMs };

function failing(limits = LIMITS) {
  let opens = 0;
  const machine = mcpConnectionMachine.provide({
    actors: {
      openStdio: fromPromise<void, { server: string }>(async () => {
        opens++;
        throw new McpConnectFailure('spawn nope ENOENT');
      }),
      closeConnection: fromPromise<void, { server: string }>(async () => {}),
    },
  });
  const actor = createActor(machine, { input: { server: 's', transport: 'stdio', limits } }).start();
  return { actor, opens: () => opens };
}

/** The times (fake ms since CONNECT) at which the machine tried to open the transport. */
async function attemptTimes(limits = LIMITS, horizonMs = 120_000): Promise<number[]> {
  const { actor, opens } = failing(limits);
  const times: number[] = [];
  let seen = 0;
  const start = Date.now();
  actor.send({ type: 'CONNECT' });
  await vi.advanceTimersByTimeAsync(0);
  for (let t = 0; t <= horizonMs; t += 250) {
    if (opens() > seen) {
      seen = opens();
      times.push(Date.now() - start);
    }
    await vi.advanceTimersByTimeAsync(250);
  }
  actor.stop();
  return times;
}

describe('mcpConnection restart backoff (fake timers)', () => {
  it('restarts after 1, 2, 4, 8, 16 s, then stays in error', async () => {
    const times = await attemptTimes();
    expect(times).toEqual([0, 1000, 3000, 7000, 15000, 31000]);
  });

  it('stays in error until the person restarts it, which starts over from 1 s', async () => {
    const { actor, opens } = failing();
    actor.send({ type: 'CONNECT' });
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(opens()).toBe(6);
    expect(actor.getSnapshot().value).toBe('error');
    expect(actor.getSnapshot().context).toMatchObject({ attempts: 6, lastError: 'spawn nope ENOENT' });
    actor.send({ type: 'RESTART' });
    await vi.advanceTimersByTimeAsync(0);
    expect(opens()).toBe(7);
    expect(actor.getSnapshot().value).toBe('restarting');
    await vi.advanceTimersByTimeAsync(999);
    expect(opens()).toBe(7);
    await vi.advanceTimersByTimeAsync(1);
    expect(opens()).toBe(8);
    actor.stop();
  });

  it('caps the wait at 30 s when more restarts are allowed', async () => {
    const times = await attemptTimes({ ...LIMITS, maxRestartAttempts: 7 }, 200_000);
    expect(times.map((t, i) => (i === 0 ? t : t - times[i - 1]!))).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it('an error that needs the person (HTTP 401) is not restarted', async () => {
    let opens = 0;
    const machine = mcpConnectionMachine.provide({
      actors: {
        openStreamableHttp: fromPromise<void, { server: string }>(async () => {
          opens++;
          throw new McpConnectFailure('the server requires authorization (HTTP 401)', false, false);
        }),
      },
    });
    const actor = createActor(machine, { input: { server: 's', transport: 'http', limits: LIMITS } }).start();
    actor.send({ type: 'CONNECT' });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(opens).toBe(1);
    expect(actor.getSnapshot().value).toBe('error');
    actor.stop();
  });

  it('a connection that stayed ready for a minute forgets its failed attempts', async () => {
    let lose: ((e: McpConnectionEvent) => void) | null = null;
    const machine = mcpConnectionMachine.provide({
      actors: {
        openStdio: fromPromise<void, { server: string }>(async () => {}),
        initialize: fromPromise<McpInitialized, { server: string; via: McpVia }>(async () => ({ serverInfo: null, tools: [], resources: [], prompts: [] })),
        watchConnection: fromCallback<EventObject, { server: string }>(({ sendBack }) => {
          lose = sendBack;
        }),
        closeConnection: fromPromise<void, { server: string }>(async () => {}),
      },
    });
    const actor = createActor(machine, { input: { server: 's', transport: 'stdio', limits: LIMITS } }).start();
    actor.send({ type: 'CONNECT' });
    await vi.advanceTimersByTimeAsync(0);
    expect(actor.getSnapshot().matches('ready')).toBe(true);
    // Lost right away three times: 1, 2, 4 s.
    for (const wait of [1000, 2000, 4000]) {
      lose!({ type: 'CONNECTION_LOST', reason: 'exited' });
      await vi.advanceTimersByTimeAsync(wait - 1);
      expect(actor.getSnapshot().value).toBe('restarting');
      await vi.advanceTimersByTimeAsync(1);
      expect(actor.getSnapshot().matches('ready')).toBe(true);
    }
    expect(actor.getSnapshot().context.attempts).toBe(3);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(actor.getSnapshot().context.attempts).toBe(0);
    lose!({ type: 'CONNECTION_LOST', reason: 'exited' });
    await vi.advanceTimersByTimeAsync(999);
    expect(actor.getSnapshot().value).toBe('restarting');
    await vi.advanceTimersByTimeAsync(1);
    expect(actor.getSnapshot().matches('ready')).toBe(true);
    actor.stop();
  });
});
