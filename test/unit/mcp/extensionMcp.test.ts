import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { McpHub } from '../../../src/core/mcp/hub';
import { WorkspaceTrust } from '../../../src/core/trust/workspaceTrust';
import { promptArguments } from '../../../src/core/mcp/references';
import { McpRequests } from '../../../src/extension/mcp/mcpRequests';
import { McpService, statusView } from '../../../src/extension/mcp/mcpService';
import { silentLogger } from '../../../src/extension/logger';
import type { McpStatus } from '../../../src/shared/protocol/mcpMessages';
import type { ToWebviewPayload } from '../../../src/shared/protocol/toWebview';
import { EVERYTHING, hubOf, nodeServer, server, tempDir } from './helpers';
import { Changes } from '../helpers/changes';

/**
 * The extension's side of MCP without VS Code: the window's McpService over a real hub and a real
 * server-everything process, driven through the messages the settings page and the composer send
 * (McpRequests, McpService.expand / mentions), as a person would.
 */
const services: McpService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.dispose()));
});

/**
 * The service over a hub with one server-everything. A project server comes from a real
 * `.mcp.json`; the window's review page is played by `review`, which approves the workspace
 * (as the person's "Approve all" does) and counts the reviews.
 */
function setup(scope: 'project' | 'user', reviews: string[] = []) {
  let disabled: string[] = [];
  const workspace = tempDir('keel-mcp-ws-');
  const keelHome = tempDir('keel-mcp-home-');
  const trust = new WorkspaceTrust({ workspace, keelHome });
  const review = async (reason: string) => {
    reviews.push(reason);
    await trust.approve();
  };
  if (scope === 'project') writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
  const service = new McpService({
    log: silentLogger,
    loadDisabled: () => disabled,
    saveDisabled: async (names) => {
      disabled = [...names];
    },
    createHub: async (off) =>
      scope === 'project'
        ? new McpHub({ workspace, keelHome, env: { ...process.env }, disabled: off, trust, reviewer: { review } })
        : hubOf([server('everything', nodeServer(EVERYTHING, ['stdio']), scope)], { disabled: off }).hub,
    openAuthorization: async () => false,
    reviewTrust: async (reason, answer) => (answer === 'review' ? review(reason) : trust.decline(trust.status())),
  });
  services.push(service);
  const sent: ToWebviewPayload[] = [];
  const view = { send: (p: ToWebviewPayload) => void sent.push(p) };
  const lastStatus = (): McpStatus => (sent.filter((p) => p.type === 'mcpStatus').at(-1) as { status: McpStatus }).status;
  // What the views are sent is the event: each status push re-checks (no deadline, no polling).
  const pushes = new Changes();
  const requests = new McpRequests(service, silentLogger, (p) => {
    sent.push(p);
    pushes.notify();
  });
  const until = async (check: (s: McpStatus) => boolean) => {
    let last = await service.status();
    while (!check(last)) {
      await pushes.next();
      last = await service.status();
    }
    return last;
  };
  return { service, requests, view, sent, lastStatus, until, pushes, disabled: () => disabled };
}

