import { createHash } from 'node:crypto';

/**
 * Names the model sees for MCP tools: `mcp__<server>__<tool>`, the form Claude Code uses and
 * Keel's permission rules already parse (`mcp__server`, `mcp__server__tool`). Providers accept
 * tool names of `[A-Za-z0-9_-]{1,64}`; a server's tool name may hold other characters (dots,
 * spaces) or be long, so it is normalised and, when needed, shortened with a hash suffix that
 * keeps distinct tools distinct. Pure.
 */
export const MCP_PREFIX = 'mcp__';
const MAX_TOOL_NAME = 64;

export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_PREFIX);
}

/** The server part of `mcp__<server>__…` (server names never contain `__`), or undefined. */
export function serverOfToolName(name: string): string | undefined {
  if (!isMcpToolName(name)) return undefined;
  const rest = name.slice(MCP_PREFIX.length);
  const end = rest.indexOf('__');
  return end > 0 ? rest.slice(0, end) : undefined;
}

/**
 * The model-facing name of `tool` on `server`. `taken` holds names already given on this server;
 * a normalised name that collides with one gets a hash suffix.
 */
export function modelToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, '_') || '_';
  const name = `${MCP_PREFIX}${server}__${clean}`;
  if (name.length <= MAX_TOOL_NAME && !taken.has(name)) return name;
  // A short hash of the real name keeps two tools that normalise to the same text ("a.b", "a_b")
  // distinct, and the name stable across restarts.
  const suffix = `_${createHash('sha256').update(tool).digest('hex').slice(0, 8)}`;
  return `${name.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
}
