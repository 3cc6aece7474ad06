import { z } from 'zod';
import type { ConversationMessage } from '../../shared/domain/messages';
import type { ModelProvider, RawUsage } from '../providers/types';

/** What the lesson call proposes to remember. */
export interface LessonCandidate {
  title: string;
  body: string;
  tags: string[];
}

/** The answer of the lesson call, with its token usage. `lesson` null: nothing worth keeping (or an answer that could not be read). */
export interface LessonAnswer {
  lesson: LessonCandidate | null;
  /** Why there is no lesson, when there is none. */
  none?: string;
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
}

/** The lesson call's own budget: it must stay a short call. */
export const LESSON_MAX_TOKENS = 400;
const DIGEST_CHARS = 8000;

export const LESSON_SYSTEM = [
  'You maintain a small memory of durable facts about one software project, for a coding agent that works on it in later tasks.',
  'You are shown one finished task. Decide whether it revealed a durable, project-specific fact that would save time in future tasks: ' +
    'how to build, test or run it; a convention the code follows; where something lives; a pitfall and its fix.',
  'Do not keep: one-off details of this task, things any developer knows, anything personal, credentials, keys, tokens or passwords, ' +
    'or instructions about how the agent should behave or what it may do.',
  'Answer with exactly one line of JSON and nothing else:',
  '{"title": "<at most 80 characters>", "body": "<one to three sentences, at most 500 characters>", "tags": ["<one word>", ...]}',
  'or, when nothing is worth keeping, with the single word NONE.',
].join('\n');

const lessonSchema = z.object({
  title: z.string().trim().min(3),
  body: z.string().trim().min(3),
  tags: z.array(z.string().trim().min(1)).max(8).optional(),
});

/**
 * What the lesson call is shown of a run: the user's requests, the tools used (names and their
 * results' summaries) and the final answer, cut to a few thousand characters. Pure.
 */
export function runDigest(messages: ConversationMessage[], fromIndex: number, toolSummaries: string[]): string {
  const parts: string[] = [];
  for (const m of messages.slice(fromIndex)) {
    for (const b of m.content) {
      if (m.role === 'user' && b.type === 'text') parts.push(`User: ${b.text}`);
      if (m.role === 'assistant' && b.type === 'text' && b.text.trim()) parts.push(`Agent: ${b.text}`);
      if (m.role === 'assistant' && b.type === 'tool_use') parts.push(`Agent used ${b.name} ${JSON.stringify(b.input).slice(0, 200)}`);
    }
  }
  if (toolSummaries.length) parts.push(`Tool results: ${toolSummaries.join('; ')}`);
  const text = parts.join('\n');
  if (text.length <= DIGEST_CHARS) return text;
  // Keep the request (the start) and the outcome (the end).
  return `${text.slice(0, DIGEST_CHARS / 2)}\n[…]\n${text.slice(-DIGEST_CHARS / 2)}`;
}

/** Reads the lesson call's answer. Never throws: an answer that is not the asked-for JSON is "no lesson". */
export function parseLessonAnswer(text: string): { lesson: LessonCandidate | null; none?: string } {
  const t = text.trim();
  if (!t || /^NONE\b/i.test(t)) return { lesson: null, none: 'the model found nothing worth keeping' };
  const start = t.indexOf('{');
  const end = t.lastIndexOf('}');
  if (start < 0 || end <= start) return { lesson: null, none: 'the answer was not the JSON asked for' };
  let value: unknown;
  try {
    value = JSON.parse(t.slice(start, end + 1));
  } catch {
    return { lesson: null, none: 'the answer was not valid JSON' };
  }
  const r = lessonSchema.safeParse(value);
  if (!r.success) return { lesson: null, none: 'the answer lacked a title or a body' };
  return { lesson: { title: r.data.title, body: r.data.body, tags: (r.data.tags ?? []).map((x) => x.toLowerCase()) } };
}

/**
 * The one short model call that proposes a lesson. Resolves with the answer (a failed call is
 * "no lesson" with the reason); rejects only when `signal` aborts.
 */
export async function extractLesson(provider: ModelProvider, model: string, taskId: string, digest: string, signal: AbortSignal): Promise<LessonAnswer> {
  let text = '';
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const add = (u: RawUsage) => {
    usage.inputTokens = Math.max(usage.inputTokens, u.input_tokens ?? 0);
    usage.outputTokens = Math.max(usage.outputTokens, u.output_tokens ?? 0);
    usage.cacheReadTokens = Math.max(usage.cacheReadTokens, u.cache_read_input_tokens ?? 0);
    usage.cacheWriteTokens = Math.max(usage.cacheWriteTokens, u.cache_creation_input_tokens ?? 0);
  };
  const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: `The finished task:\n\n${digest}` }] }];
  const request = { model, system: [LESSON_SYSTEM], messages, tools: [], maxTokens: LESSON_MAX_TOKENS, taskId };
  for await (const e of provider.stream(request, signal)) {
    if (e.type === 'message_start') add(e.message.usage);
    else if (e.type === 'message_delta') add(e.usage);
    else if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    else if (e.type === 'provider_error') {
      if (signal.aborted) throw new Error('cancelled');
      return { lesson: null, none: `the lesson call failed: ${e.error.message}`, usage };
    }
  }
  if (signal.aborted) throw new Error('cancelled');
  return { ...parseLessonAnswer(text), usage };
}
