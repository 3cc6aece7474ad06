import type Anthropic from '@anthropic-ai/sdk';
import type { ConversationMessage } from '../../shared/domain/messages';
import type { ProviderRequest } from './types';

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * Builds the Messages API body for a request. Prompt caching: `cache_control: ephemeral` marks
 * the last system block, the last tool definition and the last content block of the latest user
 * message (three of the four allowed breakpoints), so the stable prefix is reused turn after
 * turn. Thinking blocks are passed back unchanged, signature included. The request is not mutated.
 */
export function toAnthropicParams(request: ProviderRequest): Anthropic.MessageCreateParamsStreaming {
  const params: Anthropic.MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages: toMessageParams(request.messages),
    stream: true,
  };
  const system = request.system.filter((s) => s.length > 0);
  if (system.length > 0) {
    params.system = system.map((text, i): Anthropic.TextBlockParam =>
      i === system.length - 1 ? { type: 'text', text, cache_control: EPHEMERAL } : { type: 'text', text },
    );
  }
  if (request.tools.length > 0) {
    params.tools = request.tools.map((t, i): Anthropic.Tool => {
      const tool: Anthropic.Tool = {
        name: t.name,
        description: t.description,
        input_schema: t.input_schema as Anthropic.Tool.InputSchema,
      };
      return i === request.tools.length - 1 ? { ...tool, cache_control: EPHEMERAL } : tool;
    });
  }
  if (request.thinkingBudgetTokens !== undefined) {
    params.thinking = { type: 'enabled', budget_tokens: request.thinkingBudgetTokens };
  }
  return params;
}

function toMessageParams(messages: ConversationMessage[]): Anthropic.MessageParam[] {
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user' && m.content.length > 0) lastUser = i;
  });
  return messages.map((m, i): Anthropic.MessageParam => {
    const content: Anthropic.ContentBlockParam[] = m.content.map((b) => ({ ...b }));
    if (i === lastUser) {
      const last = content[content.length - 1];
      if (last && (last.type === 'text' || last.type === 'tool_result')) {
        content[content.length - 1] = { ...last, cache_control: EPHEMERAL };
      }
    }
    return { role: m.role, content };
  });
}