describe('the MCP section of the settings page', () => {
  it('a project server waits for approval; Allow starts it with its tools; Disable, Enable and Revoke do what they say', async () => {
    const { requests, view, sent, lastStatus, until, pushes, disabled } = setup('project');
    await requests.handle(view, { type: 'getMcpStatus' });
    expect(lastStatus().servers[0]).toMatchObject({ name: 'everything', approval: 'pending', phase: 'disconnected', scope: 'project', target: expect.stringContaining('server-everything') });

    await requests.handle(view, { type: 'mcpAction', action: 'approve', server: 'everything' });
    expect(sent).toContainEqual({ type: 'notice', message: 'everything is approved for this workspace.' });
    const ready = await until((s) => s.servers[0]?.phase === 'ready');
    expect(ready.servers[0]!.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    // Changes reach every view without asking again.
    const pushed = () => sent.some((p) => p.type === 'mcpStatus' && p.status.servers[0]?.phase === 'ready');
    await pushes.until(pushed, () => 'no status push with the server ready');

    await requests.handle(view, { type: 'mcpAction', action: 'disable', server: 'everything' });
    expect((await until((s) => s.servers[0]?.phase === 'disabled')).servers[0]!.phase).toBe('disabled');
    expect(disabled()).toEqual(['everything']);
    await requests.handle(view, { type: 'mcpAction', action: 'enable', server: 'everything' });
    expect((await until((s) => s.servers[0]?.phase === 'ready')).servers[0]!.phase).toBe('ready');
    expect(disabled()).toEqual([]);

    await requests.handle(view, { type: 'mcpAction', action: 'revoke', server: 'everything' });
    const revoked = await until((s) => s.servers[0]?.phase === 'disconnected');
    expect(revoked.servers[0]).toMatchObject({ approval: 'pending', phase: 'disconnected' });
    expect(sent).toContainEqual({ type: 'notice', message: 'Keel forgot the approval of everything; it waits for the approval of this workspace again.' });
  }, 90_000);

  it("the first task asks for the workspace's review once; an unknown server is a notice", async () => {
    const asked: string[] = [];
    const { service, requests, view, sent } = setup('project', asked);
    const hub = (await service.hub())!;
    const tools = await hub.toolDefinitions();
    expect(tools.map((t) => t.name)).toContain('mcp__everything__echo');
    await hub.toolDefinitions();
    expect(asked).toEqual(['the MCP server everything would start']);
    await requests.handle(view, { type: 'mcpAction', action: 'restart', server: 'nope' });
    expect(sent).toContainEqual({ type: 'notice', message: 'There is no MCP server named nope.' });
  }, 90_000);
});

describe('resources and prompts in the composer', () => {
  it('@server:uri adds the resource; /mcp__server__prompt becomes its text; other @ words are left alone', async () => {
    const { service } = setup('user');
    const hub = (await service.hub())!;
    await hub.start();
    const resource = hub.status()[0]!.resources[0]!;
    expect(await service.mentions(resource.uri.slice(-6), 10)).toContain(`everything:${resource.uri}`);

    const signal = new AbortController().signal;
    const mentioned = await service.expand(`Summarize @everything:${resource.uri} and @src/a.ts please`, signal);
    expect(mentioned).toContain(`Summarize @everything:${resource.uri} and @src/a.ts please`);
    expect(mentioned).toContain(`<mcp-resource server="everything" uri="${resource.uri}">`);

    const prompted = await service.expand('/mcp__everything__args-prompt Paris state=Texas\nthen more', signal);
    expect(prompted).toBe("What's weather in Paris, Texas?\n\nthen more");
    const unknown = await service.expand('@someone:thing hi', signal);
    expect(unknown).toBe('@someone:thing hi');
  }, 90_000);

  it('/ in the composer: the prompts of ready servers as slash commands with their argument names, through a validated message', async () => {
    const { service } = setup('user');
    // Before any task started the servers there is nothing to suggest (typing never starts a server).
    expect(await service.slashCommands('', 50)).toEqual([]);
    const hub = (await service.hub())!;
    await hub.start();
    const all = await service.slashCommands('', 50);
    expect(all.length).toBe(hub.status()[0]!.prompts.length);
    const args = all.find((c) => c.name === 'mcp__everything__args-prompt');
    expect(args).toBeDefined();
    expect(args!.arguments).toEqual([{ name: 'city', required: true }, { name: 'state', required: false }]);
    expect((await service.slashCommands('ARGS', 50)).map((c) => c.name)).toEqual(['mcp__everything__args-prompt']);
    expect(await service.slashCommands('no-such-prompt', 50)).toEqual([]);
    // What the host sends passes the webview's schema (the webview drops anything else).
    const { parseToWebview } = await import('../../../src/shared/protocol/toWebview');
    expect(parseToWebview({ type: 'commandResults', seq: 1, queryId: 7, commands: all }).ok).toBe(true);
    expect(parseToWebview({ type: 'commandResults', seq: 1, queryId: 7, commands: [{ name: 'has space', description: '', arguments: [] }] }).ok).toBe(false);
    await hub.disable('everything');
    expect(await service.slashCommands('', 50)).toEqual([]);
  }, 90_000);

  it('prompt arguments: name=value by name, the rest in order, the last taking the remainder', () => {
    expect(promptArguments(['city', 'state'], 'New York')).toEqual({ city: 'New', state: 'York' });
    expect(promptArguments(['topic'], 'the weather in Paris')).toEqual({ topic: 'the weather in Paris' });
    expect(promptArguments(['city', 'state'], 'state=TX Austin')).toEqual({ state: 'TX', city: 'Austin' });
    expect(promptArguments([], 'x')).toEqual({});
  });
});

describe('what the page is sent is bounded', () => {
  it('cuts what a server wrote (descriptions, errors, stderr) before it reaches the page', () => {
    const huge = 'x'.repeat(50_000);
    const status = statusView({
      problems: [],
      status: () => [
        {
          name: 'evil', scope: 'user', transport: 'stdio', via: 'stdio', target: 'evil', phase: 'error', state: 'error', approval: 'not-needed',
          lastError: huge, stderrTail: Array.from({ length: 40 }, () => huge), attempts: 5, restartInMs: null,
          tools: Array.from({ length: 2000 }, (_, i) => ({ name: `t${i}`, description: huge, inputSchema: {}, readOnlyHint: false })),
          resources: [], prompts: [], serverInfo: null,
        },
      ],
    });
    const s = status.servers[0]!;
    expect(s.lastError!.length).toBeLessThanOrEqual(4000);
    expect(s.stderrTail).toHaveLength(20);
    expect(s.stderrTail[0]!.length).toBeLessThanOrEqual(600);
    expect(s.tools).toHaveLength(500);
    expect(s.tools[0]!.description.length).toBeLessThanOrEqual(400);
  });
});
