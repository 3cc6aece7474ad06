import { errorMessage } from '../../shared/domain/errors';
import type { McpHub } from '../../core/mcp/hub';
import type { McpServerStatus } from '../../core/mcp/types';
import type { McpAction, McpServerView, McpStatus } from '../../shared/protocol/mcpMessages';
import type { SlashCommand } from '../../shared/protocol/toWebview';
import { type Logger } from '../logger';

/**
 * The window's MCP, for the extension host: owns the one hub of the window (created on first
 * use — the first task or the MCP section of the settings page — never at activation), the
 * servers the person turned off (remembered per workspace), and what the chat needs of it: the
 * live state for the settings page, the person's actions, `@server:uri` mentions and
 * `/mcp__server__prompt` commands. No `vscode` import: the VS Code parts come in as `McpServiceDeps`.
 */
export type McpHubLike = Pick<
  McpHub,
  | 'toolDefinitions' | 'resolveTool' | 'knownTools' | 'startingServers' | 'callTool' | 'start' | 'status' | 'problems' | 'subscribe' | 'restart' | 'enable' | 'disable'
  | 'approvalsChanged' | 'revoke' | 'readResource' | 'getPrompt' | 'limits' | 'dispose' | 'empty' | 'signIn' | 'signOut'
>;

export interface McpServiceDeps {
  log: Logger;
  /** Creates the hub (undefined when no folder is open); `disabled`: the servers the person turned off. */
  createHub(disabled: readonly string[]): Promise<McpHubLike | undefined>;
  /** The servers turned off in this workspace. */
  loadDisabled(): readonly string[];
  saveDisabled(names: readonly string[]): Promise<void>;
  /**
   * Shows the person which server asks them to sign in and where, and opens the authorization
   * URL only if they agree; false when they declined (the sign-in is then abandoned).
   */
  openAuthorization(server: string, serverUrl: string, authorizationUrl: URL): Promise<boolean>;
  /**
   * The workspace's one approval (docs/permissions.md, "Trust"): shows everything it provides and
   * records the person's answer (`decline`: "Not now", remembered for exactly what was shown).
   */
  reviewTrust(reason: string, answer: 'review' | 'decline'): Promise<void>;
}

/** The person declined to open the authorization page. */
class SignInDeclined extends Error {}

/** How long state changes are gathered before the views hear of them. */
const STATUS_THROTTLE_MS = 150;

export class McpService {
  private hubPromise: Promise<McpHubLike | undefined> | null = null;
  private readonly listeners = new Set<(status: McpStatus) => void>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private disposed = false;

  constructor(private readonly deps: McpServiceDeps) {}

  /** The window's hub, created once; undefined when no folder is open or creating it failed. Never rejects. */
  hub(): Promise<McpHubLike | undefined> {
    this.hubPromise ??= this.deps.createHub(this.deps.loadDisabled()).then(
      (hub) => {
        if (hub && this.disposed) {
          void hub.dispose();
          return undefined;
        }
        hub?.subscribe(() => this.changed());
        return hub;
      },
      (err: unknown) => {
        this.deps.log.error(`MCP could not start: ${errorMessage(err)}`);
        return undefined;
      },
    );
    return this.hubPromise;
  }

  async status(): Promise<McpStatus> {
    const hub = await this.hub();
    return hub ? statusView(hub) : { servers: [], problems: [], available: false };
  }

