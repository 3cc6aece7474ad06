import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import type { EngineDecision } from '../../../src/core/permissions/engine';
import { denyingAsker, type PermissionAsker } from '../../../src/core/permissions/gate';
import type { McpHostDeps } from '../../../src/core/mcp/onWorkers/hostServer';
import { WorkerPool } from '../../../src/core/workers/pool';
import { remoteTurn } from '../../../src/core/workers/remoteTurn';
import type { TurnOutput } from '../../../src/core/machines/turn/types';
import { fakeWorker, queryParts, turnInput } from './fakeWorker';
import { RecordingSource } from './mcpSources';

/**
 * The host's side of a worker's MCP calls (mcp/onWorkers/hostServer.ts inside remoteTurn) against a
 * real worker process (the fake worker, which speaks the real protocol and plays a worker that is
 * right, wrong or compromised): what it may call, what it is refused, and what happens to a call
 * when the worker breaks the protocol or dies.
 */
const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
});

interface Seen {
  tools: string[] | null;
  results: Record<string, { content: unknown; isError: boolean; summary: string }>;
  progress: string[];
}

/** Runs one query whose worker does `spec` (see the fake worker's `mcp {JSON}`), with the host's MCP deps. */
async function query(spec: object, mcp: Partial<McpHostDeps> & { source: RecordingSource } | undefined, asker: PermissionAsker = denyingAsker) {
  const pool = new WorkerPool({ command: fakeWorker(), shutdownGraceMs: 2000, healthIntervalMs: 600_000 });
  pools.push(pool);
  const allow = async (): Promise<EngineDecision> => ({ decision: 'allow', reason: 'test rule' });
  const logs: string[] = [];
  const machine = remoteTurn({
    pool,
    queryParts,
    host: { asker, publish: () => undefined },
    ...(mcp ? { mcp: { decide: allow, log: (_l, m) => logs.push(m), ...mcp } } : {}),
  });
  const out: TurnOutput = await toPromise(createActor(machine, { input: turnInput('task-a', `mcp ${JSON.stringify(spec)}`) }).start());
  const text = out.status === 'done' ? (out.messages.at(-1)!.content[0] as { text: string }).text : '';
  return { out, seen: text ? (JSON.parse(text) as Seen) : null, pool, logs };
}

const ping = (callId: string, extra: object = {}) => ({ callId, name: 'mcp__alpha__ping', server: 'alpha', tool: 'ping', arguments: { n: 1 }, ...extra });

