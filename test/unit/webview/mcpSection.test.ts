import { describe, expect, it } from 'vitest';
import type { McpServerView } from '../../../src/shared/protocol/mcpMessages';
import { stateLabel } from '../../../webview/pages/McpSection';
import { ChatStore } from '../../../webview/store';
import { CONFIG } from '../protocol/fixtures';

const server = (over: Partial<McpServerView>): McpServerView => ({
  name: 'everything', scope: 'project', transport: 'stdio', via: null, target: 'node server.js', phase: 'disconnected', state: 'disconnected',
  approval: 'approved', lastError: null, stderrTail: [], attempts: 0, restartAt: null, tools: [], resources: [], prompts: [], ...over,
});

describe('the MCP section', () => {
  it('the store keeps the latest status the host sent; a malformed one is refused', () => {
    const store = new ChatStore({ schedule: (f) => f(), setTimer: () => () => {} });
    let seq = 0;
    store.receive({ type: 'snapshot', transcript: null, config: CONFIG, seq: ++seq });
    const status = { servers: [server({ phase: 'ready', state: 'ready.idle' })], problems: [], available: true };
    store.receive({ type: 'mcpStatus', status, seq: ++seq });
    expect(store.mcp.value).toEqual(status);
    store.receive({ type: 'mcpStatus', status: { servers: [{ name: 'x' }], problems: [], available: true }, seq: ++seq });
    expect(store.mcp.value).toEqual(status);
  });

  it('a server that needs a sign-in arrives as its own state, and a Sign in action is a valid message', async () => {
    const store = new ChatStore({ schedule: (f) => f(), setTimer: () => () => {} });
    store.receive({ type: 'snapshot', transcript: null, config: CONFIG, seq: 1 });
    const status = { servers: [server({ transport: 'http', target: 'https://x.example/mcp', phase: 'needsAuthorization', state: 'needsAuthorization', lastError: 'needs you to sign in' })], problems: [], available: true };
    store.receive({ type: 'mcpStatus', status, seq: 2 });
    expect(store.mcp.value).toEqual(status);
    const { parseFromWebview } = await import('../../../src/shared/protocol/fromWebview');
    expect(parseFromWebview({ type: 'mcpAction', action: 'signIn', server: 'x' }).ok).toBe(true);
    expect(parseFromWebview({ type: 'mcpAction', action: 'steal', server: 'x' }).ok).toBe(false);
  });

  it('says where each server is in words', () => {
    const now = 1_000_000;
    expect(stateLabel(server({ approval: 'pending' }), now)).toBe('waiting for your approval');
    expect(stateLabel(server({ approval: 'rejected' }), now)).toBe('cannot be approved: Keel cannot tell which files it runs');
    expect(stateLabel(server({ phase: 'ready', state: 'ready.toolCall' }), now)).toBe('ready (calling a tool)');
    expect(stateLabel(server({ phase: 'restarting', restartAt: now + 3_200 }), now)).toBe('restarting in 4 s');
    expect(stateLabel(server({ phase: 'initializing' }), now)).toBe('connecting');
    expect(stateLabel(server({ phase: 'disabled' }), now)).toBe('disabled');
    expect(stateLabel(server({ phase: 'needsAuthorization', transport: 'http' }), now)).toBe('needs you to sign in');
  });
});
