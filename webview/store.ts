import { signal } from '@preact/signals';
import type { TaskTranscript } from '../src/shared/domain/transcript';
import { applyTaskEvent } from '../src/shared/domain/transcript';
import type { LoopsState } from '../src/shared/protocol/loopMessages';
import type { McpStatus } from '../src/shared/protocol/mcpMessages';
import type { MemoryState } from '../src/shared/protocol/memoryMessages';
import type { Page, PendingPermission, SettingsState, StoredTaskState, TaskSummary } from '../src/shared/protocol/chatMessages';
import { INITIAL_SEQUENCE_STATE, type SequenceState, acceptMessage } from '../src/shared/protocol/sequencing';
import { type ChatConfig, type MentionItem, type SlashCommand, type TaskWorker, type ToWebviewMessage, parseToWebview } from '../src/shared/protocol/toWebview';
import type { RewindPreviewView } from '../src/shared/protocol/rewindMessages';

export interface HostError {
  id: number;
  message: string;
}

export interface ChatStoreOptions {
  /** Called after every applied message with the new last seq (to persist it). */
  onSeq?: (lastSeq: number) => void;
  /** Called once, after the first snapshot is on screen. */
  onFirstSnapshot?: () => void;
  log?: (message: string) => void;
  /** Schedules a render; defaults to the next animation frame (with a timer fallback). */
  schedule?: (flush: () => void) => void;
  /** The page shown before the first snapshot (restored after the view was hidden). */
  initialPage?: Page;
  /** Clock for measuring thinking while it streams (ms). */
  now?: () => number;
  /** How long a notice stays when nothing else clears it (default {@link NOTICE_TIMEOUT_MS}). */
  noticeTimeoutMs?: number;
  /** Starts a timer; returns its cancel function (default setTimeout). */
  setTimer?: (fire: () => void, ms: number) => () => void;
}

/** A notice (e.g. "Exported to …") goes after this long unless the next action clears it first. */
export const NOTICE_TIMEOUT_MS = 15_000;

function startTimer(fire: () => void, ms: number): () => void {
  const t = setTimeout(fire, ms);
  return () => clearTimeout(t);
}

function nextFrame(flush: () => void): void {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    flush();
  };
  requestAnimationFrame(run);
  // A hidden or throttled frame must not hold the transcript back for long.
  setTimeout(run, 100);
}

const DEFAULT_CONTEXT_WINDOW = 200_000;

/**
 * The chat page's state. Messages from the host are validated, sequenced (duplicates and
 * out-of-order messages dropped) and folded into the transcript with the same `applyTaskEvent`
 * the host uses. Streaming events update a working copy; the rendered signal is updated at most
 * once per animation frame. A snapshot is rendered at once. Never throws from `receive`.
 */
export class ChatStore {
  readonly transcript = signal<TaskTranscript | null>(null);
  readonly config = signal<ChatConfig | null>(null);
  readonly hostErrors = signal<HostError[]>([]);
  readonly notices = signal<HostError[]>([]);
  readonly ready = signal(false);
  /** Permission prompts waiting for an answer (any task of this window). */
  readonly permissions = signal<PendingPermission[]>([]);
  /** How long each assistant message thought, by id (host-measured; live ones measured here). */
  readonly thinkingMs = signal<Record<string, number>>({});
  readonly contextWindow = signal(DEFAULT_CONTEXT_WINDOW);
  /** Tokens the last model request used of the context window (undefined: none yet). */
  readonly contextTokens = signal<number | undefined>(undefined);
  readonly page = signal<Page>('chat');
  readonly tasks = signal<TaskSummary[] | null>(null);
  /** Set while the shown task comes from the store (read-only until resumed). */
  readonly stored = signal<StoredTaskState | undefined>(undefined);
  /** The worker process the shown task runs on (null: none, or workers off). */
  readonly worker = signal<TaskWorker | null>(null);
  readonly settings = signal<SettingsState | null>(null);
  /** How the last "Save settings" went (null: nothing to say). */
  readonly settingsResult = signal<{ ok: boolean; message: string } | null>(null);
  /** The MCP servers and their live state (the settings page's MCP section; null until asked). */
  readonly mcp = signal<McpStatus | null>(null);
  /** The latest answer to the `@` being typed: what can be mentioned. */
  readonly mentions = signal<{ queryId: number; items: MentionItem[] } | null>(null);
  /**
   * Queued messages the shown task gave back (its run was cancelled or stopped): their text, for
   * the composer to take back in (`seq` tells one giving back from the next).
   */
  readonly returned = signal<{ seq: number; text: string } | null>(null);
  /** Grows each time the composer is asked to take the focus (Keel: Focus Chat). */
  readonly focusRequest = signal(0);
  /** The latest slash command search answer (the prompts of ready MCP servers). */
  readonly commands = signal<{ queryId: number; commands: SlashCommand[] } | null>(null);
  /** The workspace's loops (the loop page; null until asked). */
  readonly loops = signal<LoopsState | null>(null);
  /** The loop the loop page shows (undefined: the newest). */
  readonly loopSelected = signal<string | undefined>(undefined);
  /** The workspace's memories (the Memory page; null until asked). */
  readonly memories = signal<MemoryState | null>(null);
  /** The latest memory search answer: file names, best first. */
  readonly memorySearch = signal<{ queryId: number; files: string[] } | null>(null);
  /** A rewind being previewed (its diffs are open in VS Code's diff editor); null: none. */
  readonly rewind = signal<RewindPreviewView | null>(null);
  /** Text the host put back in the composer (a message a rewind went back to); `n` tells repeats apart. */
  readonly composerText = signal<{ text: string; n: number } | null>(null);

