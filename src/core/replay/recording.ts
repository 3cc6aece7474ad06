import type { ErrorCode } from '../../shared/domain/errors';
import type { PermissionDecision, TaskEvent } from '../../shared/domain/events';
import { toolResultText, type AssistantBlock, type ConversationMessage, type StopReason } from '../../shared/domain/messages';

/**
 * What a stored task's log says its model and its tools answered, so a replay can play it back
 * (docs/persistence.md, "Deterministic replay"). Built from the log alone.
 */

/** One model request as recorded: a complete answer, or a failure (a `retry` or `error` event). */
export type RecordedCall =
  | {
      kind: 'answer';
      messageId: string;
      model: string;
      content: AssistantBlock[];
      usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
      stopReason: StopReason;
    }
  | { kind: 'failure'; code: ErrorCode; message: string; retryable: boolean; delayMs?: number; partialText: string; started: { messageId: string; model: string } | null };

export interface RecordedTool {
  /** The tool_result content the model received (text). */
  content: string;
  isError: boolean;
  summary: string;
  outputs: string[];
}

export interface Recording {
  /** Every event of the log, in order. */
  events: TaskEvent[];
  /** The user's messages in order: the first starts the task, each later one follows a run's end. */
  prompts: string[];
  /** Model calls keyed by the conversation they were sent with (JSON), in the order made. */
  calls: Map<string, RecordedCall[]>;
  /** What each tool call returned, by tool_use id. */
  tools: Map<string, RecordedTool>;
  /** The engine's decision for each permission check, in order. */
  decisions: { decision: PermissionDecision; reason: string }[];
  /** The person's answer when the engine asked, by tool call id. */
  answers: Map<string, { decision: 'allow' | 'deny'; feedback?: string; deniedBecause?: string }>;
  /** Index of the first event a replay cannot re-create (the task was interrupted there), or -1. */
  interruptedAt: number;
}

/** The key a request is found by: the conversation it carries. */
export function conversationKey(messages: ConversationMessage[]): string {
  return JSON.stringify(messages);
}

/** Reads the recording out of a log's events. Pure. */
export function recordingOf(events: TaskEvent[]): Recording {
  const rec: Recording = { events, prompts: [], calls: new Map(), tools: new Map(), decisions: [], answers: new Map(), interruptedAt: -1 };
  let conversation: ConversationMessage[] = [];
  let pendingKey: string | null = null;
  let started: { messageId: string; model: string } | null = null;
  let text: string[] = [];
  let usage: Extract<RecordedCall, { kind: 'answer' }>['usage'] | null = null;
  let lastAnswer: Extract<RecordedCall, { kind: 'answer' }> | null = null;
  const asked = new Set<string>();
  const push = (key: string, call: RecordedCall) => {
    const q = rec.calls.get(key) ?? [];
    q.push(call);
    rec.calls.set(key, q);
  };
  const fail = (code: ErrorCode, message: string, retryable: boolean, delayMs?: number) => {
    if (pendingKey === null) return;
    push(pendingKey, { kind: 'failure', code, message, retryable, ...(delayMs !== undefined ? { delayMs } : {}), partialText: text.join(''), started });
    pendingKey = null;
    started = null;
    text = [];
  };
  events.forEach((e, i) => {
    switch (e.type) {
      case 'user_message':
        rec.prompts.push(e.text);
        return;
      case 'stream':
        if (e.mode === 'requesting') {
          pendingKey = conversationKey(conversation);
          started = null;
          text = [];
          usage = null;
        }
        return;
      case 'assistant_start':
        started = { messageId: e.messageId, model: e.model };
        return;
      case 'text':
        text.push(e.delta);
        return;
      case 'usage':
        usage = { inputTokens: e.inputTokens, outputTokens: e.outputTokens, cacheReadTokens: e.cacheReadTokens, cacheWriteTokens: e.cacheWriteTokens };
        return;
      case 'retry':
        fail(e.code, e.message, true, e.delayMs);
        return;
      case 'error':
        fail(e.code, e.message, e.retryable);
        return;
      case 'message':
        if (e.message.role === 'assistant' && pendingKey !== null && started) {
          const content = e.message.content;
          lastAnswer = {
            kind: 'answer',
            messageId: started.messageId,
            model: started.model,
            content,
            usage: usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
            stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
          };
          push(pendingKey, lastAnswer);
          pendingKey = null;
          started = null;
        } else if (e.message.role === 'user') {
          for (const b of e.message.content) {
            if (b.type !== 'tool_result') continue;
            const t = rec.tools.get(b.tool_use_id);
            if (t) t.content = toolResultText(b);
          }
        }
        conversation = [...conversation, e.message];
        return;
      case 'compacted':
        conversation = e.messages.slice();
        return;
      case 'tool_call':
        rec.tools.set(e.id, { content: '', isError: false, summary: '', outputs: [] });
        return;
      case 'tool_output':
        rec.tools.get(e.id)?.outputs.push(e.chunk);
        return;
      case 'tool_result': {
        const t = rec.tools.get(e.id);
        if (t) {
          t.isError = e.is_error;
          t.summary = e.summary;
        }
        return;
      }
      case 'permission':
        if (asked.has(e.toolCallId)) {
          // A denial nobody answered (headless) carries what denied it; a person's is "denied by the user".
          const unattended = e.decision === 'deny' && e.reason !== undefined && e.reason !== 'denied by the user';
          if (e.decision !== 'ask') rec.answers.set(e.toolCallId, { decision: e.decision, ...(unattended ? { deniedBecause: e.reason } : {}) });
          return;
        }
        asked.add(e.toolCallId);
        rec.decisions.push({ decision: e.decision, reason: e.reason ?? '' });
        return;
      case 'done':
        // The stop reason of a run's last answer is the run's (max_tokens, refusal…).
        if (lastAnswer && e.stopReason) lastAnswer.stopReason = e.stopReason;
        lastAnswer = null;
        return;
      case 'task':
        if (e.state === 'interrupted' && rec.interruptedAt < 0) rec.interruptedAt = i;
        return;
      default:
        return;
    }
  });
  // A denial's feedback is in the tool result the model received.
  for (const [id, answer] of rec.answers) {
    const content = rec.tools.get(id)?.content;
    if (answer.decision !== 'deny' || !content) continue;
    if (answer.deniedBecause !== undefined) {
      const head = `Permission denied: ${answer.deniedBecause}.\n\n`;
      if (content.startsWith(head)) answer.feedback = content.slice(head.length);
      continue;
    }
    const m = /^The user denied this \w+ call\.(?: Feedback: ([\s\S]*))?$/.exec(content);
    if (m?.[1]) answer.feedback = m[1];
  }
  return rec;
}
