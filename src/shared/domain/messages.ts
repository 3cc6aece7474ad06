/**
 * The conversation as the model sees it. Shapes follow the Anthropic Messages API because it is
 * the richest of the provider formats; other providers are translated to and from it.
 */
export interface TextBlock {
  type: 'text';
  text: string;
}
/** A thinking block is sent back to the model unchanged, signature included. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}
/** An image a tool returned (MCP tools can), sent to the model as the Messages API's image block. */
export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'; data: string };
}
/** What a tool_result may hold besides a plain string. */
export type ToolResultContentBlock = TextBlock | ImageBlock;
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  /** Usually text; a list of text and image blocks when the tool returned images. */
  content: string | ToolResultContentBlock[];
  is_error?: boolean;
}

/** A text tool result for the call `id` (`is_error` only when it is one). */
export function toolResult(id: string, content: string, isError: boolean): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) };
}

/** The text of a tool result; images are named, not included (for providers and views without images). */
export function toolResultText(block: ToolResultBlock): string {
  if (typeof block.content === 'string') return block.content;
  return block.content.map((b) => (b.type === 'text' ? b.text : `[image: ${b.source.media_type}]`)).join('\n');
}
export type AssistantBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock;
/** A user message holds text, tool results and the images the person attached (`--image`, the composer). */
export type UserBlock = TextBlock | ToolResultBlock | ImageBlock;

export interface UserMessage {
  role: 'user';
  content: UserBlock[];
}
export interface AssistantMessage {
  role: 'assistant';
  content: AssistantBlock[];
}
export type ConversationMessage = UserMessage | AssistantMessage;

/** Why the model stopped, as the Messages API reports it. */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/** Token usage of one model response or of a whole task. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}
export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
