import type OpenAI from 'openai';
import { toolResultText, type ConversationMessage } from '../../shared/domain/messages';
import type { ProviderRequest } from './types';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * Translates an Anthropic-shaped request into chat.completions: system parts joined into one
 * system message, assistant tool_use blocks into `tool_calls`, user tool_result blocks into
 * `role: tool` messages (placed first, right after the assistant message that called them),
 * thinking blocks dropped (chat servers neither accept nor need them). Streams with usage.
 */
export function toChatParams(request: ProviderRequest): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  const messages: ChatMessage[] = [];
  const system = request.system.filter((s) => s.length > 0).join('\n\n');
  if (system) messages.push({ role: 'system', content: system });
  for (const m of request.messages) messages.push(...toChatMessages(m));
  const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages,
    // `max_tokens` rather than `max_completion_tokens`: the one Ollama, LM Studio and vLLM all accept.
    max_tokens: request.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    params.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  }
  return params;
}

function toChatMessages(m: ConversationMessage): ChatMessage[] {
  if (m.role === 'assistant') {
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const toolCalls = m.content.flatMap((b) =>
      b.type === 'tool_use'
        ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input) } }]
        : [],
    );
    if (!text && toolCalls.length === 0) return [];
    return [{ role: 'assistant', content: text || null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }];
  }
  const out: ChatMessage[] = [];
  for (const b of m.content) {
    if (b.type === 'tool_result') {
      // Chat Completions tool messages hold text only: images are named, not sent.
      const text = toolResultText(b);
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error ? `Error: ${text}` : text });
    }
  }
  const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n');
  const images = m.content.flatMap((b) => (b.type === 'image' ? [b] : []));
  if (images.length > 0) {
    // The person's images as `image_url` parts with data: URLs (what vision models of OpenAI-compatible servers take).
    const parts: OpenAI.Chat.Completions.ChatCompletionContentPart[] = images.map((b) => ({ type: 'image_url', image_url: { url: `data:${b.source.media_type};base64,${b.source.data}` } }));
    if (text) parts.push({ type: 'text', text });
    out.push({ role: 'user', content: parts });
  } else if (text) out.push({ role: 'user', content: text });
  return out;
}
