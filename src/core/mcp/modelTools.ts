import type { ToolDefinition } from '../providers/types';
import type { ServerConnection } from './connection';
import { modelToolName } from './names';
import type { McpToolInfo } from './types';

/**
 * What the model is told about the tools of a hub's servers: their `mcp__<server>__<tool>` names
 * and bounded definitions (a server's words are untrusted and go into every request). Pure.
 */
const MAX_DESCRIPTION = 2048;
/** A server's tools are sent with every model request: a schema larger than this is not sent. */
const MAX_SCHEMA_CHARS = 16_000;
/** At most this many tools of one server reach the model (in name order). */
export const MAX_TOOLS_PER_SERVER = 128;

/**
 * The definition the model gets for one server tool, bounded (a server's words are untrusted and
 * go into every request): the description cut at 2,048 characters; an input schema that is not an
 * object schema, or whose JSON exceeds 16,000 characters, replaced by an open object schema (the
 * description says so). Pure.
 */
export function boundedDefinition(name: string, server: string, tool: McpToolInfo): ToolDefinition {
  let schema: Record<string, unknown> = tool.inputSchema.type === 'object' ? tool.inputSchema : { type: 'object', properties: {} };
  let description = tool.description.length > MAX_DESCRIPTION ? `${tool.description.slice(0, MAX_DESCRIPTION)}…` : tool.description;
  if (!description) description = `${tool.name} (MCP server ${server})`;
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) {
    schema = { type: 'object', properties: {} };
    description += `\n(Its input schema was too large to include: pass the arguments its description names.)`;
  }
  return { name, description, input_schema: structuredClone(schema) };
}

/** One server tool as the model sees it. */
export interface ModelTool {
  name: string;
  server: string;
  tool: McpToolInfo;
}

/**
 * The tools of every ready connection with their model-facing names, stable (sorted by name per
 * server), at most MAX_TOOLS_PER_SERVER of each; `onTooMany` hears of a server that offers more.
 */
export function modelTools(connections: Iterable<ServerConnection>, onTooMany: (server: string, count: number) => void): ModelTool[] {
  const out: ModelTool[] = [];
  for (const c of connections) {
    const tools = c.phase() === 'ready' ? (c.actor?.getSnapshot().context.initialized?.tools ?? []) : [];
    const taken = new Set<string>();
    if (tools.length > MAX_TOOLS_PER_SERVER) onTooMany(c.name, tools.length);
    for (const tool of [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, MAX_TOOLS_PER_SERVER)) {
      const name = modelToolName(c.name, tool.name, taken);
      taken.add(name);
      out.push({ name, server: c.name, tool });
    }
  }
  return out;
}
