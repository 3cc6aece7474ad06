import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpHub } from '../../../src/core/mcp/hub';
import { McpRequests } from '../../../src/extension/mcp/mcpRequests';
import { McpService } from '../../../src/extension/mcp/mcpService';
import { silentLogger } from '../../../src/extension/logger';
import type { ToWebviewPayload } from '../../../src/shared/protocol/toWebview';
import { FileMcpOAuthStore, McpOAuthStoreError, oauthStorePath } from '../../../src/core/mcp/oauth/store';
import { startRedirectListener } from '../../../src/core/mcp/oauth/redirectListener';
import { startOAuthMcpServer, type OAuthMcpServer } from '../../fixtures/mcp/oauthServer';
import { hubOf, server, tempDir } from './helpers';

/**
 * OAuth for remote MCP servers, end to end on loopback: a real authorization server and a
 * bearer-protected MCP server (test/fixtures/mcp/oauthServer.ts), Keel's hub with its file
 * store, and a "browser" that is an HTTP GET of the authorization URL following redirects.
 */
const servers: OAuthMcpServer[] = [];
const hubs: McpHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.dispose()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The person's browser: opens the URL, follows the authorization server's redirect to Keel's loopback listener. */
async function browser(url: URL): Promise<void> {
  const res = await fetch(url);
  await res.text();
}

async function setup(opts: { accessTokenSeconds?: number; headers?: Record<string, string>; keelHome?: string } = {}) {
  const srv = await startOAuthMcpServer(opts);
  servers.push(srv);
  const made = hubOf([server('remote', { transport: 'http', url: srv.url, headers: opts.headers ?? {} })], {
    limits: { connectTimeoutMs: 10_000, backoffMs: [50], maxRestartAttempts: 1 },
    ...(opts.keelHome ? { keelHome: opts.keelHome } : {}),
  });
  hubs.push(made.hub);
  return { srv, ...made };
}

const statusOf = (hub: McpHub) => hub.status()[0]!;

