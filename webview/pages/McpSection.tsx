import { useEffect, useState } from 'preact/hooks';
import type { FromWebviewMessage } from '../../src/shared/protocol/fromWebview';
import type { McpAction, McpServerView, McpStatus } from '../../src/shared/protocol/mcpMessages';

export interface McpSectionProps {
  status: McpStatus | null;
  post(message: FromWebviewMessage): void;
}

/**
 * The MCP servers of the workspace on the settings page: each with its live state (connecting,
 * ready, error with the last stderr lines, restarting in N s, disabled, waiting for approval),
 * its transport and exact command or URL, its tools, resources and prompts, and buttons to
 * restart, enable, disable, approve, reject or revoke it, and for a remote server that wants an
 * OAuth sign-in, Sign in (the host asks in a modal before it opens the browser) and Sign out. It asks for the state once; the host
 * sends every change after that. Everything shown comes from servers: rendered as text only.
 */
export function McpSection({ status, post }: McpSectionProps) {
  const [, tick] = useState(0);
  useEffect(() => post({ type: 'getMcpStatus' }), []);
  // Counts down "restarting in N s" without asking the host.
  const restarting = status?.servers.some((s) => s.restartAt !== null) ?? false;
  useEffect(() => {
    if (!restarting) return;
    const t = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [restarting]);
  const act = (action: McpAction, server: string) => post({ type: 'mcpAction', action, server });
  return (
    <section class="keel-mcp" data-testid="mcp-section" aria-label="MCP servers">
      <h2 class="keel-section-title">MCP servers</h2>
      {!status ? (
        <p class="keel-note">Loading…</p>
      ) : !status.available ? (
        <p class="keel-note">Open a folder to use MCP servers.</p>
      ) : status.servers.length === 0 ? (
        <p class="keel-note" data-testid="mcp-empty">
          No MCP servers. Add them to the workspace's .mcp.json or to ~/.keel/mcp.json (Claude Code's format), or with keel mcp add.
        </p>
      ) : (
        <ul class="keel-mcp-list">
          {status.servers.map((s) => (
            <ServerRow key={s.name} server={s} act={act} />
          ))}
        </ul>
      )}
      {status?.problems.map((p, i) => (
        <p key={i} class="keel-settings-status keel-settings-status-error" data-testid="mcp-problem">
          {p}
        </p>
      ))}
    </section>
  );
}

/** One line for a person about where a server is. */
export function stateLabel(s: McpServerView, now = Date.now()): string {
  if (s.approval === 'pending') return 'waiting for your approval';
  // 'rejected' is a server whose command Keel cannot resolve to files: no approval can cover it.
  if (s.approval === 'rejected') return 'cannot be approved: Keel cannot tell which files it runs';
  switch (s.phase) {
    case 'ready':
      return s.state === 'ready.toolCall' ? 'ready (calling a tool)' : s.state === 'ready.resourceRead' ? 'ready (reading a resource)' : 'ready';
    case 'restarting':
      return s.restartAt !== null ? `restarting in ${Math.max(0, Math.ceil((s.restartAt - now) / 1000))} s` : 'restarting';
    case 'error':
      return 'error';
    case 'disabled':
      return 'disabled';
    case 'needsAuthorization':
      return 'needs you to sign in';
    case 'disconnected':
      return 'not started (starts when a task needs it)';
    default:
      return 'connecting';
  }
}

function ServerRow({ server: s, act }: { server: McpServerView; act(action: McpAction, server: string): void }) {
  const button = (action: McpAction, label: string, secondary = true) => (
    <button type="button" class={secondary ? 'keel-button keel-button-secondary' : 'keel-button'} data-testid={`mcp-${action}`} onClick={() => act(action, s.name)}>
      {label}
    </button>
  );
  const transport = s.via && s.via !== s.transport ? `${s.transport} (via ${s.via})` : s.transport;
  return (
    <li class="keel-mcp-server" data-testid="mcp-server" data-server={s.name} data-phase={s.phase} data-approval={s.approval}>
      <div class="keel-mcp-head">
        <strong>{s.name}</strong> <span class={`keel-mcp-state keel-mcp-${s.phase}`} data-testid="mcp-state">{stateLabel(s)}</span>
      </div>
      <p class="keel-note">
        {transport} · {s.scope === 'project' ? '.mcp.json' : s.scope === 'user' ? '~/.keel/mcp.json' : 'command line'} · <code>{s.target}</code>
      </p>
      {s.lastError && s.phase === 'needsAuthorization' && (
        <p class="keel-note" data-testid="mcp-auth">
          {s.lastError}
        </p>
      )}
      {s.lastError && (s.phase === 'error' || s.phase === 'restarting') && (
        <p class="keel-settings-status keel-settings-status-error" data-testid="mcp-error">
          {s.lastError}
          {s.phase === 'error' && s.attempts > 0 ? ` (gave up after ${s.attempts} attempts; restart it when fixed)` : ''}
        </p>
      )}
      {s.stderrTail.length > 0 && (s.phase === 'error' || s.phase === 'restarting') && <pre class="keel-mcp-stderr" data-testid="mcp-stderr">{s.stderrTail.slice(-5).join('\n')}</pre>}
      {s.phase === 'ready' && (
        <details class="keel-mcp-details">
          <summary data-testid="mcp-summary">
            {s.tools.length} tools, {s.resources.length} resources, {s.prompts.length} prompts
          </summary>
          <ul data-testid="mcp-tools">
            {s.tools.map((t) => (
              <li key={t.name} data-testid="mcp-tool" title={t.description}>
                <code>{`mcp__${s.name}__${t.name}`}</code> {t.description}
              </li>
            ))}
          </ul>
          {s.resources.length > 0 && (
            <ul>
              {s.resources.map((r) => (
                <li key={r.uri}>
                  <code>{`@${s.name}:${r.uri}`}</code> {r.name}
                </li>
              ))}
            </ul>
          )}
          {s.prompts.length > 0 && (
            <ul>
              {s.prompts.map((p) => (
                <li key={p.name}>
                  <code>{`/mcp__${s.name}__${p.name}`}</code> {p.description}
                </li>
              ))}
            </ul>
          )}
        </details>
      )}
      <div class="keel-settings-actions">
        {s.phase === 'needsAuthorization' && button('signIn', 'Sign in', false)}
        {s.transport !== 'stdio' && s.phase !== 'needsAuthorization' && (s.approval === 'approved' || s.approval === 'not-needed') && button('signOut', 'Sign out')}
        {s.approval === 'pending' && button('approve', 'Allow', false)}
        {s.approval === 'pending' && button('reject', "Don't allow")}
        {(s.approval === 'approved' || s.approval === 'not-needed') && s.phase !== 'disabled' && button('restart', s.phase === 'disconnected' ? 'Start' : 'Restart')}
        {(s.approval === 'approved' || s.approval === 'not-needed') && (s.phase === 'disabled' ? button('enable', 'Enable', false) : button('disable', 'Disable'))}
        {s.scope === 'project' && s.approval === 'approved' && button('revoke', 'Revoke approval')}
      </div>
    </li>
  );
}
