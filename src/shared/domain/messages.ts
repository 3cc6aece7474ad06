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
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}
export type AssistantBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock;
export type UserBlock = TextBlock | ToolResultBlock;

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
