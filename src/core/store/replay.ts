import type { TaskStatus } from '../../shared/domain/events';
import { taskEventHasTag, taskStatusOfState } from '../machines/task/taskTags';
import type { ConversationMessage } from '../../shared/domain/messages';
import type { TaskTranscript } from '../../shared/domain/transcript';
import { TranscriptBuilder, type TranscriptBuilderState } from './transcriptBuilder';
import type { LogRecord } from './types';

/** A tool call of the last assistant message, as far as the log knows it. */
export interface LoggedToolCall {
  id: string;
  name: string;
  /** The permission decision, if one was recorded. */
  decision?: 'allow' | 'deny' | 'ask';
  /** The tool finished (its summary), but the result content is only in a later `message`. */
  finished?: { isError: boolean; summary: string };
}

/** Everything a task's log says, folded: what views show, what the model saw, where it stopped. */
export interface ReplayedTask extends FoldTotals {
  transcript: TaskTranscript;
  /** The conversation as the model last saw it (from `message` and `compacted` events). */
  conversation: ConversationMessage[];
  /** Last recorded status (`running` while a run was in progress). */
  status: TaskStatus;
  /** The last task-machine state recorded. */
  state: string;
  /** An answer being streamed when the log ends: its text so far (thinking is not kept: it has no signature). */
  cutOff: { text: string; thinking: boolean; toolInput: boolean } | null;
  /** Tool calls of the last assistant message with no result in the conversation. */
  unanswered: LoggedToolCall[];
}

/** The running totals of a fold: when the log started and last moved, what it cost, how much it holds. */
export interface FoldTotals {
  firstAt: number;
  lastAt: number;
  tokens: number;
  costUsd: number;
  userMessages: number;
  events: number;
}

/**
 * Everything a `ReplayFold` holds after some records, as JSON-safe data: what a snapshot keeps so
 * that folding the rest of the log onto it gives what folding the whole log gives.
 */
export interface FoldState extends FoldTotals {
  transcript: TranscriptBuilderState;
  conversation: ConversationMessage[];
  status: TaskStatus;
  state: string;
  streamText: string | null;
  streamThinking: boolean;
  toolInput: boolean;
  calls: LoggedToolCall[];
}

/** The status a task-machine state stands for in history: the task machine's tags say it. */
export const statusOfState = taskStatusOfState;

/**
 * Folds log records one at a time (O(1) each, apart from `compacted`, which replaces the
 * conversation). Feed it every record in order, then call `finish()` once.
 */
export class ReplayFold {
  private builder: TranscriptBuilder;
  private conversation: ConversationMessage[] = [];
  private status: TaskStatus = 'running';
  private state = 'created';
  private streamText: string[] | null = null;
  private streamThinking = false;
  private toolInput = false;
  private calls = new Map<string, LoggedToolCall>();
  private firstAt = 0;
  private lastAt = 0;
  private tokens = 0;
  private costUsd = 0;
  private userMessages = 0;
  private events = 0;

  constructor(taskId: string, title: string, model: string) {
    this.builder = new TranscriptBuilder(taskId, title, model);
  }

  /** The fold's state so far (see FoldState). Shares structure with the fold: serialise it before adding more. */
  exportState(): FoldState {
    return {
      transcript: this.builder.exportState(),
      conversation: this.conversation,
      status: this.status,
      state: this.state,
      streamText: this.streamText ? this.streamText.join('') : null,
      streamThinking: this.streamThinking,
      toolInput: this.toolInput,
      calls: [...this.calls.values()],
      firstAt: this.firstAt,
      lastAt: this.lastAt,
      tokens: this.tokens,
      costUsd: this.costUsd,
      userMessages: this.userMessages,
      events: this.events,
    };
  }

