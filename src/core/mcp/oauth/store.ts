import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { syncDirSync } from '../../store/atomicFile';
import { errorMessage } from '../../../shared/domain/errors';

/**
 * Where Keel keeps what an MCP server's OAuth sign-in produced: the tokens, the client
 * registration and the discovery results, one record per server URL. Keyed by the server's URL
 * (never by its name in `.mcp.json`), so renaming an entry, or a project file reusing another
 * server's name, cannot send one server's token to another URL.
 *
 * The CLI keeps them in `$KEEL_HOME/mcp-oauth.json` (mode 0600, {@link FileMcpOAuthStore}); VS Code
 * in its SecretStorage (`src/extension/mcp/secretOAuthStore.ts`). Contract for both: `get`
 * resolves `undefined` for a URL never signed in to and rejects with {@link McpOAuthStoreError}
 * when the stored data cannot be read (it is never replaced then); `set` and `delete` touch only
 * that URL's record.
 */
export interface McpOAuthStore {
  get(serverUrl: string): Promise<McpOAuthRecord | undefined>;
  set(serverUrl: string, record: McpOAuthRecord): Promise<void>;
  /** True when there was a record. */
  delete(serverUrl: string): Promise<boolean>;
}

/** What the SDK handed over, as JSON (its own shapes; validated loosely: the SDK validates them again). */
export const mcpOAuthRecordSchema = z.object({
  /** The dynamic registration (or the pre-registered client) — `StoredOAuthClientInformation`. */
  clientInformation: z.object({ client_id: z.string() }).passthrough().optional(),
  /** `StoredOAuthTokens` as the token endpoint sent them. */
  tokens: z.object({ access_token: z.string(), token_type: z.string() }).passthrough().optional(),
  /** Epoch ms when `tokens` were saved (their `expires_in` counts from there). */
  tokensSavedAt: z.number().optional(),
  /** `OAuthDiscoveryState`: saves a discovery round trip and binds the callback to its issuer. */
  discoveryState: z.object({ authorizationServerUrl: z.string() }).passthrough().optional(),
  /** The loopback port the client was registered with (reused so the registration stays valid). */
  redirectPort: z.number().int().min(1).max(65535).optional(),
  /**
   * The scope a connection was refused for (a `403 insufficient_scope` step-up): the next sign-in
   * asks for it. Cleared when new tokens are saved.
   */
  pendingScope: z.string().max(2000).optional(),
});
export type McpOAuthRecord = z.infer<typeof mcpOAuthRecordSchema>;

/** The stored credentials cannot be read; nothing was changed. */
export class McpOAuthStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpOAuthStoreError';
  }
}

/**
 * The key of a server URL: the URL without its fragment, parsed and printed again (so
 * `HTTPS://Host:443/mcp` and `https://host/mcp` are one server). Throws on a URL that does not parse.
 */
export function oauthKey(serverUrl: string): string {
  const u = new URL(serverUrl);
  u.hash = '';
  return u.href;
}

export function oauthStorePath(keelHome: string): string {
  return join(keelHome, 'mcp-oauth.json');
}

const fileSchema = z.object({ version: z.literal(1), servers: z.record(z.string(), mcpOAuthRecordSchema) });
type OAuthFile = z.infer<typeof fileSchema>;

/**
 * `$KEEL_HOME/mcp-oauth.json`: the CLI's store. Written atomically (a temp file created with mode
 * 0600, renamed over the file), so a crash leaves the old file or the new one and the tokens are
 * never readable by others, not even for an instant. A file that is not valid JSON or not
 * Keel's shape is an error naming the file, and it is left as it is (the other servers' tokens in
 * it are not lost by a write).
 */
export class FileMcpOAuthStore implements McpOAuthStore {
  readonly path: string;

  constructor(keelHome: string) {
    this.path = oauthStorePath(keelHome);
  }

  async get(serverUrl: string): Promise<McpOAuthRecord | undefined> {
    return this.read().servers[oauthKey(serverUrl)];
  }

  async set(serverUrl: string, record: McpOAuthRecord): Promise<void> {
    const file = this.read();
    file.servers[oauthKey(serverUrl)] = record;
    this.write(file);
  }

  async delete(serverUrl: string): Promise<boolean> {
    const file = this.read();
    const key = oauthKey(serverUrl);
    if (!(key in file.servers)) return false;
    delete file.servers[key];
    this.write(file);
    return true;
  }

  private read(): OAuthFile {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, servers: {} };
      throw new McpOAuthStoreError(`cannot read ${this.path}: ${errorMessage(err)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new McpOAuthStoreError(`${this.path} is not valid JSON (${errorMessage(err)}); Keel left it unchanged — fix it, or delete it to sign in to every MCP server again`);
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = `${issue?.path.join('.') || 'top level'}: ${issue?.message ?? 'wrong shape'}`;
      throw new McpOAuthStoreError(`${this.path} is not a Keel MCP OAuth file (${where}); Keel left it unchanged — fix it, or delete it to sign in again`);
    }
    return parsed.data;
  }

  private write(file: OAuthFile): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    // 'wx' with 0600: the temp file is created private (never group/world-readable, whatever the umask).
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(file, null, 2)}\n`);
      fsyncSync(fd);
    } catch (err) {
      closeSync(fd);
      rmSync(tmp, { force: true });
      throw err;
    }
    closeSync(fd);
    renameSync(tmp, this.path);
    chmodSync(this.path, 0o600);
    syncDirSync(dirname(this.path));
  }
}