  private seqState: SequenceState = INITIAL_SEQUENCE_STATE;
  private working: TaskTranscript | null = null;
  private flushScheduled = false;
  private nextErrorId = 1;
  /** When the streaming message started thinking (local clock), until the host reports its time. */
  private thinkingSince = new Map<string, number>();
  /** Cancels the timer of each notice shown, by id. */
  private readonly noticeTimers = new Map<number, () => void>();

  constructor(private readonly options: ChatStoreOptions = {}) {
    if (options.initialPage) this.page.value = options.initialPage;
  }

  get lastSeq(): number {
    return this.seqState.lastSeq;
  }

  /** Handles one raw message from the host. Never throws; invalid messages are logged and dropped. */
  receive(data: unknown): void {
    const parsed = parseToWebview(data);
    if (!parsed.ok) {
      this.options.log?.(`dropped an invalid message from the host: ${parsed.error}`);
      return;
    }
    const verdict = acceptMessage(this.seqState, parsed.message);
    if (!verdict.apply) {
      this.options.log?.(`dropped message seq ${parsed.message.seq} (${verdict.reason})`);
      return;
    }
    if (verdict.gap > 0) this.options.log?.(`missed ${verdict.gap} message(s) before seq ${parsed.message.seq}`);
    this.seqState = verdict.state;
    try {
      this.apply(parsed.message);
    } catch (e) {
      this.options.log?.(`failed to apply ${parsed.message.type}: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.options.onSeq?.(this.seqState.lastSeq);
  }

  dismissHostError(id: number): void {
    this.hostErrors.value = this.hostErrors.value.filter((e) => e.id !== id);
  }

  dismissNotice(id: number): void {
    this.noticeTimers.get(id)?.();
    this.noticeTimers.delete(id);
    this.notices.value = this.notices.value.filter((e) => e.id !== id);
  }

  /**
   * The person did something else (sent a prompt, changed page, opened or started a task):
   * notices about what came before go, like a toast does.
   */
  clearNotices(): void {
    for (const cancel of this.noticeTimers.values()) cancel();
    this.noticeTimers.clear();
    if (this.notices.value.length > 0) this.notices.value = [];
  }

  private addNotice(message: string): void {
    const id = this.nextErrorId++;
    const all = [...this.notices.value, { id, message }];
    // At most five at once: the oldest go first.
    for (const dropped of all.slice(0, -5)) {
      this.noticeTimers.get(dropped.id)?.();
      this.noticeTimers.delete(dropped.id);
    }
    this.notices.value = all.slice(-5);
    const cancel = (this.options.setTimer ?? startTimer)(() => this.dismissNotice(id), this.options.noticeTimeoutMs ?? NOTICE_TIMEOUT_MS);
    this.noticeTimers.set(id, cancel);
  }

  /** Removes a card at once after the user answered it (the host confirms with permissionResolved). */
  answered(requestId: string): void {
    this.permissions.value = this.permissions.value.filter((p) => p.requestId !== requestId);
  }

  /** Seconds a message thought: host-measured, else measured live; undefined if unknown. */
  thoughtMs(messageId: string): number | undefined {
    const known = this.thinkingMs.value[messageId];
    if (known !== undefined) return known;
    const since = this.thinkingSince.get(messageId);
    return since === undefined ? undefined : this.now() - since;
  }

  private now(): number {
    return (this.options.now ?? (() => performance.now()))();
  }

  private apply(message: ToWebviewMessage): void {
    switch (message.type) {
      case 'snapshot':
        // Another task (or none) is shown now: notices about the previous one no longer apply.
        if ((this.working?.taskId ?? null) !== (message.transcript?.taskId ?? null)) {
          this.clearNotices();
          this.rewind.value = null;
        }
        this.working = message.transcript;
        this.config.value = message.config;
        this.hostErrors.value = [];
        this.permissions.value = message.permissions ?? [];
        this.thinkingMs.value = message.meta?.thinkingMs ?? {};
        this.contextWindow.value = message.meta?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
        this.contextTokens.value = message.meta?.contextTokens;
        this.stored.value = message.stored;
        this.worker.value = message.worker ?? null;
        this.thinkingSince.clear();
        this.flush();
        if (!this.ready.value) {
          this.ready.value = true;
          this.options.onFirstSnapshot?.();
        }
        return;
      case 'event': {
        const t = this.working;
        if (!t || t.taskId !== message.event.taskId) return;
        const e = message.event;
        if (e.type === 'unqueued' && e.outcome === 'returned') this.giveBack(t, e.ids);
        this.working = applyTaskEvent(t, e);
        if (e.type === 'thinking') {
          const last = this.working.items[this.working.items.length - 1];
          if (last?.kind === 'assistant' && !this.thinkingSince.has(last.id)) this.thinkingSince.set(last.id, this.now());
        }
        if (e.type === 'usage') this.contextTokens.value = e.inputTokens + e.cacheReadTokens + e.cacheWriteTokens + e.outputTokens;
        this.scheduleFlush();
        return;
      }
      case 'error':
        this.hostErrors.value = [...this.hostErrors.value, { id: this.nextErrorId++, message: message.message }];
        return;
      case 'notice':
        this.addNotice(message.message);
        return;
      case 'permissionRequest':
        if (!this.permissions.value.some((p) => p.requestId === message.request.requestId)) {
          this.permissions.value = [...this.permissions.value, message.request];
        }
        return;
      case 'permissionResolved':
        this.answered(message.requestId);
        return;
      case 'thinkingTime':
        this.thinkingSince.delete(message.messageId);
        this.thinkingMs.value = { ...this.thinkingMs.value, [message.messageId]: message.ms };
        return;
      case 'taskList':
        this.tasks.value = message.tasks;
        return;
      case 'taskWorker':
        if (message.taskId === this.working?.taskId) this.worker.value = message.worker;
        return;
      case 'settings':
        this.settings.value = message.settings;
        return;
      case 'mcpStatus':
        this.mcp.value = message.status;
        return;
      case 'loops':
        this.loops.value = message.state;
        return;
      case 'memories':
        this.memories.value = message.state;
        return;
      case 'memorySearch':
        this.memorySearch.value = { queryId: message.queryId, files: message.files };
        return;
      case 'settingsSaved':
        this.settingsResult.value = { ok: message.ok, message: message.message };
        return;
      case 'mentionResults':
        this.mentions.value = { queryId: message.queryId, items: message.items };
        return;
      case 'focusComposer':
        this.page.value = 'chat';
        this.focusRequest.value += 1;
        return;
      case 'commandResults':
        this.commands.value = { queryId: message.queryId, commands: message.commands };
        return;
      case 'rewindPlan':
        this.rewind.value = message.preview;
        return;
      case 'composerText':
        this.composerText.value = { text: message.text, n: (this.composerText.value?.n ?? 0) + 1 };
        return;
      case 'navigate':
        if (this.page.value !== message.page) this.clearNotices();
        this.page.value = message.page;
        if (message.loop) this.loopSelected.value = message.loop;
        return;
    }
  }

  /** The queued messages `ids` go back to the composer as the person typed them, oldest first. */
  private giveBack(t: TaskTranscript, ids: string[]): void {
    const texts = (t.queued ?? []).filter((q) => ids.includes(q.id)).map((q) => q.typed ?? q.text);
    if (texts.length === 0) return;
    this.returned.value = { seq: (this.returned.value?.seq ?? 0) + 1, text: texts.join('\n') };
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    (this.options.schedule ?? nextFrame)(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    this.transcript.value = this.working;
  }
}