describe('MCP calls of a worker, served by the host', () => {
  it('lists the task\'s tools with their servers and runs an allowed call through the host\'s source', async () => {
    const source = new RecordingSource();
    const { seen } = await query({ list: true, calls: [ping('c1')] }, { source });
    expect(seen!.tools).toEqual(['mcp__alpha__ping', 'mcp__alpha__slow']);
    expect(seen!.results.c1).toEqual({ content: 'pong {"n":1}', isError: false, summary: 'ok' });
    expect(source.calls.map((c) => [c.name, c.args, c.toolCallId])).toEqual([['mcp__alpha__ping', { n: 1 }, 't-c1']]);
  });

  it('a compromised worker\'s call for a server the task did not get, or under another tool\'s name, is refused and never made', async () => {
    const source = new RecordingSource();
    const { seen, logs } = await query(
      {
        list: true,
        calls: [
          { callId: 'c1', name: 'mcp__beta__wipe', server: 'beta', tool: 'wipe' },
          // An offered name, claiming another server's tool.
          { callId: 'c2', name: 'mcp__alpha__ping', server: 'beta', tool: 'wipe' },
        ],
      },
      { source },
    );
    expect(seen!.results.c1).toEqual({ content: 'The host refused this MCP call: mcp__beta__wipe is not one of the MCP tools this task was given. The call was not made.', isError: true, summary: 'refused by the host' });
    expect(seen!.results.c2!.content).toBe('The host refused this MCP call: mcp__alpha__ping is tool ping of server alpha, not wipe of beta. The call was not made.');
    expect(source.calls).toEqual([]);
    expect(logs.join('\n')).toMatch(/mcp__beta__wipe .*refused/);
  });

  it('a call made before any tool list is refused (nothing was offered yet)', async () => {
    const source = new RecordingSource();
    const { seen } = await query({ calls: [ping('c1')] }, { source });
    expect(seen!.results.c1!.isError).toBe(true);
    expect(source.calls).toEqual([]);
  });

  it('the host re-checks the permission: a deny is refused; an ask needs the host\'s own allow for that very tool call, once', async () => {
    const denied = new RecordingSource();
    const d = await query({ list: true, calls: [ping('c1')] }, { source: denied, decide: async () => ({ decision: 'deny', reason: 'plan mode' }) });
    expect(d.seen!.results.c1!.content).toBe('The host refused this MCP call: the permission rules deny it (plan mode). The call was not made.');
    expect(denied.calls).toEqual([]);

    const asks = async (): Promise<EngineDecision> => ({ decision: 'ask', reason: 'no rule' });
    const unasked = new RecordingSource();
    const u = await query({ list: true, calls: [ping('c1')] }, { source: unasked, decide: asks });
    expect(u.seen!.results.c1!.content).toBe('The host refused this MCP call: it needs a permission the host did not give for this call. The call was not made.');
    expect(unasked.calls).toEqual([]);

    const prompted: string[] = [];
    const yes: PermissionAsker = {
      async ask(request) {
        prompted.push(`${request.toolCallId} ${request.tool}`);
        return { decision: 'allow' };
      },
    };
    const approved = new RecordingSource();
    // The person allowed tool call tc1; the worker then makes it twice (a second call id): only the first runs.
    const a = await query({ list: true, ask: 'tc1', calls: [ping('c1', { toolCallId: 'tc1' }), ping('c2', { toolCallId: 'tc1' })] }, { source: approved, decide: asks }, yes);
    expect(prompted).toEqual(['tc1 mcp__alpha__ping']);
    expect(a.seen!.results.c1!.isError).toBe(false);
    expect(a.seen!.results.c2!.content).toBe('The host refused this MCP call: it needs a permission the host did not give for this call. The call was not made.');
    expect(approved.calls.map((c) => c.toolCallId)).toEqual(['tc1']);
  });

  it('progress goes down to the worker; the worker\'s cancel aborts the host\'s call, whose own answer comes back', async () => {
    const source = new RecordingSource();
    const { seen } = await query({ list: true, cancel: true, calls: [{ callId: 'c1', name: 'mcp__alpha__slow', server: 'alpha', tool: 'slow' }] }, { source });
    expect(seen!.progress).toEqual(['started']);
    expect(source.calls).toHaveLength(1);
    expect(source.calls[0]!.signal.aborted).toBe(true);
    expect(seen!.results.c1).toEqual({ content: 'The MCP call slow was cancelled.', isError: true, summary: 'cancelled' });
  });

  it('a worker killed mid-call: the host\'s call is aborted and never made again', async () => {
    const source = new RecordingSource();
    const { out, pool } = await query({ list: true, crash: true, calls: [{ callId: 'c1', name: 'mcp__alpha__slow', server: 'alpha', tool: 'slow' }] }, { source });
    expect(out.error?.code).toBe('worker_lost');
    expect(out.error?.message).toMatch(/signal SIGKILL/);
    expect(source.calls).toHaveLength(1);
    expect(source.calls[0]!.signal.aborted).toBe(true);
    // Nothing runs it again: no second worker, no second call.
    await new Promise((r) => setImmediate(r));
    expect(pool.status().stats.spawned).toBe(1);
    expect(source.calls).toHaveLength(1);
  });

  it('a request id used twice breaks the connection: the worker is replaced, its running call aborted, nothing answered twice', async () => {
    const source = new RecordingSource();
    const slow = { callId: 'c1', name: 'mcp__alpha__slow', server: 'alpha', tool: 'slow' };
    // The tool list was request 1, the slow call request 2; a compromised worker sends request 2 again.
    const again = { kind: 'request', id: 2, method: 'mcpCall', params: { queryId: 'task-a:r1:h1', toolCallId: 't', name: 'mcp__alpha__slow', server: 'alpha', tool: 'slow', arguments: {} } };
    const { out, logs } = await query({ list: true, calls: [slow], rawAfter: again }, { source });
    expect(out.error?.code).toBe('worker_lost');
    expect(out.error?.message).toContain('protocol violation: request id 2 after 2 (ids must increase)');
    expect(source.calls.length).toBeLessThanOrEqual(1);
    expect(source.calls.every((c) => c.signal.aborted)).toBe(true);
    expect(logs).toEqual([]);
  });

  it('an MCP call of a task without MCP servers is refused; a malformed one breaks the connection', async () => {
    const none = await query({ calls: [ping('c1')] }, undefined);
    expect(none.out.status).toBe('done');
    expect(none.seen!.results.c1).toEqual({ failure: 'this task has no MCP servers' });

    const source = new RecordingSource();
    const bad = await query({ raw: { kind: 'request', id: 7, method: 'mcpCall', params: { queryId: 'task-a:r1:h1', toolCallId: 't', name: 'mcp__alpha__ping', server: 'alpha', tool: 'ping', arguments: 'rm -rf' } } }, { source });
    expect(bad.out.error?.code).toBe('worker_lost');
    expect(bad.out.error?.message).toMatch(/request "mcpCall" with params that do not match its declaration/);
    expect(source.calls).toEqual([]);
  });
});
