import type { ToolResultBlock, ToolUseBlock } from '../../shared/domain/messages';
import type { TaskEvent } from '../../shared/domain/events';
import type { ToolRunOutput } from '../machines/turn/types';
import { isMcpToolName } from '../mcp/names';
import type { McpToolSource } from '../mcp/toolSource';
import type { PermissionSubject } from '../tools/types';

/**
 * The turn loop's side of MCP (kept apart from wiring.ts): how an `mcp__server__tool` call is
 * described to the permission machine, and the `callMcpTool` actor's work.
 */

/**
 * The permission subject of an MCP call, or undefined when `call` is not an MCP tool call (or no
 * MCP source is wired). `readOnly` is always false: a server's readOnlyHint is its own claim, so
 * MCP calls ask unless a rule (`mcp__server`, `mcp__server__tool`) allows them, and plan mode
 * refuses them.
 */
export function mcpCallSubject(mcp: McpToolSource | undefined, call: ToolUseBlock): { ok: true; subject: PermissionSubject; readOnly: false } | { ok: false; message: string } | undefined {
  if (!mcp || !isMcpToolName(call.name)) return undefined;
  const target = mcp.resolveTool(call.name);
  if (!target) return { ok: false, message: `There is no MCP tool named ${call.name}. Use only the tools you were given.` };
  return { ok: true, subject: { kind: 'mcp', tool: call.name, server: target.server, summary: `${target.tool} on MCP server ${target.server}` }, readOnly: false };
}

/**
 * Runs one allowed MCP call (after the events so far are durable, like any tool). Never rejects;
 * progress notifications become `tool_output` events of the call. A server's words are untrusted
 * output like any tool's: `redact` (the SecretKeeper's) runs over progress lines, the summary and
 * every text block before the model, the views or the log see them.
 */
export async function runMcpCall(
  services: { mcp?: McpToolSource; durable?(): Promise<void>; publish(event: TaskEvent): void; redact?: (text: string) => string },
  taskId: string,
  call: ToolUseBlock,
  signal: AbortSignal,
): Promise<ToolRunOutput> {
  if (!services.mcp) return { result: result(call.id, `MCP tool ${call.name} is not available: no MCP servers are configured.`, true), summary: 'MCP not configured' };
  await services.durable?.();
  if (signal.aborted) return { result: result(call.id, 'The tool call was cancelled before it started.', true), summary: 'cancelled' };
  const redact = services.redact ?? ((t: string) => t);
  const out = await services.mcp.callTool(call.name, call.input, {
    signal,
    onProgress: (line) => services.publish({ type: 'tool_output', taskId, id: call.id, chunk: redact(line) }),
  });
  const content = typeof out.content === 'string' ? redact(out.content) : out.content.map((b) => (b.type === 'text' ? { ...b, text: redact(b.text) } : b));
  // The tool card shows what came back (text, resource links, structured content; images named),
  // as the call's last output: tool_result events carry only the summary.
  const shown = cardText(content);
  if (shown) services.publish({ type: 'tool_output', taskId, id: call.id, chunk: shown });
  return { result: result(call.id, content, out.isError), summary: redact(out.summary) };
}

/** At most this much of a result is shown in the tool card (the model gets the whole, capped result). */
const CARD_CHARS = 20_000;

function cardText(content: ToolResultBlock['content']): string {
  const text =
    typeof content === 'string'
      ? content
      : content.map((b) => (b.type === 'text' ? b.text : `[image ${b.source.media_type}, about ${Math.round((b.source.data.length * 3) / 4 / 1024)} KB, sent to the model]`)).join('\n');
  if (!text) return '';
  return `${text.length > CARD_CHARS ? `${text.slice(0, CARD_CHARS)}\n… (${text.length - CARD_CHARS} more characters, not shown)` : text}\n`;
}

function result(id: string, content: ToolResultBlock['content'], isError: boolean): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) };
}
