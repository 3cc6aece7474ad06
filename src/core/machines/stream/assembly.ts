import type { AssistantBlock, AssistantMessage, StopReason, Usage } from '../../../shared/domain/messages';
import type { KeelError } from '../../../shared/domain/errors';
import type { ProviderError, RawContentBlockStart, RawDelta, RawUsage } from '../../providers/types';
import { errorMessage } from '../../../shared/domain/errors';

/**
 * Pure helpers of the stream machine: the message being assembled from raw stream events.
 * Tool input arrives as JSON fragments; it is parsed only when its block stops, and a block that
 * never stopped (cut off) stays `complete: false` so it is never executed.
 */
export type BuildingBlock =
  | { type: 'text'; text: string; complete: boolean }
  | { type: 'thinking'; thinking: string; signature: string; complete: boolean }
  | { type: 'redacted_thinking'; data: string; complete: boolean }
  | { type: 'tool_use'; id: string; name: string; json: string; input: Record<string, unknown> | null; complete: boolean; parseError?: string };

export function startBlock(start: RawContentBlockStart): BuildingBlock {
  switch (start.type) {
    case 'text':
      return { type: 'text', text: start.text ?? '', complete: false };
    case 'thinking':
      return { type: 'thinking', thinking: start.thinking ?? '', signature: start.signature ?? '', complete: false };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: start.data, complete: false };
    case 'tool_use':
      return { type: 'tool_use', id: start.id, name: start.name, json: '', input: null, complete: false };
  }
}

export function applyDelta(block: BuildingBlock, delta: RawDelta): BuildingBlock {
  if (delta.type === 'text_delta' && block.type === 'text') return { ...block, text: block.text + delta.text };
  if (delta.type === 'thinking_delta' && block.type === 'thinking') return { ...block, thinking: block.thinking + delta.thinking };
  if (delta.type === 'signature_delta' && block.type === 'thinking') return { ...block, signature: block.signature + delta.signature };
  if (delta.type === 'input_json_delta' && block.type === 'tool_use') return { ...block, json: block.json + delta.partial_json };
  return block;
}

export function stopBlock(block: BuildingBlock): BuildingBlock {
  if (block.type !== 'tool_use') return { ...block, complete: true };
  if (block.json.trim() === '') return { ...block, input: {}, complete: true };
  try {
    const parsed: unknown = JSON.parse(block.json);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { ...block, input: parsed as Record<string, unknown>, complete: true };
    return { ...block, complete: true, parseError: 'tool input is not a JSON object' };
  } catch (err) {
    return { ...block, complete: true, parseError: `tool input is not valid JSON: ${errorMessage(err)}` };
  }
}

export function mergeUsage(prev: Usage, raw: RawUsage | undefined): Usage {
  if (!raw) return prev;
  // message_delta usage is cumulative: take the larger figure rather than adding.
  return {
    inputTokens: Math.max(prev.inputTokens, raw.input_tokens ?? 0),
    outputTokens: Math.max(prev.outputTokens, raw.output_tokens ?? 0),
    cacheReadTokens: Math.max(prev.cacheReadTokens, raw.cache_read_input_tokens ?? 0),
    cacheWriteTokens: Math.max(prev.cacheWriteTokens, raw.cache_creation_input_tokens ?? 0),
  };
}

/** A tool call that will not run, and why (told to the model). */
export interface UnrunToolUse {
  id: string;
  name: string;
  reason: string;
}

/**
 * The assistant message to keep in the conversation, from the blocks as they stopped.
 * - A tool_use whose input never finished — its block never stopped, or the answer was cut off
 *   at `max_tokens` (`cutOff`) so its JSON is incomplete — is left out and reported in
 *   `truncatedToolUses`.
 * - A tool_use that stopped but whose input is not a JSON object (the model wrote bad JSON) is
 *   kept, with an empty input, so the conversation records the call, and is reported in
 *   `invalidToolUses`: the turn answers it with an error result and never runs it.
 */
export function assembleMessage(
  blocks: BuildingBlock[],
  cutOff = false,
): { message: AssistantMessage; truncatedToolUses: UnrunToolUse[]; invalidToolUses: UnrunToolUse[] } {
  const content: AssistantBlock[] = [];
  const truncatedToolUses: UnrunToolUse[] = [];
  const invalidToolUses: UnrunToolUse[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        if (b.text !== '') content.push({ type: 'text', text: b.text });
        break;
      case 'thinking':
        if (b.complete) content.push({ type: 'thinking', thinking: b.thinking, signature: b.signature });
        break;
      case 'redacted_thinking':
        content.push({ type: 'redacted_thinking', data: b.data });
        break;
      case 'tool_use':
        if (b.complete && b.input && !b.parseError) content.push({ type: 'tool_use', id: b.id, name: b.name, input: b.input });
        else if (b.complete && b.parseError && !cutOff) {
          content.push({ type: 'tool_use', id: b.id, name: b.name, input: {} });
          invalidToolUses.push({ id: b.id, name: b.name, reason: `${b.parseError}; the input was: ${excerpt(b.json)}` });
        } else truncatedToolUses.push({ id: b.id, name: b.name, reason: b.parseError ?? 'input cut off before it was complete' });
        break;
    }
  }
  return { message: { role: 'assistant', content }, truncatedToolUses, invalidToolUses };
}

function excerpt(json: string): string {
  const flat = json.trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

export type StreamOutput =
  | {
      ok: true;
      messageId: string;
      model: string;
      message: AssistantMessage;
      stopReason: StopReason;
      usage: Usage;
      truncatedToolUses: UnrunToolUse[];
      /** Calls kept in `message` (with an empty input) whose input was not a JSON object: never run. */
      invalidToolUses: UnrunToolUse[];
    }
  | {
      ok: false;
      error: KeelError & { phase: ProviderError['phase']; retryAfterMs?: number };
      /** What streamed before the failure; shown to the user, never sent back as complete. */
      partialText: string;
      usage: Usage;
    };
