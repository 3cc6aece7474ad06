import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise } from 'xstate';
import { mcpConnectionMachine } from '../../../src/core/machines/mcpConnection/mcpConnection.machine';
import type { McpCallsEvent, McpConnectionEmitted, McpInitialized } from '../../../src/core/machines/mcpConnection/types';
import { Changes } from '../helpers/changes';

/**
 * The mcpConnection machine's bookkeeping of calls in `ready` (no I/O: its connect actors are
 * replaced, and `runCalls` only records what it is given): the substate always names what is in
 * flight, every call taken ends with exactly one `callDone`, and a late or repeated answer changes
 * nothing. modelBased.test.ts replays the same events against a real server.
 */
const INIT: McpInitialized = { serverInfo: null, tools: [], resources: [], prompts: [] };
const answer = { ok: true as const, content: [], isError: false, summary: '' };

function start() {
  const received: McpCallsEvent[] = [];
  const machine = mcpConnectionMachine.provide({
    actors: {
      openStdio: fromPromise<void, { server: string }>(async () => {}),
      initialize: fromPromise(async () => INIT),
      runCalls: fromCallback<McpCallsEvent, { server: string }>(({ receive }) => receive((e) => received.push(e))),
    },
  });
  const actor = createActor(machine, { input: { server: 's', transport: 'stdio', limits: { maxRestartAttempts: 5, backoffMs: [1000], stableAfterMs: 60_000 } } });
  const done: McpConnectionEmitted[] = [];
  actor.on('callDone', (e) => done.push(e));
  actor.start();
  const state = () => JSON.stringify(actor.getSnapshot().value);
  return { actor, received, done, state };
}

async function ready(s: ReturnType<typeof start>): Promise<void> {
  const changes = new Changes();
  const sub = s.actor.subscribe(changes.notify);
  s.actor.send({ type: 'CONNECT' });
  await changes.until(() => s.actor.getSnapshot().matches('ready') || s.actor.getSnapshot().matches('error'), s.state);
  sub.unsubscribe();
  expect(s.state()).toBe('{"ready":"idle"}');
}

describe('mcpConnection: calls in ready', () => {
  it('names what is in flight, ends each call once, and ignores late answers', async () => {
    const s = start();
    await ready(s);
    s.actor.send({ type: 'CALL_TOOL', callId: 'c1', tool: 't', args: {}, timeoutMs: 1000 });
    expect(s.state()).toBe('{"ready":"toolCall"}');
    s.actor.send({ type: 'READ_RESOURCE', callId: 'r1', uri: 'x://r', timeoutMs: 1000 });
    expect(s.state()).toBe('{"ready":"toolCall"}');
    s.actor.send({ type: 'CALL_TOOL', callId: 'c2', tool: 't', args: {}, timeoutMs: 1000 });
    expect(s.received.map((e) => `${e.type}:${e.callId}`)).toEqual(['CALL_TOOL:c1', 'READ_RESOURCE:r1', 'CALL_TOOL:c2']);
    s.actor.send({ type: 'CALL_DONE', callId: 'c1', output: answer });
    expect(s.state()).toBe('{"ready":"toolCall"}');
    s.actor.send({ type: 'CANCEL_CALL', callId: 'c2' });
    expect(s.state()).toBe('{"ready":"resourceRead"}');
    expect(s.received.at(-1)).toEqual({ type: 'CANCEL_CALL', callId: 'c2' });
    // The cancelled call's answer comes late: nothing changes, no second callDone.
    s.actor.send({ type: 'CALL_DONE', callId: 'c2', output: answer });
    s.actor.send({ type: 'CANCEL_CALL', callId: 'c2' });
    expect(s.state()).toBe('{"ready":"resourceRead"}');
    s.actor.send({ type: 'READ_DONE', callId: 'r1', output: { ok: true, contents: [] } });
    expect(s.state()).toBe('{"ready":"idle"}');
    expect(s.done).toEqual([
      { type: 'callDone', callId: 'c1', output: answer },
      { type: 'callDone', callId: 'c2', output: undefined },
      { type: 'callDone', callId: 'r1', output: { ok: true, contents: [] } },
    ]);
    expect(s.actor.getSnapshot().context).toMatchObject({ calls: [], reads: [] });
    // Two of a kind: the end of one leaves the other's substate.
    s.actor.send({ type: 'READ_RESOURCE', callId: 'r2', uri: 'x://r', timeoutMs: 1000 });
    s.actor.send({ type: 'READ_RESOURCE', callId: 'r3', uri: 'x://r', timeoutMs: 1000 });
    s.actor.send({ type: 'READ_DONE', callId: 'r2', output: { ok: true, contents: [] } });
    expect(s.state()).toBe('{"ready":"resourceRead"}');
    s.actor.send({ type: 'CALL_TOOL', callId: 'c4', tool: 't', args: {}, timeoutMs: 1000 });
    s.actor.send({ type: 'CALL_TOOL', callId: 'c5', tool: 't', args: {}, timeoutMs: 1000 });
    s.actor.send({ type: 'CANCEL_CALL', callId: 'c4' });
    expect(s.state()).toBe('{"ready":"toolCall"}');
    s.actor.send({ type: 'CALL_DONE', callId: 'c5', output: answer });
    expect(s.state()).toBe('{"ready":"resourceRead"}');
    s.actor.send({ type: 'CANCEL_CALL', callId: 'r3' });
    expect(s.state()).toBe('{"ready":"idle"}');
    expect(s.done.map((e) => e.callId)).toEqual(['c1', 'c2', 'r1', 'r2', 'c4', 'c5', 'r3']);
    s.actor.stop();
  });

  it('leaving ready ends every call in flight; an expired session hands its answer back for a retry', async () => {
    const s = start();
    await ready(s);
    s.actor.send({ type: 'CALL_TOOL', callId: 'c1', tool: 't', args: {}, timeoutMs: 1000 });
    s.actor.send({ type: 'CALL_TOOL', callId: 'c2', tool: 't', args: {}, timeoutMs: 1000 });
    const expired = { ok: false as const, kind: 'session_expired' as const, message: '404' };
    s.actor.send({ type: 'CALL_DONE', callId: 'c2', output: expired });
    expect(s.actor.getSnapshot().matches('ready')).toBe(false);
    expect(s.done).toEqual([
      { type: 'callDone', callId: 'c1', output: undefined },
      { type: 'callDone', callId: 'c2', output: expired },
    ]);
    expect(s.actor.getSnapshot().context).toMatchObject({ calls: [], reads: [], lastError: expect.stringContaining('session expired') });
    await ready(s);
    s.actor.send({ type: 'CALL_TOOL', callId: 'c3', tool: 't', args: {}, timeoutMs: 1000 });
    s.actor.send({ type: 'CONNECTION_LOST', reason: 'gone' });
    expect(s.done.at(-1)).toEqual({ type: 'callDone', callId: 'c3', output: undefined });
    s.actor.stop();
  });
});