describe('OAuth for remote MCP servers', () => {
  it('first connect needs a sign-in; signing in stores the tokens 0600 and the tools are listed and called', async () => {
    const { srv, hub, keelHome } = await setup();
    await hub.start();
    const before = statusOf(hub);
    expect(before.phase).toBe('needsAuthorization');
    expect(before.lastError).toMatch(/needs you to sign in/);
    // Connecting alone never registered a client nor started an authorization.
    expect(srv.counts.registrations).toBe(0);
    expect(srv.counts.authorizations).toBe(0);

    const shown: URL[] = [];
    const result = await hub.signIn('remote', async (url) => {
      shown.push(url);
      await browser(url);
    });
    expect(result).toBe('signed-in');
    expect(shown).toHaveLength(1);
    expect(shown[0]!.origin).toBe(srv.issuer);
    expect(shown[0]!.searchParams.get('code_challenge_method')).toBe('S256');
    expect(new URL(shown[0]!.searchParams.get('redirect_uri')!).hostname).toBe('127.0.0.1');

    const file = oauthStorePath(keelHome);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { servers: Record<string, { tokens?: { access_token?: string } }> };
    expect(Object.keys(stored.servers)).toEqual([srv.url]);
    expect(stored.servers[srv.url]!.tokens?.access_token).toMatch(/^[0-9a-f]{32}$/);

    await hub.start();
    expect(statusOf(hub).phase).toBe('ready');
    const defs = await hub.toolDefinitions();
    expect(defs.map((d) => d.name)).toEqual(['mcp__remote__whoami']);
    const out = await hub.callTool('mcp__remote__whoami', {}, { signal: new AbortController().signal });
    expect(out.isError).toBe(false);
    expect(out.content).toMatch(/^client [0-9a-f-]{36}$/);
  });

  it('an expired access token is refreshed by itself: the next connection and call work without the person', async () => {
    const keelHome = tempDir('keel-mcp-home-');
    const first = await setup({ keelHome });
    await first.hub.signIn('remote', browser);
    await first.hub.start();
    expect(statusOf(first.hub).phase).toBe('ready');
    first.srv.expireAccessTokens();

    // A call on the live session: 401 → the SDK refreshes → the call is made.
    const out = await first.hub.callTool('mcp__remote__whoami', {}, { signal: new AbortController().signal });
    expect(out.isError).toBe(false);
    expect(first.srv.counts.refreshes).toBe(1);
    expect(first.srv.counts.authorizations).toBe(1);

    // A new window (a new hub, same Keel home) with the token expired again: connects after a refresh.
    first.srv.expireAccessTokens();
    const second = hubOf([server('renamed', { transport: 'http', url: first.srv.url, headers: {} })], { keelHome, limits: { connectTimeoutMs: 10_000 } });
    hubs.push(second.hub);
    await second.hub.start();
    expect(statusOf(second.hub).phase).toBe('ready');
    expect(first.srv.counts.refreshes).toBe(2);
    expect(first.srv.counts.authorizations).toBe(1);
  });

  it('revoked tokens: the server needs a sign-in again (a state, not an error loop), and signing in again works', async () => {
    const { srv, hub } = await setup();
    await hub.signIn('remote', browser);
    await hub.start();
    expect(statusOf(hub).phase).toBe('ready');
    srv.revokeAll();
    const out = await hub.callTool('mcp__remote__whoami', {}, { signal: new AbortController().signal });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/sign in/);
    expect(statusOf(hub).phase).toBe('needsAuthorization');
    const down = await hub.callTool('mcp__remote__whoami', {}, { signal: new AbortController().signal });
    expect(down.content).toMatch(/waiting for the person to sign in/);
    const requests = srv.counts.mcpRequests;
    await new Promise((r) => setTimeout(r, 300));
    expect(srv.counts.mcpRequests).toBe(requests);

    await hub.signIn('remote', browser);
    await hub.start();
    expect(statusOf(hub).phase).toBe('ready');
  });

  it('tokens are keyed by URL: another server name with another URL gets nothing, and sign-out forgets only that URL', async () => {
    const keelHome = tempDir('keel-mcp-home-');
    const a = await setup({ keelHome });
    await a.hub.signIn('remote', browser);
    const other = await startOAuthMcpServer();
    servers.push(other);
    // The same name, pointing elsewhere (a project file reusing a trusted name): no token is sent there.
    const b = hubOf([server('remote', { transport: 'http', url: other.url, headers: {} })], { keelHome, limits: { connectTimeoutMs: 10_000 } });
    hubs.push(b.hub);
    await b.hub.start();
    expect(statusOf(b.hub).phase).toBe('needsAuthorization');
    await b.hub.signIn('remote', browser);
    const store = new FileMcpOAuthStore(keelHome);
    expect(await store.get(a.srv.url)).toBeDefined();
    expect(await b.hub.signOut('remote')).toBe(true);
    expect(await store.get(other.url)).toBeUndefined();
    expect(await store.get(a.srv.url)).toBeDefined();
  });

  it('credentials given in headers are used as they are: no OAuth, a 401 is an error naming the headers', async () => {
    const { srv, hub } = await setup({ headers: { Authorization: 'Bearer wrong' } });
    await hub.start();
    const s = statusOf(hub);
    expect(s.phase).toBe('error');
    expect(s.lastError).toMatch(/requires authorization \(HTTP 401\).*headers/);
    expect(srv.counts.registrations).toBe(0);
  });

  it('a sign-in whose browser never comes back times out with a clear error; the state stays needsAuthorization', async () => {
    const { hub } = await setup();
    await hub.start();
    await expect(hub.signIn('remote', () => {}, { timeoutMs: 200 })).rejects.toThrow(/no sign-in arrived/);
    expect(statusOf(hub).phase).toBe('needsAuthorization');
  });

  it('a stdio server has nothing to sign in to', async () => {
    const made = hubOf([server('local', { transport: 'stdio', command: 'true', args: [], env: {} })]);
    hubs.push(made.hub);
    await expect(made.hub.signIn('local', () => {})).rejects.toThrow(/nothing to sign in to/);
  });
});

