import { attachmentText, type MessageAttachment } from '../../../shared/domain/attachments';
import type { AssistantMessage, ConversationMessage, ToolResultBlock, ToolUseBlock, UserMessage } from '../../../shared/domain/messages';

/** Pure helpers for the conversation the turn machine carries. */

export function pendingToolUses(message: AssistantMessage): ToolUseBlock[] {
  return message.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}

/**
 * Subtask (Task) calls of the last assistant message that have no result yet: a rebuilt task
 * re-attaches to these children instead of declaring them interrupted.
 */
export function unansweredSubtaskCalls(messages: ConversationMessage[]): ToolUseBlock[] {
  let i = messages.length - 1;
  while (i >= 0 && messages[i]!.role === 'user') i--;
  const last = messages[i];
  if (!last || last.role !== 'assistant') return [];
  const answered = new Set(
    messages.slice(i + 1).flatMap((m) => (m.role === 'user' ? m.content.filter((b): b is ToolResultBlock => b.type === 'tool_result').map((b) => b.tool_use_id) : [])),
  );
  return pendingToolUses(last).filter((u) => u.name === 'Task' && !answered.has(u.id));
}

/**
 * Adds a turn's tool results right after the assistant message that asked for them: appended as
 * a new user message when that message is the last one (the usual case), or put first in the user
 * message that follows it (a rebuilt task whose resume note came after the calls). Pure.
 */
export function insertToolResults(messages: ConversationMessage[], results: ToolResultBlock[]): { messages: ConversationMessage[]; appended: boolean } {
  const ids = new Set(results.map((r) => r.tool_use_id));
  let at = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use' && ids.has(b.id))) {
      at = i;
      break;
    }
  }
  const next = messages[at + 1];
  if (at < 0 || at === messages.length - 1 || !next || next.role !== 'user') return { messages: [...messages, toolResultsMessage(results)], appended: true };
  const out = messages.slice();
  out[at + 1] = { role: 'user', content: [...results, ...next.content] };
  return { messages: out, appended: false };
}

/** `results` sorted by the position of their call in `calls` (results of unknown calls last, in their order). Pure. */
export function inCallOrder(results: ToolResultBlock[], calls: ToolUseBlock[]): ToolResultBlock[] {
  const at = new Map(calls.map((c, i) => [c.id, i]));
  const pos = (r: ToolResultBlock) => at.get(r.tool_use_id) ?? calls.length;
  return results.map((r, i) => ({ r, i })).sort((a, b) => pos(a.r) - pos(b.r) || a.i - b.i).map((x) => x.r);
}

export function toolResultsMessage(results: ToolResultBlock[]): UserMessage {
  return { role: 'user', content: results };
}

/**
 * Makes a conversation valid to send: every tool_use gets a tool_result (a call whose result
 * was never recorded, because it was cancelled or cut off by a crash, is reported as not run),
 * empty assistant messages are dropped, and consecutive user messages are merged.
 */
export function repairConversation(messages: ConversationMessage[], reason = 'The tool call was interrupted before it finished; it did not run to completion.'): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'assistant') {
      if (m.content.length === 0) continue;
      out.push(m);
      const uses = pendingToolUses(m);
      if (uses.length === 0) continue;
      const next = messages[i + 1];
      const answered = new Set(next?.role === 'user' ? next.content.filter((b): b is ToolResultBlock => b.type === 'tool_result').map((b) => b.tool_use_id) : []);
      const missing = uses.filter((u) => !answered.has(u.id));
      if (missing.length > 0) {
        const filler: ToolResultBlock[] = missing.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: reason, is_error: true }));
        if (next?.role === 'user') {
          messages = messages.slice();
          messages[i + 1] = { role: 'user', content: [...filler, ...next.content] };
        } else {
          out.push({ role: 'user', content: filler });
        }
      }
      continue;
    }
    const prev = out[out.length - 1];
    if (prev && prev.role === 'user') out[out.length - 1] = { role: 'user', content: [...prev.content, ...m.content] };
    else out.push(m);
  }
  return out;
}

export function userText(text: string): UserMessage {
  return { role: 'user', content: [{ type: 'text', text }] };
}

/**
 * A person's message as the model reads it: the text they typed, then one text block per
 * attachment their mentions brought (attachments.ts says how each reads). Pure.
 */
export function userMessageOf(text: string, attachments: readonly MessageAttachment[] = []): UserMessage {
  return { role: 'user', content: [{ type: 'text', text }, ...attachments.map((a) => ({ type: 'text' as const, text: attachmentText(a) }))] };
}

/** The longest wait before a retry, whatever a server's retry-after asks for. */
export const MAX_RETRY_DELAY_MS = 60_000;

/**
 * Backoff before retry number `attempt` (1, 2, …): the server's retry-after when it gave one,
 * else exponential from `baseMs`; never more than `capMs`.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, baseMs: number, capMs: number = MAX_RETRY_DELAY_MS): number {
  if (retryAfterMs !== undefined && retryAfterMs > 0) return Math.min(retryAfterMs, capMs);
  return Math.min(baseMs * 2 ** Math.max(0, attempt - 1), capMs);
}
