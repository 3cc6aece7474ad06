import type { TaskEvent } from '../../shared/domain/events';
import { MAX_CARD_IMAGES } from '../../shared/domain/toolImages';
import {
  CUT_OFF_FLAG,
  emptyTranscript,
  endsWaiting,
  gatekeeperItem,
  nextPhases,
  retryNotice,
  rewindItem,
  userItem,
  applyTaskEvent,
  type AnswerCutOff,
  type TaskTranscript,
  type TranscriptItem,
} from '../../shared/domain/transcript';

/**
 * What `TranscriptBuilder.exportState()` returns: JSON-safe. Which item each tool call id names is
 * not part of it: that is what the items say (the last tool item with that id), so a builder
 * restored from a state finds it again when an event asks (`toolAt`).
 */
export interface TranscriptBuilderState {
  header: Omit<TaskTranscript, 'items'>;
  items: TranscriptItem[];
  lastAssistant: number;
}

/** How many items from the end a restored builder looks through for a tool call before it indexes them all. */
const TOOL_SEARCH = 64;

type AssistantItem = Extract<TranscriptItem, { kind: 'assistant' }>;
type ToolItem = Extract<TranscriptItem, { kind: 'tool' }>;

/**
 * Folds a long run of task events into a transcript in O(1) per event. It gives exactly what
 * folding the same events through `applyTaskEvent` gives (a property test holds them together);
 * `applyTaskEvent` copies the item list on every event, which is right for a live view and
 * quadratic for a 100,000-event log. Single use: after `build()` the builder must be dropped.
 */
export class TranscriptBuilder {
  private readonly t: TaskTranscript;
  /** The last assistant item with no user item after it, or -1. */
  private lastAssistant = -1;
  /**
   * Tool call id → index of the last tool item with that id: what `items` says, kept as a map
   * once built. null until then (a builder restored from a state, or after a rewind replaced the
   * items): `toolAt` looks through the newest items first, where the events of a running task
   * point, and builds the map from the items on the first miss.
   */
  private toolIndex: Map<string, number> | null = new Map<string, number>();
  private textParts: string[] = [];
  private thinkingParts: string[] = [];

  constructor(
    taskId: string,
    title: string,
    model: string,
    private readonly items: TranscriptItem[] = [],
  ) {
    this.t = emptyTranscript(taskId, title, model);
  }

  /**
   * The builder's whole state as plain data (a snapshot's part): `fromState` of it gives a builder
   * that folds every later event exactly as this one would. Shares structure with the builder:
   * serialise it before applying more events.
   */
  exportState(): TranscriptBuilderState {
    this.settleParts();
    const { items: _items, ...header } = this.t;
    return { header, items: this.items, lastAssistant: this.lastAssistant };
  }

  /**
   * A builder that continues from `state` (taken by `exportState()` and read back from a
   * snapshot). It takes `state.items` over as its own list (a long task's items are not copied):
   * the caller must not use that state afterwards. It indexes the items' tool calls only if an
   * event names one that is not among the newest items (a resume seldom does).
   */
  static fromState(s: TranscriptBuilderState): TranscriptBuilder {
    const b = new TranscriptBuilder(s.header.taskId, s.header.title, s.header.model, s.items);
    Object.assign(b.t, s.header);
    b.lastAssistant = s.lastAssistant;
    b.toolIndex = null;
    return b;
  }

