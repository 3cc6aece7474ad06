import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpHub } from '../../../src/core/mcp/hub';
import type { McpToolSource } from '../../../src/core/mcp/toolSource';
import { McpHostServer } from '../../../src/core/mcp/onWorkers/hostServer';
import { IpcMcpToolSource } from '../../../src/core/mcp/onWorkers/remote';
import { mcpCallSubject } from '../../../src/core/mcp/wiring';
import { toHost, toWorker, type ToHost, type ToWorker } from '../../../src/core/workers/protocol';
import { RpcEndpoint, type Envelope } from '../../../src/core/workers/rpc';
import { EVERYTHING, hubOf, nodeServer, server } from '../mcp/helpers';
import { RecordingSource } from './mcpSources';
import { loopback, loopbackWorkerHandlers } from './rpcLoopback';

/**
 * The worker's `IpcMcpToolSource` against the host's `McpHostServer` over the protocol's messages
 * (each one JSON-encoded, decoded and checked against its declaration, delivered on a later turn
 * of the event loop, as over the channel: rpcLoopback.ts), in front of the real hub and the real
 * server-everything: what the worker's turn gets is what the hub gives in the host.
 */
function connect(source: McpToolSource) {
  const server = new McpHostServer({ source, decide: async () => ({ decision: 'allow', reason: 'test' }) });
  const wire = loopback({ mcpList: () => server.list(), mcpCall: (p, c) => server.call(p, c) });
  const worker = new IpcMcpToolSource('q1', wire.worker);
  // The query ends with its worker's connection.
  const end = () => {
    wire.worker.close('the query ended');
    wire.host.close('the query ended');
  };
  return { worker, server, problems: wire.problems, violations: wire.violations, end };
}

const signal = () => new AbortController().signal;

