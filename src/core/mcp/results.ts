import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';
import type { ImageBlock, ToolResultContentBlock } from '../../shared/domain/messages';
import { IMAGE_TOKENS } from '../context/tokens';

/**
 * Turns an MCP tool result into what the model receives: text blocks, images as image blocks
 * (PNG, JPEG, GIF, WebP — what the Messages API takes), resource links and embedded resources as
 * text naming them, audio and other binary content named but not sent, and structured content as
 * JSON unless a text block already carries the same JSON (the spec asks servers to send both).
 * The whole is capped at `maxTokens` (about four characters a token, an image counted as
 * IMAGE_TOKENS) with a note saying what was cut and how to get the rest. Pure; never throws.
 */
export interface ConvertedResult {
  content: ToolResultContentBlock[];
  isError: boolean;
  /** One line for people: "2 text blocks, 1 image". */
  summary: string;
  truncated: boolean;
}

const IMAGE_TYPES = new Set<string>(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

export function convertToolResult(result: CallToolResult, maxTokens: number): ConvertedResult {
  const raw = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  const blocks: ToolResultContentBlock[] = raw.map(toBlock);
  const structured = (result as { structuredContent?: unknown }).structuredContent;
  if (structured !== undefined && !blocks.some((b) => b.type === 'text' && sameJson(b.text, structured))) {
    blocks.push({ type: 'text', text: `Structured content:\n${JSON.stringify(structured, null, 2)}` });
  }
  // Old servers (protocol 2024-10-07) answer with `toolResult` instead of `content`.
  const legacy = (result as { toolResult?: unknown }).toolResult;
  if (raw.length === 0 && legacy !== undefined) blocks.push({ type: 'text', text: typeof legacy === 'string' ? legacy : JSON.stringify(legacy) });
  const capped = capBlocks(blocks, maxTokens);
  const isError = result.isError === true;
  return { content: capped.blocks, isError, summary: summarize(raw, capped.truncated, isError), truncated: capped.truncated };
}

function toBlock(c: ContentBlock): ToolResultContentBlock {
  switch (c.type) {
    case 'text':
      return { type: 'text', text: c.text };
    case 'image':
      if (IMAGE_TYPES.has(c.mimeType)) return { type: 'image', source: { type: 'base64', media_type: c.mimeType as ImageBlock['source']['media_type'], data: c.data } };
      return { type: 'text', text: `[image of type ${c.mimeType} (${approxBytes(c.data)} bytes) not shown: the model takes PNG, JPEG, GIF or WebP]` };
    case 'audio':
      return { type: 'text', text: `[audio of type ${c.mimeType} (${approxBytes(c.data)} bytes) not shown]` };
    case 'resource_link':
      return { type: 'text', text: `Resource link: ${c.name} <${c.uri}>${c.mimeType ? ` (${c.mimeType})` : ''}${c.description ? ` — ${c.description}` : ''}` };
    case 'resource': {
      const r = c.resource;
      if ('text' in r && typeof r.text === 'string') return { type: 'text', text: `Resource <${r.uri}>${r.mimeType ? ` (${r.mimeType})` : ''}:\n${r.text}` };
      const blob = 'blob' in r && typeof r.blob === 'string' ? r.blob : '';
      if (r.mimeType && IMAGE_TYPES.has(r.mimeType) && blob) return { type: 'image', source: { type: 'base64', media_type: r.mimeType as ImageBlock['source']['media_type'], data: blob } };
      return { type: 'text', text: `[binary resource <${r.uri}>${r.mimeType ? ` (${r.mimeType})` : ''}, ${approxBytes(blob)} bytes, not shown]` };
    }
    default:
      return { type: 'text', text: `[content of type ${JSON.stringify((c as { type?: unknown }).type)} not shown]` };
  }
}

function approxBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

function capBlocks(blocks: ToolResultContentBlock[], maxTokens: number): { blocks: ToolResultContentBlock[]; truncated: boolean } {
  const total = blocks.reduce((n, b) => n + tokensOf(b), 0);
  if (total <= maxTokens) return { blocks, truncated: false };
  const out: ToolResultContentBlock[] = [];
  let budget = maxTokens;
  let droppedImages = 0;
  for (const b of blocks) {
    const cost = tokensOf(b);
    if (cost <= budget) {
      out.push(b);
      budget -= cost;
    } else if (b.type === 'text' && budget > 0) {
      out.push({ type: 'text', text: b.text.slice(0, budget * 4) });
      budget = 0;
    } else if (b.type === 'image') {
      droppedImages++;
    }
  }
  const note =
    `[Output truncated: this MCP tool returned about ${total} tokens; Keel keeps at most ${maxTokens} ` +
    `(MAX_MCP_OUTPUT_TOKENS)${droppedImages ? `, and ${droppedImages} image${droppedImages > 1 ? 's were' : ' was'} left out` : ''}. ` +
    'If you need the rest, call the tool again asking for less (a narrower query, a smaller page or range).]';
  out.push({ type: 'text', text: note });
  return { blocks: out, truncated: true };
}

function tokensOf(b: ToolResultContentBlock): number {
  return b.type === 'text' ? Math.ceil(b.text.length / 4) : IMAGE_TOKENS;
}

function summarize(raw: ContentBlock[], truncated: boolean, isError: boolean): string {
  const counts = new Map<string, number>();
  for (const c of raw) counts.set(c.type, (counts.get(c.type) ?? 0) + 1);
  const parts = [...counts].map(([t, n]) => `${n} ${t.replace('_', ' ')}${n > 1 ? 's' : ''}`);
  return `${isError ? 'tool error: ' : ''}${parts.join(', ') || 'no content'}${truncated ? ' (truncated)' : ''}`;
}
