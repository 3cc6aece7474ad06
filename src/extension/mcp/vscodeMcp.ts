import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { Logger } from '../logger';
import { SECRET_KEYS } from '../providerConfig';
import { passEnvOf, toolSecrets } from '../toolSecrets';
import { McpService } from './mcpService';
import { SecretMcpOAuthStore } from './secretOAuthStore';
import type { WindowTrust } from '../trust/windowTrust';

const DISABLED_KEY = 'keel.mcp.disabled';

/**
 * The window's McpService on VS Code: the hub reads the first folder's `.mcp.json` and the
 * user's `$KEEL_HOME/mcp.json` (default `~/.keel`, shared with the CLI, as are the approvals);
 * a project server starts only as the workspace's one approval allows it (the window's review
 * page: its command, env and the files it runs; docs/permissions.md, "Trust"); server stderr
 * and MCP warnings go to the Keel output channel; stdio servers get the tool environment without
 * the keys the window holds (SecretStorage included); turned-off servers are kept in the
 * workspace state; OAuth tokens of remote servers are kept in SecretStorage, and a sign-in opens
 * the browser only after a modal naming the server and the authorization server.
 */
export function vscodeMcpService(context: vscode.ExtensionContext, log: Logger, windowTrust: WindowTrust): McpService {
  return new McpService({
    reviewTrust: async (reason, answer) => {
      if (answer === 'review') return windowTrust.review(reason, true);
      const trust = await windowTrust.get();
      if (trust) await trust.decline(trust.status());
    },
    log,
    loadDisabled: () => context.workspaceState.get<string[]>(DISABLED_KEY, []).filter((n) => typeof n === 'string'),
    saveDisabled: async (names) => {
      await context.workspaceState.update(DISABLED_KEY, [...names]);
    },
    openAuthorization: openAuthorizationAfterAsking,
    createHub: async (disabled) => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder || folder.uri.scheme !== 'file') return undefined;
      const { McpHub } = await import('../../core/mcp/hub');
      const passEnv = passEnvOf(vscode.workspace.getConfiguration('keel').inspect('tools.passEnv'));
      const secrets = await toolSecrets(passEnv.names, Object.values(SECRET_KEYS).map((k) => Promise.resolve(context.secrets.get(k))));
      const version = (context.extension?.packageJSON as { version?: string } | undefined)?.version ?? '0.0.0';
      const trust = await windowTrust.get();
      const { SettingsEnvironment } = await import('../../core/permissions/settingsEnv');
      const { NOTHING_APPROVED } = await import('../../core/trust/items');
      const settingsEnv = new SettingsEnvironment({ workspace: folder.uri.fsPath, trust: trust ?? NOTHING_APPROVED });
      const hub = new McpHub({
        workspace: folder.uri.fsPath,
        keelHome: resolve(process.env.KEEL_HOME || join(homedir(), '.keel')),
        env: process.env,
        secretValues: () => secrets.values(),
        disabled,
        clientInfo: { name: 'keel-vscode', version },
        ...(trust ? { trust } : {}),
        // A project server that would start unapproved: the workspace's one review page.
        reviewer: { review: (reason) => windowTrust.review(reason) },
        extraEnv: () => settingsEnv.current(),
        oauthStore: new SecretMcpOAuthStore(context.secrets),
        log: (level, message) => {
          // Server stderr arrives as info lines "[mcp name] …": the person reads them in the channel.
          if (level === 'error') log.error(message);
          else if (level === 'warn') log.warn(message);
          else log.info(message);
        },
      });
      context.subscriptions.push(windowTrust.onApprovalsChanged(() => hub.approvalsChanged()), { dispose: () => settingsEnv.dispose() });
      for (const p of hub.problems) log.warn(`MCP configuration ${p.source}: ${p.message}`);
      log.info(`MCP: ${hub.status().length} server(s) configured`);
      return hub;
    },
  });
}

/**
 * Before the browser opens for an MCP sign-in: a modal naming the server that asks, its URL and
 * the authorization server the page belongs to. Opens the page with `vscode.env.openExternal`
 * only after "Open browser". False when the person declined.
 */
async function openAuthorizationAfterAsking(server: string, serverUrl: string, authorizationUrl: URL): Promise<boolean> {
  const answer = await vscode.window.showInformationMessage(
    `Sign in to the MCP server "${server}"?`,
    {
      modal: true,
      detail:
        `${serverUrl} asks you to sign in. Keel will open ${authorizationUrl.origin} in your browser; after you allow access there, ` +
        'the browser comes back to Keel on this computer (127.0.0.1) and Keel keeps the token in VS Code\'s secret storage.',
    },
    'Open browser',
  );
  if (answer !== 'Open browser') return false;
  // The URL as a string, not a vscode.Uri: Uri.parse + toString re-encodes the query (the encoded
  // redirect_uri, `+` in scope), which breaks OAuth (microsoft/vscode#85930, #135949); the
  // extension host's openUri takes a string and opens it unchanged.
  const target: unknown = authorizationUrl.href;
  return vscode.env.openExternal(target as vscode.Uri);
}
