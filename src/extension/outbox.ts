import { errorMessage } from '../shared/domain/errors';
import { COVERED_BY_SNAPSHOT, type SnapshotMessage, type ToWebviewMessage, type ToWebviewPayload } from '../shared/protocol/toWebview';
import { type Logger, silentLogger } from './logger';

/** Where an outbox delivers numbered messages: `Webview.postMessage` in the extension. */
export type PostMessage = (message: ToWebviewMessage) => PromiseLike<boolean> | boolean;

export interface OutboxOptions {
  post: PostMessage;
  log?: Logger;
  /** How many kept messages to hold for the next page (oldest dropped first). */
  maxPending?: number;
  /** A message to page `page` was not delivered (postMessage said false, threw or rejected). */
  undelivered?(page: number): void;
}

/**
 * The mechanics of one view's message stream; *when* to post, keep or drop is the view's session
 * (see viewConnection.ts). Contract:
 * - Messages are numbered per page: `open` posts the snapshot as seq 1, then what was kept, in
 *   order; `post` numbers on (2, 3, …) in the order it was called.
 * - `keep` holds a message for the next page unless a snapshot covers it (`COVERED_BY_SNAPSHOT`:
 *   events, permission prompts, answers the reloaded page asks for again); host errors and
 *   notices are kept, the newest `maxPending`.
 * - Never throws. A failed post is logged and reported once per page (`undelivered`); what is
 *   posted to that page afterwards is kept for the next page instead.
 */
export class Outbox {
  private seq = 0;
  private page = 0;
  /** The page a post failed on: it gets nothing more. */
  private broken = -1;
  private pending: ToWebviewPayload[] = [];
  private readonly options: OutboxOptions;
  private readonly log: Logger;
  private readonly maxPending: number;

  constructor(options: OutboxOptions) {
    this.options = options;
    this.log = options.log ?? silentLogger;
    this.maxPending = options.maxPending ?? 20;
  }

  /** The seq of the last message posted to the current page (0 if none). */
  get lastSeq(): number {
    return this.seq;
  }

  /** How many messages wait for the next page. */
  get kept(): number {
    return this.pending.length;
  }

  /** Page `page` loaded: numbering restarts, `snapshot` goes out as seq 1, then what was kept. */
  open(page: number, snapshot: Omit<SnapshotMessage, 'seq'>): void {
    this.page = page;
    this.seq = 0;
    const pending = this.pending;
    this.pending = [];
    this.post(snapshot);
    for (const p of pending) this.post(p);
  }

  /** Posts `payload` to the current page, numbered; kept instead if that page already failed a post. */
  post(payload: ToWebviewPayload): void {
    if (this.broken === this.page) {
      this.keep(payload);
      return;
    }
    this.seq += 1;
    const message = { ...payload, seq: this.seq } as ToWebviewMessage;
    const sentAt = this.seq;
    const page = this.page;
    try {
      const result = this.options.post(message);
      if (typeof result === 'boolean') {
        if (!result) this.failed(page, sentAt, 'postMessage returned false');
      } else {
        result.then(
          (ok) => {
            if (!ok) this.failed(page, sentAt, 'postMessage returned false');
          },
          (e: unknown) => this.failed(page, sentAt, errorMessage(e)),
        );
      }
    } catch (e) {
      this.failed(page, sentAt, errorMessage(e));
    }
  }

  /** Holds `payload` for the next page, unless its snapshot will cover it. */
  keep(payload: ToWebviewPayload): void {
    if (COVERED_BY_SNAPSHOT.has(payload.type)) return;
    this.pending.push(payload);
    if (this.pending.length > this.maxPending) this.pending.splice(0, this.pending.length - this.maxPending);
  }

  /** Forgets what was kept (the next page's snapshot is all it gets). */
  drop(): void {
    this.pending = [];
  }

  private failed(page: number, seq: number, why: string): void {
    // A late failure from an earlier page changes nothing: that page is gone anyway.
    if (page !== this.page || this.broken === page) return;
    this.broken = page;
    this.log.warn(`webview message ${seq} not delivered (${why}); waiting for the view's next ready`);
    this.options.undelivered?.(page);
  }
}
