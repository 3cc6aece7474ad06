import type { ConversationMessage } from '../../shared/domain/messages';

/**
 * A cheap token estimate (about four characters a token for English and code). It only decides
 * when to compact, so being roughly right and fast matters more than exactness.
 */
/** What an image in a tool result is counted as (a large image costs about this many tokens). */
export const IMAGE_TOKENS = 1600;

export function estimateTokens(system: string[], messages: ConversationMessage[]): number {
  let chars = 0;
  for (const s of system) chars += s.length;
  for (const m of messages) {
    for (const b of m.content) {
      switch (b.type) {
        case 'text':
          chars += b.text.length;
          break;
        case 'thinking':
          chars += b.thinking.length;
          break;
        case 'redacted_thinking':
          chars += b.data.length;
          break;
        case 'tool_use':
          chars += JSON.stringify(b.input).length + b.name.length;
          break;
        case 'image':
          chars += IMAGE_TOKENS * 4;
          break;
        case 'tool_result':
          chars += typeof b.content === 'string' ? b.content.length : b.content.reduce((n, c) => n + (c.type === 'text' ? c.text.length : IMAGE_TOKENS * 4), 0);
          break;
      }
    }
  }
  return Math.ceil(chars / 4);
}