  /** Calls `listener` with the new status after servers change (throttled). Returns the unsubscribe. */
  onChange(listener: (status: McpStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Does what the person asked on the settings page; returns a line to show, or throws on an I/O failure. */
  async act(action: McpAction, server: string): Promise<string> {
    const hub = await this.hub();
    if (!hub) return 'MCP needs an open folder.';
    if (!hub.status().some((s) => s.name === server)) return `There is no MCP server named ${server}.`;
    switch (action) {
      case 'restart':
        hub.restart(server);
        return `Restarting ${server}.`;
      case 'enable':
        await this.deps.saveDisabled(this.deps.loadDisabled().filter((n) => n !== server));
        hub.enable(server);
        return `${server} is enabled.`;
      case 'disable':
        await this.deps.saveDisabled([...new Set([...this.deps.loadDisabled(), server])]);
        hub.disable(server);
        return `${server} is disabled in this workspace.`;
      case 'approve':
        // One approval for everything the workspace provides, this server included.
        await this.deps.reviewTrust(`the MCP server ${server}`, 'review');
        hub.approvalsChanged();
        return hub.status().find((s) => s.name === server)?.approval === 'approved' ? `${server} is approved for this workspace.` : `${server} still waits for the approval of this workspace.`;
      case 'reject':
        await this.deps.reviewTrust(`the MCP server ${server}`, 'decline');
        return `Keel will not ask again about what this workspace provides until it changes; ${server} does not run.`;
      case 'revoke':
        await hub.revoke(server);
        return `Keel forgot the approval of ${server}; it waits for the approval of this workspace again.`;
      case 'signIn': {
        const target = hub.status().find((s) => s.name === server)?.target ?? '';
        try {
          const result = await hub.signIn(server, async (url) => {
            if (!(await this.deps.openAuthorization(server, target, url))) throw new SignInDeclined();
          });
          return result === 'already' ? `${server}: already signed in.` : `Signed in to ${server}.`;
        } catch (err) {
          if (err instanceof SignInDeclined) return `Sign-in to ${server} cancelled.`;
          throw err;
        }
      }
      case 'signOut':
        return (await hub.signOut(server)) ? `Signed out of ${server}: Keel forgot its tokens.` : `Keel kept no sign-in for ${server}.`;
    }
  }

  /** `text` with `@server:uri` resources and a leading `/mcp__server__prompt` expanded (references.ts). */
  async expand(text: string, signal: AbortSignal): Promise<string> {
    if (!/(^|\s)@[\w-]+:\S|^\s*\/mcp__/.test(text)) return text;
    const hub = await this.hub();
    if (!hub || hub.empty) return text;
    const { expandMcpReferences } = await import('../../core/mcp/references');
    const out = await expandMcpReferences(text, hub, hub.limits.maxOutputTokens, signal);
    for (const note of out.notes) this.deps.log.info(`MCP ${note}`);
    return out.text;
  }

  /** `server:uri` of the resources of ready servers whose name or URI contains `query` (for `@` mentions). */
  async mentions(query: string, max: number): Promise<string[]> {
    if (!this.hubPromise) return [];
    const hub = await this.hubPromise;
    const q = query.toLowerCase();
    const out: string[] = [];
    for (const s of hub?.status() ?? []) {
      if (s.phase !== 'ready') continue;
      for (const r of s.resources) {
        const ref = `${s.name}:${r.uri}`;
        if (/\s/.test(ref)) continue;
        if (ref.toLowerCase().includes(q) || r.name.toLowerCase().includes(q)) out.push(ref);
        if (out.length >= max) return out;
      }
    }
    return out;
  }

  /**
   * The prompts of ready servers as slash commands (`mcp__server__prompt`, with argument names),
   * whose name or description contains `query`, at most `max`, bounded for the webview. Only
   * names `/mcp__server__prompt` expansion accepts (no whitespace). Never starts the hub.
   */
  async slashCommands(query: string, max: number): Promise<SlashCommand[]> {
    if (!this.hubPromise) return [];
    const hub = await this.hubPromise;
    const q = query.toLowerCase();
    const out: SlashCommand[] = [];
    for (const s of hub?.status() ?? []) {
      if (s.phase !== 'ready') continue;
      for (const p of s.prompts) {
        const name = `mcp__${s.name}__${p.name}`;
        if (/\s/.test(name) || name.length > 200) continue;
        if (!name.toLowerCase().includes(q) && !(p.description ?? '').toLowerCase().includes(q)) continue;
        out.push({
          name,
          description: cut(p.description ?? '', 400),
          arguments: p.arguments.slice(0, 20).map((a) => ({ name: cut(a.name, 100), required: a.required })),
        });
        if (out.length >= max) return out;
      }
    }
    return out;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.listeners.clear();
    const hub = await this.hubPromise;
    await hub?.dispose();
  }

  private changed(): void {
    if (this.timer || this.disposed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.hubPromise?.then((hub) => {
        if (!hub || this.disposed) return;
        const status = statusView(hub);
        for (const l of [...this.listeners]) l(status);
      });
    }, STATUS_THROTTLE_MS);
  }
}

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** The hub's status as the page shows it, every server-written string and list bounded. Pure. */
export function statusView(hub: Pick<McpHubLike, 'status' | 'problems'>, now = Date.now()): McpStatus {
  return {
    available: true,
    servers: hub.status().slice(0, 200).map((s) => serverView(s, now)),
    problems: hub.problems.slice(0, 50).map((p) => cut(`${p.source}: ${p.message}`, 1000)),
  };
}

function serverView(s: McpServerStatus, now: number): McpServerView {
  return {
    name: cut(s.name, 64),
    scope: s.scope,
    transport: s.transport,
    via: s.via,
    target: cut(s.target, 4000),
    phase: s.phase,
    state: cut(s.state, 64),
    approval: s.approval,
    lastError: s.lastError === null ? null : cut(s.lastError, 4000),
    stderrTail: s.stderrTail.slice(-20).map((l) => cut(l, 600)),
    attempts: s.attempts,
    restartAt: s.restartInMs === null ? null : now + s.restartInMs,
    tools: s.tools.slice(0, 500).map((t) => ({ name: cut(t.name, 200), description: cut(t.description, 400) })),
    resources: s.resources.slice(0, 500).map((r) => ({ uri: cut(r.uri, 1000), name: cut(r.name, 200) })),
    prompts: s.prompts.slice(0, 500).map((p) => ({ name: cut(p.name, 200), description: cut(p.description ?? '', 400) })),
  };
}
