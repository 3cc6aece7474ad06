import type { ConversationMessage, UserMessage } from '../../shared/domain/messages';
import { estimateTokens } from './tokens';

/**
 * Fallback compaction when summarising fails: drops the oldest exchanges until the estimate fits,
 * keeping the first user message (the task) and never separating a tool_use from its
 * tool_result. Pure. The result starts with a user message and alternates as the API requires.
 */
export function truncateConversation(messages: ConversationMessage[], system: string[], maxTokens: number): ConversationMessage[] {
  if (messages.length <= 2 || estimateTokens(system, messages) <= maxTokens) return messages;
  const first = messages[0]!;
  // Cut points: indexes of user messages that start a new exchange (not carrying tool results),
  // or assistant messages with no tool_use. Cutting right before a user message whose content is
  // plain text keeps every tool_use/tool_result pair whole.
  const cuts: number[] = [];
  for (let i = 2; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'user' && m.content.every((b) => b.type === 'text')) cuts.push(i);
  }
  const notice: UserMessage = {
    role: 'user',
    content: [{ type: 'text', text: '[Earlier messages were removed to fit the context window.]' }],
  };
  for (const cut of cuts) {
    const kept = messages.slice(cut);
    const candidate = mergeLeadingUsers([first, notice], kept);
    if (estimateTokens(system, candidate) <= maxTokens) return candidate;
  }
  // Nothing fits: keep the first message and the last exchange.
  const lastCut = cuts.length ? cuts[cuts.length - 1]! : messages.length - 1;
  return mergeLeadingUsers([first, notice], messages.slice(lastCut));
}

/** Joins consecutive user messages so roles alternate. */
function mergeLeadingUsers(head: ConversationMessage[], tail: ConversationMessage[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (const m of [...head, ...tail]) {
    const prev = out[out.length - 1];
    if (prev && prev.role === 'user' && m.role === 'user') out[out.length - 1] = { role: 'user', content: [...prev.content, ...m.content] };
    else out.push(m);
  }
  return out;
}

/** The most output a summary request asks for (the budget prices a summary at it). */
export const SUMMARY_MAX_TOKENS = 4096;

/** The request sent to summarise a conversation; the answer replaces everything but the task. */
export const SUMMARY_INSTRUCTION =
  'Summarise the conversation so far for your own later use: the task, what has been done (files read and changed, ' +
  'commands run and their results), decisions taken, and what remains. Be specific and brief.';

export function compactWithSummary(messages: ConversationMessage[], summary: string): ConversationMessage[] {
  const first = messages[0];
  const summaryMsg: UserMessage = { role: 'user', content: [{ type: 'text', text: `[Summary of the earlier conversation]\n${summary}` }] };
  const last = messages[messages.length - 1];
  // Keep the latest user message (the current request) verbatim when it is plain text.
  const keepLast = last && last !== first && last.role === 'user' && last.content.every((b) => b.type === 'text') ? [last] : [];
  return mergeLeadingUsers(first ? [first, summaryMsg] : [summaryMsg], keepLast);
}
