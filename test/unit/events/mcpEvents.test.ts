import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type BusDelivery, type BusEventOf } from '../../../src/core/events/eventBus';
import { bridgeMcpEvents } from '../../../src/core/mcp/events';
import type { McpHub } from '../../../src/core/mcp/hub';
import { FAULTY, hubOf, nodeServer, server, tempDir } from '../mcp/helpers';
import { eventually } from '../helpers/changes';

/**
 * The MCP servers' state changes on the event bus, with a real hub and a real stdio server (the
 * faulty server fixture of the MCP tests, on the official SDK): a queued bus subscriber sees the
 * connection come up, a tool call, the server dying in the middle of one and restarting — every
 * transition, in order, each naming the state it left.
 */
const hubs: McpHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.dispose()));
});

type McpEvent = BusEventOf<'McpServerStateChanged'>;
const FAST = { backoffMs: [20, 40, 80], stableAfterMs: 60_000 };

/** No deadline: the test's timeout bounds it (the connection's events have no hook here). */
function until(condition: () => boolean, what: string): Promise<void> {
  return eventually(condition, () => what);
}

describe('MCP events on the bus (a real stdio server)', () => {
  it('stdio → initializing → ready, a call, a crash mid-call and the restart, every transition in order', async () => {
    const logFile = join(tempDir(), 'faulty.log');
    const { hub } = hubOf([server('faulty', nodeServer(FAULTY, ['--mode', 'normal', '--log', logFile]))], { limits: FAST });
    hubs.push(hub);
    const bus = new EventBus();
    const seen: BusDelivery[] = [];
    bus.subscribe((d) => void seen.push(d), { name: 'test' });
    bridgeMcpEvents(bus, hub);
    const mcp = () => seen.filter((d): d is McpEvent => d.kind === 'McpServerStateChanged');

    await hub.toolDefinitions();
    await bus.drained();
    const up = mcp();
    // The baseline (disconnected) is not an event; the first one leaves it, for the transport
    // (`connecting` only chooses one: the machine never rests there).
    expect(up[0]).toMatchObject({ server: 'faulty', previous: 'disconnected', phase: 'stdio' });
    expect(up.at(-1)).toMatchObject({ server: 'faulty', phase: 'ready', approval: 'not-needed', attempts: 0 });
    expect(up.at(-1)!.tools).toBeGreaterThan(0);

    const out = await hub.callTool('mcp__faulty__crash', {}, { signal: new AbortController().signal });
    expect(out.isError).toBe(true);
    await until(() => hub.status()[0]!.phase === 'ready' && mcp().some((e) => e.phase === 'restarting'), 'the restart');
    await bus.drained();
    const all = mcp();
    expect(all.map((e) => e.state)).toEqual(['stdio', 'initializing', 'ready.idle', 'ready.toolCall', 'error', 'restarting', 'stdio', 'initializing', 'ready.idle']);
    // Each event names the state the one before it entered: no transition is missing.
    for (let i = 1; i < all.length; i++) expect(all[i]!.previous, `event ${i} of ${all.map((e) => e.state).join(', ')}`).toBe(all[i - 1]!.state);
    const restarting = all.find((e) => e.phase === 'restarting')!;
    expect(restarting.lastError).toBeTruthy();
    expect(restarting.attempts).toBeGreaterThan(0);
    expect(bus.stats().find((s) => s.name === 'test')!.missed).toBe(0);
  });

  it('a server turned off and on again: disabled, then back to ready', async () => {
    const { hub } = hubOf([server('faulty', nodeServer(FAULTY))], { limits: FAST });
    hubs.push(hub);
    await hub.toolDefinitions();
    const bus = new EventBus();
    const seen: BusDelivery[] = [];
    bus.subscribe((d) => void seen.push(d), { name: 'test' });
    // Bridged once ready: the states before are not replayed.
    bridgeMcpEvents(bus, hub);
    await hub.disable('faulty');
    await until(() => hub.status()[0]!.phase === 'disabled', 'disabled');
    await hub.enable('faulty');
    await until(() => hub.status()[0]!.phase === 'ready', 'ready again');
    await bus.drained();
    const phases = seen.filter((d): d is McpEvent => d.kind === 'McpServerStateChanged').map((e) => e.phase);
    expect(phases[0]).toBe('disabled');
    expect(phases.at(-1)).toBe('ready');
  });
});
