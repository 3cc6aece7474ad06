import type { McpCallOutput } from '../machines/mcpConnection/types';
import { describeTarget } from './config';
import type { ServerConnection } from './connection';
import type { McpToolOutcome } from './toolSource';
import type { McpApprovalState, McpServerConfig, McpServerStatus } from './types';

/**
 * The hub's words about its servers: each server's live state for hosts, and what the model is
 * told when a call fails or its server cannot take it. Pure functions of a connection's snapshot.
 */

/**
 * What the model gets for one call: the result, or a clear failure (cancelled, the server
 * stopped mid-call and the call was not made again, a timeout, an error).
 */
export function callOutcome(conn: ServerConnection, tool: string, out: McpCallOutput | undefined, signal: AbortSignal): McpToolOutcome {
  const server = conn.name;
  if (signal.aborted || (out && !out.ok && out.kind === 'cancelled')) return failure(`The call to ${tool} on MCP server ${server} was cancelled; the server was told to stop it.`, 'cancelled');
  if (!out) {
    const why = conn.actor?.getSnapshot().context.lastError ?? 'the connection ended';
    return failure(
      `The MCP server ${server} stopped during the call to ${tool} (${why}). Keel did not run the call again; the server is restarting. ` +
        'It may or may not have done part of the work — check before calling again.',
      'server exited mid-call',
    );
  }
  if (!out.ok) {
    const what =
      out.kind === 'timeout'
        ? `The call to ${tool} on MCP server ${server} got ${out.message}; the server was told to stop it.`
        : `The call to ${tool} on MCP server ${server} failed: ${out.message}.`;
    return failure(what, out.kind === 'timeout' ? 'timed out' : 'failed');
  }
  const onlyText = out.content.every((b) => b.type === 'text');
  const content = onlyText ? out.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') : out.content;
  return { content, isError: out.isError, summary: `${server}: ${out.summary}` };
}

/** Why a server cannot take a call now, for the model: its state in words, and that `tool` was not called. */
export function unavailableMessage(conn: ServerConnection, status: McpServerStatus, tool: string, maxRestartAttempts: number): string {
  const state =
    status.phase === 'restarting' && status.restartInMs !== null
      ? `restarting in ${Math.ceil(status.restartInMs / 1000)} s after: ${status.lastError ?? 'a failure'}`
      : status.phase === 'error'
        ? `in error: ${status.lastError ?? 'unknown'}${conn.actor && status.attempts > maxRestartAttempts ? ' (it gave up restarting; the person can restart it)' : ''}`
        : status.phase === 'needsAuthorization'
          ? `waiting for the person to sign in: ${status.lastError ?? 'it requires authorization'}`
          : status.approval === 'pending'
          ? 'not approved for this workspace yet'
          : status.approval === 'rejected'
            ? 'Keel cannot tell which files it runs, so it cannot be approved'
            : status.phase;
  return `The MCP server ${conn.name} is not available (${state}), so ${tool} was not called. Continue without it or tell the person.`;
}

/** One server's live state for hosts (the MCP page, `keel mcp list`). */
export function serverStatus(c: ServerConnection, approval: McpApprovalState): McpServerStatus {
  const snapshot = c.actor?.getSnapshot();
  const ctx = snapshot?.context;
  const init = ctx?.initialized ?? null;
  const spec = c.config.resolved ?? c.config.template;
  return {
    name: c.name,
    scope: c.config.scope,
    transport: spec.transport,
    via: ctx?.via ?? null,
    target: targetOf(c.config),
    phase: c.phase(),
    state: c.state(),
    approval,
    lastError: c.actor ? (ctx?.lastError ?? null) : c.config.problems.join('; '),
    stderrTail: c.io?.stderrTail() ?? [],
    attempts: ctx?.attempts ?? 0,
    restartInMs: c.restartAt !== null ? Math.max(0, c.restartAt - Date.now()) : null,
    tools: init?.tools ?? [],
    resources: init?.resources ?? [],
    prompts: init?.prompts ?? [],
    serverInfo: init?.serverInfo ?? null,
  };
}

export function targetOf(config: McpServerConfig): string {
  return describeTarget(config.resolved ?? config.template);
}

/** `text` cut to about `maxTokens` (four characters a token), saying so. */
export function capText(text: string, maxTokens: number): string {
  if (text.length <= maxTokens * 4) return text;
  return `${text.slice(0, maxTokens * 4)}\n[Truncated: about ${Math.ceil(text.length / 4)} tokens; Keel keeps at most ${maxTokens} (MAX_MCP_OUTPUT_TOKENS).]`;
}

export function failure(message: string, summary: string): McpToolOutcome {
  return { content: message, isError: true, summary };
}
