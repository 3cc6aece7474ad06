import { COVERED_BY_SNAPSHOT, type SnapshotMessage, type ToWebviewMessage, type ToWebviewPayload } from '../shared/protocol/toWebview';
import { type Logger, describeError, silentLogger } from './logger';

/** Where an outbox delivers numbered messages: `Webview.postMessage` in the extension. */
export type PostMessage = (message: ToWebviewMessage) => PromiseLike<boolean> | boolean;

export interface OutboxOptions {
  post: PostMessage;
  log?: Logger;
  /** How many host errors to keep for a view that is not ready (oldest dropped first). */
  maxPending?: number;
}

/**
 * The host side of one view's message stream. Contract:
 * - Messages are numbered per view: the snapshot that answers a `ready` is seq 1, then 2, 3, …
 *   in the order `send` was called. Numbering restarts with each `open` (each page load).
 * - While the view is not ready (loading, hidden, or a post failed), nothing is posted.
 *   Messages a snapshot covers (`COVERED_BY_SNAPSHOT`: events, permission prompts, answers the
 *   reloaded page asks for again) are not kept. Other messages (host errors, notices) are kept and posted right after that
 *   snapshot, in order.
 * - Never throws; a failed post is logged and makes the view not ready until its next `ready`.
 */
export class Outbox {
  private seq = 0;
  /** Counts `open`s, so a late failure of an earlier page's post cannot close the current one. */
  private session = 0;
  private ready = false;
  private pending: ToWebviewPayload[] = [];
  private readonly post: PostMessage;
  private readonly log: Logger;
  private readonly maxPending: number;

  constructor(options: OutboxOptions) {
    this.post = options.post;
    this.log = options.log ?? silentLogger;
    this.maxPending = options.maxPending ?? 20;
  }

  /** Whether messages are posted now (the view said `ready` and has not been hidden since). */
  get isReady(): boolean {
    return this.ready;
  }

  /** The seq of the last message posted since the last `open` (0 if none). */
  get lastSeq(): number {
    return this.seq;
  }

  /** Posts `payload` now if the view is ready; otherwise buffers it unless a snapshot covers it. */
  send(payload: ToWebviewPayload): void {
    if (this.ready) {
      this.deliver(payload);
      return;
    }
    if (COVERED_BY_SNAPSHOT.has(payload.type)) return;
    this.pending.push(payload);
    if (this.pending.length > this.maxPending) this.pending.splice(0, this.pending.length - this.maxPending);
  }

  /**
   * The view (re)loaded and said `ready`: numbering restarts, `snapshot` goes out as seq 1,
   * then the buffered messages, and from now on messages are posted as they come.
   */
  open(snapshot: Omit<SnapshotMessage, 'seq'>): void {
    this.seq = 0;
    this.session += 1;
    this.ready = true;
    const pending = this.pending;
    this.pending = [];
    this.deliver(snapshot);
    for (const p of pending) this.deliver(p);
  }

  /** The view went away for now (hidden, reloading): buffer until the next `open`. */
  close(): void {
    this.ready = false;
  }

  private deliver(payload: ToWebviewPayload): void {
    if (!this.ready) {
      this.send(payload);
      return;
    }
    this.seq += 1;
    const message = { ...payload, seq: this.seq } as ToWebviewMessage;
    const sentAt = this.seq;
    const session = this.session;
    try {
      const result = this.post(message);
      if (typeof result === 'boolean') {
        if (!result) this.failed(session, sentAt, 'postMessage returned false');
      } else {
        result.then(
          (ok) => {
            if (!ok) this.failed(session, sentAt, 'postMessage returned false');
          },
          (e: unknown) => this.failed(session, sentAt, describeError(e)),
        );
      }
    } catch (e) {
      this.failed(session, sentAt, describeError(e));
    }
  }

  private failed(session: number, seq: number, why: string): void {
    if (session !== this.session || !this.ready) return;
    this.log.warn(`webview message ${seq} not delivered (${why}); waiting for the view's next ready`);
    this.ready = false;
  }
}
