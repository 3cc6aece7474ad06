import { signal } from '@preact/signals';
import type { TaskTranscript } from '../src/shared/domain/transcript';
import { applyTaskEvent } from '../src/shared/domain/transcript';
import { INITIAL_SEQUENCE_STATE, type SequenceState, acceptMessage } from '../src/shared/protocol/sequencing';
import { type ChatConfig, type ToWebviewMessage, parseToWebview } from '../src/shared/protocol/toWebview';

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

/**
 * The chat page's state. Messages from the host are validated, sequenced (duplicates and
 * out-of-order messages dropped) and folded into the transcript with the same `applyTaskEvent`
 * the host uses. Streaming events update a working copy; the rendered signal is updated at most
 * once per animation frame. A snapshot is rendered at once.
 */
export class ChatStore {
  readonly transcript = signal<TaskTranscript | null>(null);
  readonly config = signal<ChatConfig | null>(null);
  readonly hostErrors = signal<HostError[]>([]);
  readonly ready = signal(false);

  private seqState: SequenceState = INITIAL_SEQUENCE_STATE;
  private working: TaskTranscript | null = null;
  private flushScheduled = false;
  private nextErrorId = 1;

  constructor(private readonly options: ChatStoreOptions = {}) {}

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
    this.apply(parsed.message);
    this.options.onSeq?.(this.seqState.lastSeq);
  }

  dismissHostError(id: number): void {
    this.hostErrors.value = this.hostErrors.value.filter((e) => e.id !== id);
  }

  private apply(message: ToWebviewMessage): void {
    switch (message.type) {
      case 'snapshot':
        this.working = message.transcript;
        this.config.value = message.config;
        this.hostErrors.value = [];
        this.flush();
        if (!this.ready.value) {
          this.ready.value = true;
          this.options.onFirstSnapshot?.();
        }
        return;
      case 'event': {
        const t = this.working;
        if (!t || t.taskId !== message.event.taskId) return;
        this.working = applyTaskEvent(t, message.event);
        this.scheduleFlush();
        return;
      }
      case 'error':
        this.hostErrors.value = [...this.hostErrors.value, { id: this.nextErrorId++, message: message.message }];
        return;
    }
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
