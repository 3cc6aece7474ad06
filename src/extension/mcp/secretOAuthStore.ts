import type * as vscode from 'vscode';
import { McpOAuthStoreError, mcpOAuthRecordSchema, oauthKey, type McpOAuthRecord, type McpOAuthStore } from '../../core/mcp/oauth/store';

/**
 * MCP OAuth tokens and client registrations in VS Code's SecretStorage (the OS keychain), one
 * secret per server URL (`keel.mcp.oauth:<url>`): keyed by URL like the CLI's file, so a renamed
 * or look-alike `.mcp.json` entry cannot get another server's token. A stored value that is not
 * Keel's JSON is an error naming the server (and is left as it is).
 */
export class SecretMcpOAuthStore implements McpOAuthStore {
  constructor(private readonly secrets: Pick<vscode.SecretStorage, 'get' | 'store' | 'delete'>) {}

  async get(serverUrl: string): Promise<McpOAuthRecord | undefined> {
    const text = await this.secrets.get(keyOf(serverUrl));
    if (text === undefined) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new McpOAuthStoreError(`the stored sign-in for ${oauthKey(serverUrl)} is not valid JSON; sign out of that server and sign in again`);
    }
    const parsed = mcpOAuthRecordSchema.safeParse(json);
    if (!parsed.success) throw new McpOAuthStoreError(`the stored sign-in for ${oauthKey(serverUrl)} is not Keel's; sign out of that server and sign in again`);
    return parsed.data;
  }

  async set(serverUrl: string, record: McpOAuthRecord): Promise<void> {
    await this.secrets.store(keyOf(serverUrl), JSON.stringify(record));
  }

  async delete(serverUrl: string): Promise<boolean> {
    const key = keyOf(serverUrl);
    const had = (await this.secrets.get(key)) !== undefined;
    await this.secrets.delete(key);
    return had;
  }
}

function keyOf(serverUrl: string): string {
  return `keel.mcp.oauth:${oauthKey(serverUrl)}`;
}
