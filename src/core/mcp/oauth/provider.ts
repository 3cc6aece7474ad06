import { randomBytes } from 'node:crypto';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { McpOAuthRecord, McpOAuthStore } from './store';

/**
 * Keel's `OAuthClientProvider` for one remote MCP server (one URL). The SDK runs the whole flow
 * with it — discovery, dynamic client registration, PKCE, the token request, refresh on a 401;
 * this class only keeps what the SDK hands over, in an {@link McpOAuthStore} under the server's
 * URL, and decides what happens when the person must be asked.
 *
 * Two modes:
 * - `connect` (the `mcpConnection` machine's transports): stored tokens are sent and refreshed by
 *   the SDK; when only the person can help (no client registration yet, or the SDK wants to send
 *   the browser to the authorization server), it throws {@link McpSignInRequired} instead, so a
 *   connection never opens a browser or registers a client by itself.
 * - `signIn` (`signInToMcpServer`): registers if needed and hands the authorization URL to
 *   `onAuthorizationUrl`; `state` is a fresh random value each time, readable as `lastState`.
 */
export interface KeelOAuthProviderOptions {
  serverUrl: string;
  store: McpOAuthStore;
  mode: 'connect' | 'signIn';
  /** The loopback redirect URL (sign-in); connect mode uses the one stored with the registration. */
  redirectUrl?: string;
  onAuthorizationUrl?: (url: URL) => void | Promise<void>;
  /** Shown to the person on the authorization server's consent page. */
  clientName?: string;
}

/** Only the person can continue: they must sign in to the server (`keel mcp login`, the MCP page). */
export class McpSignInRequired extends Error {
  constructor(readonly serverUrl: string, why: string) {
    super(`the MCP server at ${serverUrl} needs you to sign in (${why})`);
    this.name = 'McpSignInRequired';
  }
}

/** A redirect URL that is never listened on: connect mode needs one only to build a URL it then refuses. */
const PLACEHOLDER_REDIRECT = 'http://127.0.0.1/keel-mcp-oauth-callback';

export class KeelOAuthProvider implements OAuthClientProvider {
  /** Set when this provider refused to go on without the person (connect mode). */
  signInRequired: McpSignInRequired | null = null;
  /** The `state` of the last authorization URL (sign-in checks the callback against it). */
  lastState: string | null = null;
  private record: McpOAuthRecord | null = null;
  private verifier: string | null = null;

  constructor(private readonly opts: KeelOAuthProviderOptions) {}

  get redirectUrl(): string {
    if (this.opts.redirectUrl) return this.opts.redirectUrl;
    const port = this.record?.redirectPort;
    return port ? `http://127.0.0.1:${port}/callback` : PLACEHOLDER_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.opts.clientName ?? 'Keel',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A public client (RFC 8252): a desktop program cannot keep a secret; PKCE protects the code.
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.lastState = randomBytes(24).toString('base64url');
    return this.lastState;
  }

  async clientInformation(): Promise<StoredOAuthClientInformation | undefined> {
    const r = await this.load();
    const info = r.clientInformation as StoredOAuthClientInformation | undefined;
    if (this.opts.mode === 'connect') {
      if (!info) throw this.refuse('Keel is not registered with its authorization server yet');
      return info;
    }
    // A registration made for another loopback port would not accept this redirect: register again.
    const uris = (info as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    if (info && Array.isArray(uris) && !uris.includes(this.redirectUrl)) return undefined;
    return info;
  }

  async saveClientInformation(info: StoredOAuthClientInformation): Promise<void> {
    const r = await this.load();
    const port = this.opts.redirectUrl ? Number(new URL(this.opts.redirectUrl).port) || undefined : r.redirectPort;
    await this.save({ ...r, clientInformation: { ...info }, ...(port ? { redirectPort: port } : {}) });
  }

  async tokens(): Promise<StoredOAuthTokens | undefined> {
    return (await this.load()).tokens as StoredOAuthTokens | undefined;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    const r = await this.load();
    // A refresh answer may omit the refresh token: the old one stays valid (RFC 6749 §6).
    const previous = r.tokens as StoredOAuthTokens | undefined;
    const merged = { ...tokens, ...(tokens.refresh_token === undefined && previous?.refresh_token ? { refresh_token: previous.refresh_token } : {}) };
    const next: McpOAuthRecord = { ...r, tokens: merged, tokensSavedAt: Date.now() };
    delete next.pendingScope;
    await this.save(next);
  }

  /** True when the stored access token's lifetime is over (unknown lifetime: not expired). */
  async tokensExpired(now = Date.now()): Promise<boolean> {
    const r = await this.load();
    const t = r.tokens as StoredOAuthTokens | undefined;
    if (!t || typeof t.expires_in !== 'number' || r.tokensSavedAt === undefined) return false;
    return now >= r.tokensSavedAt + t.expires_in * 1000;
  }

  /** The scope a connection was last refused for (step-up), which a sign-in must ask for. */
  async pendingScope(): Promise<string | undefined> {
    return (await this.load()).pendingScope;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.opts.mode === 'connect' || !this.opts.onAuthorizationUrl) {
      // A step-up (403 insufficient_scope) builds a URL for a wider scope: remember it for the sign-in.
      const scope = url.searchParams.get('scope');
      if (scope) await this.save({ ...(await this.load()), pendingScope: scope.slice(0, 2000) });
      throw this.refuse('its authorization server asks you to approve Keel in a browser');
    }
    await this.opts.onAuthorizationUrl(url);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no PKCE code verifier: the authorization was not started by this sign-in');
    return this.verifier;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    const r = await this.load();
    await this.save({ ...r, discoveryState: { ...state } });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.load()).discoveryState as OAuthDiscoveryState | undefined;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier' || scope === 'all') this.verifier = null;
    if (scope === 'verifier') return;
    const r = await this.load();
    const next: McpOAuthRecord = { ...r };
    if (scope === 'all' || scope === 'tokens') {
      delete next.tokens;
      delete next.tokensSavedAt;
    }
    if (scope === 'all' || scope === 'client') delete next.clientInformation;
    if (scope === 'all' || scope === 'discovery') delete next.discoveryState;
    await this.save(next);
  }

  private refuse(why: string): McpSignInRequired {
    this.signInRequired = new McpSignInRequired(this.opts.serverUrl, why);
    return this.signInRequired;
  }

  private async load(): Promise<McpOAuthRecord> {
    if (!this.record) this.record = (await this.opts.store.get(this.opts.serverUrl)) ?? {};
    return this.record;
  }

  private async save(record: McpOAuthRecord): Promise<void> {
    this.record = record;
    await this.opts.store.set(this.opts.serverUrl, record);
  }
}
