import type { ToolResultBlock, ToolUseBlock } from '../../shared/domain/messages';
import type { TaskEvent } from '../../shared/domain/events';
import { checkCardImage, MAX_CARD_IMAGES, type CardImage } from '../../shared/domain/toolImages';
import type { ToolRunOutput } from '../machines/turn/types';
import { isMcpToolName, serverOfToolName } from './names';
import type { McpToolSource } from './toolSource';
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
  if (!target) {
    const server = serverOfToolName(call.name);
    if (server !== undefined && mcp.startingServers().includes(server)) {
      const later = 'so its tools were not offered in this request; they will be in a later one once it is ready';
      return { ok: false, message: `MCP server ${server} is still starting, ${later}. ${call.name} was not called: go on with the tools you were given.` };
    }
    return { ok: false, message: `There is no MCP tool named ${call.name}. Use only the tools you were given.` };
  }
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
  // Once the call is cancelled (Ctrl+C, the task stopped) nothing more of it is published: the
  // task may already have ended, and no event of a run comes after its `done`.
  const publish = (event: TaskEvent) => {
    if (!signal.aborted) services.publish(event);
  };
  const out = await services.mcp.callTool(call.name, call.input, {
    signal,
    toolCallId: call.id,
    onProgress: (line) => publish({ type: 'tool_output', taskId, id: call.id, chunk: redact(line) }),
  });
  const content = typeof out.content === 'string' ? redact(out.content) : out.content.map((b) => (b.type === 'text' ? { ...b, text: redact(b.text) } : b));
  // The tool card shows what came back (text, resource links, structured content, each image
  // named), as the call's last output: tool_result events carry only the summary. Images that
  // pass the card's checks are shown too, as data: URLs built here (toolImages.ts).
  const card = cardContent(content);
  if (card.text) publish({ type: 'tool_output', taskId, id: call.id, chunk: card.text });
  if (card.images.length > 0) publish({ type: 'tool_images', taskId, id: call.id, images: card.images });
  return { result: result(call.id, content, out.isError), summary: redact(out.summary) };
}

/** At most this much of a result is shown in the tool card (the model gets the whole, capped result). */
const CARD_CHARS = 20_000;

/**
 * What the tool card shows of a result: its text (cut at CARD_CHARS) with every image named, and
 * the images that pass `checkCardImage` (at most MAX_CARD_IMAGES) as data: URLs; an image that
 * does not pass is named with the reason and not shown.
 */
export function cardContent(content: ToolResultBlock['content']): { text: string; images: CardImage[] } {
  const images: CardImage[] = [];
  const parts =
    typeof content === 'string'
      ? [content]
      : content.map((b) => {
          if (b.type === 'text') return b.text;
          const kb = Math.round((b.source.data.length * 3) / 4 / 1024);
          const label = `image ${images.length + 1} (${b.source.media_type}, about ${kb} KB)`;
          const named = `[image ${b.source.media_type}, about ${kb} KB, sent to the model`;
          if (images.length >= MAX_CARD_IMAGES) return `${named}; not shown here: at most ${MAX_CARD_IMAGES} images are shown]`;
          const checked = checkCardImage(b.source.media_type, b.source.data, label);
          if (!checked.ok) return `${named}; not shown here: ${checked.reason}]`;
          images.push(checked.image);
          return `${named}; shown below]`;
        });
  const text = parts.join('\n');
  if (!text) return { text: '', images };
  return { text: `${text.length > CARD_CHARS ? `${text.slice(0, CARD_CHARS)}\n… (${text.length - CARD_CHARS} more characters, not shown)` : text}\n`, images };
}

function result(id: string, content: ToolResultBlock['content'], isError: boolean): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) };
}