describe('the worker\'s MCP tool source, through the host, in front of server-everything', () => {
  let hub: McpHub;
  beforeAll(async () => {
    hub = hubOf([server('everything', nodeServer(EVERYTHING, ['stdio']))]).hub;
    await hub.start();
  }, 60_000);
  afterAll(() => hub.dispose());

  it('offers the same definitions and names, and every kind of result comes back as the hub made it', async () => {
    const { worker, problems, violations } = connect(hub);
    const defs = await worker.toolDefinitions();
    expect(defs).toEqual(await hub.toolDefinitions());
    for (const d of defs) expect(worker.resolveTool(d.name)).toEqual(hub.resolveTool(d.name));
    expect(worker.resolveTool('mcp__everything__nope')).toBeUndefined();
    const calls: [string, Record<string, unknown>][] = [
      ['mcp__everything__echo', { message: 'hello keel' }],
      ['mcp__everything__get-sum', { a: 2, b: 40 }],
      ['mcp__everything__get-structured-content', { location: 'New York' }],
      ['mcp__everything__get-resource-links', { count: 2 }],
      ['mcp__everything__get-tiny-image', {}],
    ];
    for (const [name, args] of calls) {
      const viaHost = await worker.callTool(name, args, { signal: signal(), toolCallId: `t-${name}` });
      const inHost = await hub.callTool(name, args, { signal: signal() });
      expect(viaHost, name).toEqual(inHost);
    }
    expect(problems).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('progress lines reach the worker\'s onProgress', async () => {
    const { worker } = connect(hub);
    await worker.toolDefinitions();
    const lines: string[] = [];
    const out = await worker.callTool('mcp__everything__trigger-long-running-operation', { duration: 1, steps: 3 }, { signal: signal(), onProgress: (l) => lines.push(l) });
    expect(out.isError).toBe(false);
    // The last notification may race the result (the SDK drops progress after the response).
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines).toEqual(['progress 1/3\n', 'progress 2/3\n', 'progress 3/3\n'].slice(0, lines.length));
  });

  it('aborting the worker\'s call cancels the host\'s: the hub\'s cancel answer comes back and the server is idle again', async () => {
    const { worker } = connect(hub);
    await worker.toolDefinitions();
    const controller = new AbortController();
    const out = await worker.callTool('mcp__everything__trigger-long-running-operation', { duration: 60, steps: 60 }, { signal: controller.signal, onProgress: () => controller.abort() });
    expect(out).toEqual({ content: 'The call to trigger-long-running-operation on MCP server everything was cancelled; the server was told to stop it.', isError: true, summary: 'cancelled' });
    expect(hub.status()[0]!.state).toBe('ready.idle');
  });

  it('a call whose server went down gets the hub\'s own "not available" answer, in the query that listed it and in a later one', async () => {
    const own = hubOf([server('everything', nodeServer(EVERYTHING, ['stdio']))]).hub;
    try {
      const { worker } = connect(own);
      expect((await worker.toolDefinitions()).map((d) => d.name)).toContain('mcp__everything__echo');
      own.disable('everything');
      const viaHost = await worker.callTool('mcp__everything__echo', { message: 'x' }, { signal: signal() });
      const inHost = await own.callTool('mcp__everything__echo', { message: 'x' }, { signal: signal() });
      expect(inHost.content).toMatch(/not available|disabled/i);
      expect(viaHost).toEqual(inHost);
      // A later query's list no longer offers it, but the name still resolves as in the host.
      const later = connect(own).worker;
      expect((await later.toolDefinitions()).map((d) => d.name)).not.toContain('mcp__everything__echo');
      expect(later.resolveTool('mcp__everything__echo')).toEqual(own.resolveTool('mcp__everything__echo'));
      expect(await later.callTool('mcp__everything__echo', { message: 'x' }, { signal: signal() })).toEqual(inHost);
    } finally {
      await own.dispose();
    }
  }, 60_000);
});

describe('the worker\'s MCP tool source, alone', () => {
  it('a call still waiting when the query ends resolves as a failure; after that nothing is sent', async () => {
    const source = new RecordingSource();
    const { worker, end } = connect(source);
    await worker.toolDefinitions();
    const pending = worker.callTool('mcp__alpha__slow', {}, { signal: signal() });
    await new Promise((r) => setTimeout(r, 50));
    end();
    expect(await pending).toEqual({ content: 'The MCP call to slow on server alpha did not finish: the query ended.', isError: true, summary: 'query ended' });
    // The host's call was aborted when its side closed.
    expect(source.calls[0]!.signal.aborted).toBe(true);
    expect(await worker.toolDefinitions()).toEqual([]);
  });

  it('an ask runs without the host\'s prompt only for a task whose hooks may have allowed it in the worker', async () => {
    const asks = async () => ({ decision: 'ask' as const, reason: 'no rule' });
    for (const hooksMayAllow of [false, true]) {
      const source = new RecordingSource();
      const host = new McpHostServer({ source, decide: asks, hooksMayAllow });
      await host.list();
      const outcome = await host.call(
        { queryId: 'q1', toolCallId: 't1', name: 'mcp__alpha__ping', server: 'alpha', tool: 'ping', arguments: {} },
        { signal: new AbortController().signal, progress: () => undefined },
      );
      expect(outcome.isError, `hooksMayAllow ${hooksMayAllow}`).toBe(!hooksMayAllow);
      expect(source.calls).toHaveLength(hooksMayAllow ? 1 : 0);
    }
  });

  it('a tool of a server the host says is still starting is told so in the worker, as in the host, and nothing is called', async () => {
    const source = new RecordingSource(undefined, ['gamma']);
    const { worker, problems, end } = connect(source);
    await worker.toolDefinitions();
    expect(worker.startingServers()).toEqual(['gamma']);
    const call = { type: 'tool_use' as const, id: 't1', name: 'mcp__gamma__search', input: {} };
    expect(mcpCallSubject(worker, call)).toEqual(mcpCallSubject(source, call));
    expect(mcpCallSubject(worker, call)).toEqual({ ok: false, message: expect.stringContaining('MCP server gamma is still starting, so its tools were not offered in this request') });
    expect(mcpCallSubject(worker, { ...call, name: 'mcp__delta__search' })).toEqual({ ok: false, message: 'There is no MCP tool named mcp__delta__search. Use only the tools you were given.' });
    expect(source.calls).toEqual([]);
    expect(problems).toEqual([]);
    end();
  });

  it('a name it was never given is not resolved, and calling it sends nothing', async () => {
    const sent: Envelope[] = [];
    const rpc = new RpcEndpoint<ToWorker, ToHost>((m) => sent.push(m) > 0, toWorker, toHost, loopbackWorkerHandlers(), () => undefined);
    const worker = new IpcMcpToolSource('q1', rpc);
    expect(worker.resolveTool('mcp__alpha__ping')).toBeUndefined();
    expect(await worker.callTool('mcp__alpha__ping', {}, { signal: signal() })).toEqual({ content: 'There is no MCP tool named mcp__alpha__ping.', isError: true, summary: 'unknown MCP tool' });
    expect(sent).toEqual([]);
  });
});