  /** A fold that continues from `s` (from `exportState()`, read back from a snapshot); it takes `s` over (its lists are not copied). */
  static fromState(s: FoldState): ReplayFold {
    const f = new ReplayFold(s.transcript.header.taskId, s.transcript.header.title, s.transcript.header.model);
    f.builder = TranscriptBuilder.fromState(s.transcript);
    f.conversation = s.conversation;
    f.status = s.status;
    f.state = s.state;
    f.streamText = s.streamText === null ? null : [s.streamText];
    f.streamThinking = s.streamThinking;
    f.toolInput = s.toolInput;
    f.calls = new Map(s.calls.map((c) => [c.id, c]));
    f.firstAt = s.firstAt;
    f.lastAt = s.lastAt;
    f.tokens = s.tokens;
    f.costUsd = s.costUsd;
    f.userMessages = s.userMessages;
    f.events = s.events;
    return f;
  }

  add(r: LogRecord): void {
    const e = r.event;
    this.events++;
    if (!this.firstAt) this.firstAt = r.at;
    this.lastAt = r.at;
    this.builder.apply(e);
    switch (e.type) {
      case 'message':
        this.conversation.push(e.message);
        if (e.message.role === 'assistant') {
          this.closeStream();
          this.calls = new Map();
          for (const b of e.message.content) if (b.type === 'tool_use') this.calls.set(b.id, { id: b.id, name: b.name });
        } else {
          for (const b of e.message.content) if (b.type === 'tool_result') this.calls.delete(b.tool_use_id);
        }
        return;
      case 'compacted':
        this.conversation = e.messages.slice();
        return;
      case 'rewind':
        // The conversation came back to an earlier point (its `compacted` came first): nothing
        // streamed or called after that point is pending any more.
        if (e.items) {
          this.closeStream();
          this.calls = new Map();
        }
        return;
      case 'user_message':
        this.userMessages++;
        this.closeStream();
        return;
      case 'assistant_start':
        this.streamText = [];
        this.streamThinking = false;
        this.toolInput = false;
        return;
      case 'text':
        this.streamText?.push(e.delta);
        return;
      case 'thinking':
        if (this.streamText) this.streamThinking = true;
        return;
      case 'stream':
        if (this.streamText && e.mode === 'toolInput') this.toolInput = true;
        return;
      case 'retry':
        this.closeStream();
        return;
      case 'error':
        // A failed attempt's partial answer is not kept; an answer whose worker died was cut off,
        // as by any other interruption: resume tells the model how far it got (resumePlan.ts).
        if (e.code !== 'worker_lost') this.closeStream();
        return;
      case 'permission': {
        const c = this.calls.get(e.toolCallId);
        if (c) c.decision = e.decision;
        return;
      }
      case 'tool_result': {
        const c = this.calls.get(e.id);
        if (c) c.finished = { isError: e.is_error, summary: e.summary };
        return;
      }
      case 'usage':
        this.tokens += e.inputTokens + e.outputTokens + e.cacheReadTokens + e.cacheWriteTokens;
        this.costUsd = e.totalCostUsd;
        return;
      case 'task': {
        this.state = e.state;
        const s = statusOfState(e.state);
        if (s) this.status = s;
        if (taskEventHasTag(e, 'interrupted')) this.builder.markInterrupted();
        return;
      }
      case 'done':
        this.status = e.status;
        // `done interrupted` (a worker died) leaves the answer cut off, as any interruption does.
        if (e.status !== 'interrupted') this.closeStream();
        return;
      default:
        return;
    }
  }

  /** `live`: a process still drives the task, so an answer in progress is not marked cut off. */
  finish(opts: { live?: boolean } = {}): ReplayedTask {
    const unfinished = this.status === 'running' || this.status === 'interrupted';
    const cutOff = this.streamText && unfinished ? { text: this.streamText.join(''), thinking: this.streamThinking, toolInput: this.toolInput } : null;
    if (unfinished && !opts.live) this.builder.markInterrupted();
    // Shown from the store, the task runs nowhere here: nothing it had queued will be sent from this transcript.
    this.builder.dropQueue();
    return {
      transcript: this.builder.build(),
      conversation: this.conversation,
      status: this.status,
      state: this.state,
      cutOff,
      unanswered: [...this.calls.values()],
      firstAt: this.firstAt,
      lastAt: this.lastAt,
      tokens: this.tokens,
      costUsd: this.costUsd,
      userMessages: this.userMessages,
      events: this.events,
    };
  }

  private closeStream(): void {
    this.streamText = null;
    this.streamThinking = false;
    this.toolInput = false;
  }
}