describe('Sign in on the settings page (the extension host, without VS Code)', () => {
  it('asks the person first, naming the server and its URL; declining opens nothing; agreeing signs in and the page shows it ready', async () => {
    const srv = await startOAuthMcpServer();
    servers.push(srv);
    const asked: { server: string; serverUrl: string; origin: string }[] = [];
    let agree = false;
    const service = new McpService({
      log: silentLogger,
      loadDisabled: () => [],
      saveDisabled: async () => {},
      createHub: async () => {
        const made = hubOf([server('remote', { transport: 'http', url: srv.url, headers: {} })], { limits: { connectTimeoutMs: 10_000 } });
        hubs.push(made.hub);
        return made.hub;
      },
      openAuthorization: async (name, serverUrl, url) => {
        asked.push({ server: name, serverUrl, origin: url.origin });
        if (agree) await browser(url);
        return agree;
      },
      // A user server: nothing to review.
      reviewTrust: async () => undefined,
    });
    const sent: ToWebviewPayload[] = [];
    const requests = new McpRequests(service, silentLogger, () => {});
    const view = { send: (p: ToWebviewPayload) => void sent.push(p) };
    const hub = (await service.hub())!;
    await hub.start();
    expect((await service.status()).servers[0]!.phase).toBe('needsAuthorization');

    await requests.handle(view, { type: 'mcpAction', action: 'signIn', server: 'remote' });
    expect(asked).toEqual([{ server: 'remote', serverUrl: srv.url, origin: srv.issuer }]);
    expect(srv.counts.codeExchanges).toBe(0);
    expect(sent).toContainEqual({ type: 'notice', message: 'Sign-in to remote cancelled.' });

    agree = true;
    await requests.handle(view, { type: 'mcpAction', action: 'signIn', server: 'remote' });
    expect(sent).toContainEqual({ type: 'notice', message: 'Signed in to remote.' });
    await hub.start();
    const after = (await service.status()).servers[0]!;
    expect(after.phase).toBe('ready');
    expect(after.tools.map((t) => t.name)).toEqual(['whoami']);

    await requests.handle(view, { type: 'mcpAction', action: 'signOut', server: 'remote' });
    expect(sent).toContainEqual({ type: 'notice', message: 'Signed out of remote: Keel forgot its tokens.' });
    await hub.start();
    expect((await service.status()).servers[0]!.phase).toBe('needsAuthorization');
    requests.dispose();
    await service.dispose();
  });
});

describe('the redirect listener', () => {
  it('listens on 127.0.0.1, ignores a wrong state, accepts the right one once, then closes', async () => {
    const l = await startRedirectListener({ timeoutMs: 5_000 });
    expect(l.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    l.expectState('s1');
    const wrong = await fetch(`${l.redirectUrl}?code=x&state=evil`);
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).not.toContain('evil');
    const ok = await fetch(`${l.redirectUrl}?code=abc&state=s1`);
    expect(ok.status).toBe(200);
    expect((await l.result).get('code')).toBe('abc');
    await new Promise((r) => setTimeout(r, 50));
    await expect(fetch(`${l.redirectUrl}?code=abc&state=s1`)).rejects.toThrow();
  });

  it('an error answer from the authorization server rejects the sign-in', async () => {
    const l = await startRedirectListener({ timeoutMs: 5_000 });
    l.expectState('s');
    await fetch(`${l.redirectUrl}?error=access_denied&state=s`);
    await expect(l.result).rejects.toThrow(/refused the sign-in \(access_denied\)/);
  });
});

describe('the CLI token file', () => {
  it('a corrupt file is a clear error and is left as it was', async () => {
    const home = tempDir('keel-mcp-home-');
    const path = join(home, 'mcp-oauth.json');
    writeFileSync(path, '{"version":1,"servers":{"https://a/mcp":{"tokens":');
    const store = new FileMcpOAuthStore(home);
    await expect(store.get('https://a/mcp')).rejects.toThrow(McpOAuthStoreError);
    await expect(store.set('https://b/mcp', {})).rejects.toThrow(/not valid JSON.*left it unchanged/);
    expect(readFileSync(path, 'utf8')).toBe('{"version":1,"servers":{"https://a/mcp":{"tokens":');
  });

  it('keys by the normalized URL and keeps other servers on write', async () => {
    const store = new FileMcpOAuthStore(tempDir('keel-mcp-home-'));
    await store.set('HTTPS://Example.com:443/mcp#x', { redirectPort: 5000 });
    await store.set('https://other.example/mcp', { redirectPort: 5001 });
    expect(await store.get('https://example.com/mcp')).toEqual({ redirectPort: 5000 });
    expect(await store.delete('https://example.com/mcp')).toBe(true);
    expect(await store.get('https://other.example/mcp')).toEqual({ redirectPort: 5001 });
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
  });
});
