import { auth, Client, SSEClientTransport, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { KeelOAuthProvider } from './provider';
import { startRedirectListener } from './redirectListener';
import type { McpOAuthStore } from './store';

/**
 * Signs the person in to one remote MCP server with OAuth, the SDK doing every protocol step:
 * Keel connects with a sign-in-mode {@link KeelOAuthProvider}; the server's 401 makes the SDK
 * discover the authorization server (RFC 9728 / RFC 8414, with the `WWW-Authenticate` hints),
 * register Keel dynamically if needed (RFC 7591), and build the authorization URL with PKCE and a
 * random `state`; Keel hands that URL to `open` (VS Code opens the browser after the person said
 * yes; the CLI prints it), waits for the loopback redirect with the same state, and gives the
 * code to the transport's `finishAuth`, which checks the issuer and redeems it. The tokens and
 * the registration are then in `store`, under the server's URL.
 *
 * When a connection was refused for a wider scope (a `403 insufficient_scope` step-up, recorded
 * by the provider), the stored tokens would still open the connection: the sign-in then asks the
 * SDK's `auth()` for a new authorization with that scope directly (`forceReauthorization`).
 *
 * Resolves `'signed-in'` after a new authorization, `'already'` when stored tokens (refreshed if
 * needed) already open the connection. Rejects with a message a person can act on (timeout,
 * refusal, an authorization server that does not support what Keel needs).
 */
export interface SignInOptions {
  serverUrl: string;
  transport: 'http' | 'sse';
  /** Static headers of the configuration (sent with every request, as a connection does). */
  headers?: Record<string, string>;
  store: McpOAuthStore;
  /** Shows the authorization URL to the person (opens the browser / prints it). */
  open: (url: URL) => void | Promise<void>;
  /** How long to wait for the browser to come back (default 5 min). */
  timeoutMs?: number;
  signal?: AbortSignal;
  clientInfo?: { name: string; version: string };
}

const DEFAULT_SIGN_IN_TIMEOUT_MS = 5 * 60_000;

export async function signInToMcpServer(opts: SignInOptions): Promise<'signed-in' | 'already'> {
  const record = await opts.store.get(opts.serverUrl);
  const listener = await startRedirectListener({ timeoutMs: opts.timeoutMs ?? DEFAULT_SIGN_IN_TIMEOUT_MS, ...(record?.redirectPort ? { preferredPort: record.redirectPort } : {}) });
  const onAbort = () => listener.close();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  let authorizationUrl: URL | null = null;
  const provider = new KeelOAuthProvider({
    serverUrl: opts.serverUrl,
    store: opts.store,
    mode: 'signIn',
    redirectUrl: listener.redirectUrl,
    onAuthorizationUrl: (url) => {
      authorizationUrl = url;
    },
  });
  const makeTransport = () => {
    const init = { requestInit: { headers: opts.headers ?? {} }, authProvider: provider };
    return opts.transport === 'sse' ? new SSEClientTransport(new URL(opts.serverUrl), init) : new StreamableHTTPClientTransport(new URL(opts.serverUrl), init);
  };
  const transport = makeTransport();
  const client = new Client(opts.clientInfo ?? { name: 'keel', version: '0.1.0' }, { capabilities: {} });
  try {
    const stepUp = await provider.pendingScope();
    if (stepUp) {
      const started = await auth(provider, { serverUrl: opts.serverUrl, scope: stepUp, forceReauthorization: true });
      if (started === 'AUTHORIZED' || !authorizationUrl || !provider.lastState) return 'signed-in';
      listener.expectState(provider.lastState);
      await opts.open(authorizationUrl);
      const params = await listener.result;
      const code = params.get('code') ?? '';
      await auth(provider, { serverUrl: opts.serverUrl, authorizationCode: code, scope: stepUp, ...(params.get('iss') !== null ? { iss: params.get('iss')! } : {}) });
      return 'signed-in';
    }
    try {
      // What a connection does (initialize, then the lists): a server may let initialize through
      // and ask for a token only on tools/list.
      const options = { timeout: 60_000, ...(opts.signal ? { signal: opts.signal } : {}) };
      await client.connect(transport, options);
      const caps = client.getServerCapabilities() ?? {};
      if (caps.tools) await client.listTools(undefined, options);
      if (caps.resources) await client.listResources(undefined, options);
      if (caps.prompts) await client.listPrompts(undefined, options);
      return 'already';
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || !authorizationUrl) throw err;
    }
    if (!provider.lastState) throw new Error('the SDK built an authorization URL without a state');
    listener.expectState(provider.lastState);
    await opts.open(authorizationUrl);
    const params = await listener.result;
    await transport.finishAuth(params);
    return 'signed-in';
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    listener.close();
    await client.close().catch(() => {});
  }
}

/**
 * Forgets what Keel keeps for the server at `serverUrl` (tokens, registration, discovery). The
 * authorization server is not told (Keel does not revoke tokens there). True when there was something.
 */
export async function signOutOfMcpServer(store: McpOAuthStore, serverUrl: string): Promise<boolean> {
  return store.delete(serverUrl);
}