  apply(e: TaskEvent): void {
    const t = this.t;
    if (endsWaiting(e)) delete t.waiting;
    switch (e.type) {
      case 'task':
        t.state = e.state;
        t.tags = e.tags ?? [];
        if (e.title !== undefined) t.title = e.title;
        return;
      case 'turn':
        t.turnState = e.state;
        t.turn = e.turn;
        return;
      case 'user_message':
        t.done = false;
        this.closeStreaming();
        this.items.push(userItem(e));
        this.lastAssistant = -1;
        return;
      case 'stream':
        t.streamMode = e.mode;
        return;
      case 'todos':
        t.todos = e.todos;
        return;
      case 'budget':
        t.budget = { capUsd: e.capUsd, spentUsd: e.spentUsd };
        return;
      case 'assistant_start':
        this.closeStreaming();
        t.model = e.model || t.model;
        this.items.push({ kind: 'assistant', id: e.messageId, model: e.model, text: '', thinking: '', streaming: true });
        this.lastAssistant = this.items.length - 1;
        return;
      case 'text':
        if (this.streamingItem()) this.textParts.push(e.delta);
        return;
      case 'thinking':
        if (this.streamingItem()) this.thinkingParts.push(e.delta);
        return;
      case 'tool_call':
        this.closeStreaming();
        this.items.push({ kind: 'tool', id: e.id, name: e.name, input: e.input, output: '' });
        this.toolIndex?.set(e.id, this.items.length - 1);
        return;
      case 'tool_output':
      case 'tool_images':
      case 'tool_result':
      case 'permission': {
        const i = this.toolAt(e.type === 'permission' ? e.toolCallId : e.id);
        if (i === undefined) return;
        const it = this.items[i] as ToolItem;
        if (e.type === 'tool_output') it.output += e.chunk;
        else if (e.type === 'tool_images') it.images = [...(it.images ?? []), ...e.images].slice(0, MAX_CARD_IMAGES);
        else if (e.type === 'tool_result') it.result = { isError: e.is_error, summary: e.summary };
        else it.permission = { requestId: e.requestId, decision: e.decision, ...(e.reason ? { reason: e.reason } : {}) };
        return;
      }
      case 'usage':
        t.usage = {
          inputTokens: t.usage.inputTokens + e.inputTokens,
          outputTokens: t.usage.outputTokens + e.outputTokens,
          cacheReadTokens: t.usage.cacheReadTokens + e.cacheReadTokens,
          cacheWriteTokens: t.usage.cacheWriteTokens + e.cacheWriteTokens,
          costUsd: e.totalCostUsd,
        };
        return;
      case 'retry':
        this.closeStreaming('retried');
        this.items.push({ kind: 'notice', id: `retry-${this.items.length}`, text: retryNotice(e) });
        return;
      case 'error':
        this.closeStreaming('interrupted');
        this.items.push({ kind: 'error', id: `err-${this.items.length}`, code: e.code, message: e.message, retryable: e.retryable });
        return;
      case 'message':
      case 'compacted':
      case 'waiting_ended':
        return;
      case 'waiting':
        t.waiting = { quietMs: e.quietMs, stallAfterMs: e.stallAfterMs };
        return;
      case 'queued':
      case 'unqueued': {
        // The queue is a short list: the shared fold says what each event does to it.
        const queued = applyTaskEvent({ ...t, items: [] }, e).queued;
        if (queued) t.queued = queued;
        else delete t.queued;
        return;
      }
      case 'done':
        t.done = true;
        t.streamMode = null;
        this.closeStreaming(e.status === 'aborted' ? 'cancelled' : undefined);
        return;
      case 'phase':
        t.phases = nextPhases(t.phases, e);
        return;
      case 'instructions':
      case 'memory': {
        const i = this.items.length - 1;
        const last = this.items[i];
        const base = last?.kind === 'context' && last.run === e.run ? last : null;
        const item: TranscriptItem = {
          kind: 'context',
          id: base ? base.id : `ctx-${this.items.length}`,
          run: e.run,
          instructions: e.type === 'instructions' ? e.files : (base?.instructions ?? []),
          memories: e.type === 'memory' ? e.hits.map((h) => ({ file: h.file, title: h.title })) : (base?.memories ?? []),
        };
        if (base) this.items[i] = item;
        else this.items.push(item);
        return;
      }
      case 'gatekeeper':
        if (e.decision !== 'skipped') this.items.push(gatekeeperItem(e, this.items.length));
        return;
      case 'checkpoint': {
        t.checkpointBytes = e.storedBytes;
        const i = this.toolAt(e.toolCallId);
        if (i !== undefined) (this.items[i] as ToolItem).checkpoint = e.files;
        return;
      }
      case 'rewind': {
        if (e.items) {
          // The chat as it was at the point rewound to: the items after it are gone from view.
          this.settleParts();
          this.items.length = 0;
          // Copies: the builder changes its items in place, and the event is not its to change.
          for (const it of e.items) this.items.push({ ...it });
          this.toolIndex = null;
          this.lastAssistant = -1;
        } else this.closeStreaming();
        this.items.push(rewindItem(e));
        return;
      }
    }
  }

  /** Marks the answer being streamed (if any) as cut off: what a crash or reload did to it. */
  markInterrupted(): void {
    delete this.t.waiting;
    this.closeStreaming('interrupted');
  }

  /**
   * Forgets messages still queued: a stored task is not running, so nothing will send them (a
   * process that died with messages queued lost them; a task stopped in order gave them back).
   */
  dropQueue(): void {
    delete this.t.queued;
  }

  /** Whether an answer was being streamed when the events ended. */
  isStreaming(): boolean {
    return this.streamingItem() !== null;
  }

  build(): TaskTranscript {
    this.settleParts();
    return { ...this.t, items: this.items };
  }

  /** The index of the last tool item with this id, or undefined (see `toolIndex`). */
  private toolAt(id: string): number | undefined {
    if (this.toolIndex) return this.toolIndex.get(id);
    const items = this.items;
    for (let k = items.length - 1, end = Math.max(0, items.length - TOOL_SEARCH); k >= end; k--) {
      const it = items[k]!;
      if (it.kind === 'tool' && it.id === id) return k;
    }
    const index = new Map<string, number>();
    items.forEach((it, k) => it.kind === 'tool' && index.set(it.id, k));
    this.toolIndex = index;
    return index.get(id);
  }

  private streamingItem(): AssistantItem | null {
    if (this.lastAssistant < 0) return null;
    const it = this.items[this.lastAssistant] as AssistantItem;
    return it.streaming ? it : null;
  }

  private settleParts(): void {
    if (this.lastAssistant < 0 || (this.textParts.length === 0 && this.thinkingParts.length === 0)) return;
    const it = this.items[this.lastAssistant] as AssistantItem;
    if (this.textParts.length) it.text += this.textParts.join('');
    if (this.thinkingParts.length) it.thinking += this.thinkingParts.join('');
    this.textParts = [];
    this.thinkingParts = [];
  }

  /** Ends the answer being streamed, if any, marking why it was cut off (`cut`; none: it ended). */
  private closeStreaming(cut?: AnswerCutOff): void {
    const it = this.streamingItem();
    if (!it) return;
    this.settleParts();
    it.streaming = false;
    if (cut) Object.assign(it, CUT_OFF_FLAG[cut]);
  }
}
