import type { TaskEvent } from '../shared/domain/events';
import type { TaskSummary, TranscriptMeta } from '../shared/protocol/chatMessages';
import type { TaskHandle } from '../core/runtime/types';

/** Context window of a model, in tokens: 200k for Claude, 128k as a guess for other models. */
export function contextWindowOf(model: string): number {
  return /claude|demo/i.test(model) || model === '' ? 200_000 : 128_000;
}

/** Tokens of the context window one model request used: everything it read plus what it wrote. */
export function contextTokensOf(u: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }): number {
  return u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.outputTokens;
}

interface Entry {
  task: TaskHandle;
  startedAt: number;
  model: string;
  thinkingMs: Record<string, number>;
  /** The message thinking now, and since when. */
  thinking: { messageId: string; since: number } | undefined;
  lastMessageId: string | undefined;
  contextTokens: number | undefined;
  unsubscribe(): void;
}

/**
 * What the chat remembers about this window's tasks beyond their transcripts: when each started,
 * how long each answer thought, which ones the user removed from the history list. Watches every
 * task it is given until disposed. `now` is injectable for tests.
 */
export class TaskBook {
  private readonly entries = new Map<string, Entry>();
  private readonly hidden = new Set<string>();

  constructor(
    private readonly onThinkingTime: (taskId: string, messageId: string, ms: number) => void,
    private readonly now: () => number = Date.now,
  ) {}

  track(task: TaskHandle, model: string): void {
    if (this.entries.has(task.id)) return;
    const entry: Entry = { task, startedAt: this.now(), model, thinkingMs: {}, thinking: undefined, lastMessageId: undefined, contextTokens: undefined, unsubscribe: () => {} };
    entry.unsubscribe = task.subscribe((e) => this.onEvent(entry, e));
    this.entries.set(task.id, entry);
  }

  /** When this window started watching task `taskId` (epoch ms; 0 if it never did). */
  startedAt(taskId: string): number {
    return this.entries.get(taskId)?.startedAt ?? 0;
  }

  hide(taskId: string): void {
    this.hidden.add(taskId);
  }

  unhide(taskId: string): void {
    this.hidden.delete(taskId);
  }

  meta(taskId: string): TranscriptMeta {
    const e = this.entries.get(taskId);
    const model = e?.task.transcript().model || e?.model || '';
    return {
      thinkingMs: { ...(e?.thinkingMs ?? {}) },
      contextWindow: contextWindowOf(model),
      ...(e?.contextTokens !== undefined ? { contextTokens: e.contextTokens } : {}),
    };
  }

  /** History rows, newest first, without hidden tasks. */
  summaries(tasks: readonly TaskHandle[], currentId: string | undefined): TaskSummary[] {
    return tasks
      .filter((t) => !this.hidden.has(t.id))
      .map((t) => {
        const tr = t.transcript();
        return {
          taskId: t.id,
          title: tr.title || '(untitled task)',
          startedAt: this.entries.get(t.id)?.startedAt ?? 0,
          state: tr.state,
          done: tr.done,
          inputTokens: tr.usage.inputTokens + tr.usage.cacheReadTokens + tr.usage.cacheWriteTokens,
          outputTokens: tr.usage.outputTokens,
          costUsd: tr.usage.costUsd,
          current: t.id === currentId,
        };
      })
      .sort((a, b) => b.startedAt - a.startedAt);
  }

  dispose(): void {
    for (const e of this.entries.values()) e.unsubscribe();
    this.entries.clear();
  }

  private onEvent(entry: Entry, e: TaskEvent): void {
    switch (e.type) {
      case 'assistant_start':
        this.stopThinking(entry);
        entry.lastMessageId = e.messageId;
        return;
      case 'thinking':
        if (!entry.thinking && entry.lastMessageId && entry.thinkingMs[entry.lastMessageId] === undefined) {
          entry.thinking = { messageId: entry.lastMessageId, since: this.now() };
        }
        return;
      case 'usage':
        entry.contextTokens = contextTokensOf(e);
        return;
      case 'text':
      case 'tool_call':
      case 'error':
      case 'done':
      case 'retry':
        this.stopThinking(entry);
        return;
      default:
        return;
    }
  }

  private stopThinking(entry: Entry): void {
    const t = entry.thinking;
    if (!t) return;
    entry.thinking = undefined;
    const ms = Math.max(0, this.now() - t.since);
    entry.thinkingMs[t.messageId] = ms;
    this.onThinkingTime(entry.task.id, t.messageId, ms);
  }
}
