import { type FromWebviewMessage, parseFromWebview } from '../shared/protocol/fromWebview';
import type { SnapshotMessage, ToWebviewPayload } from '../shared/protocol/toWebview';
import type { Logger } from './logger';
import { Outbox, type PostMessage } from './outbox';

/** Where a view lives; a later session machine may use it to tell views apart. */
export type ViewKind = 'sidebar' | 'panel';

/**
 * One chat view (the sidebar view or an editor tab) attached to the chat controller: its outbox
 * and the validation of what it sends. Free of 'vscode' so it can be tested; the vscode-side
 * host forwards `postMessage`, visibility and incoming messages to it.
 */
export class ViewConnection {
  private readonly outbox: Outbox;
  private disposed = false;

  constructor(
    readonly id: string,
    readonly kind: ViewKind,
    post: PostMessage,
    private readonly log: Logger,
  ) {
    this.outbox = new Outbox({ post, log });
  }

  get isReady(): boolean {
    return this.outbox.isReady;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /**
   * Validates a raw message from the webview. Returns it when valid; logs and returns undefined
   * when not (an invalid message never reaches the controller).
   */
  receive(data: unknown): FromWebviewMessage | undefined {
    if (this.disposed) return undefined;
    const parsed = parseFromWebview(data);
    if (!parsed.ok) {
      this.log.warn(`view ${this.id}: dropped an invalid message: ${parsed.error}`);
      return undefined;
    }
    return parsed.message;
  }

  /** Posts now or buffers (see Outbox). Ignored after dispose. */
  send(payload: ToWebviewPayload): void {
    if (!this.disposed) this.outbox.send(payload);
  }

  /** Answers the view's `ready`: numbering restarts with this snapshot. */
  open(snapshot: Omit<SnapshotMessage, 'seq'>): void {
    if (!this.disposed) this.outbox.open(snapshot);
  }

  /** The view is hidden: its page is destroyed (no retainContextWhenHidden), so buffer until it reloads. */
  setVisible(visible: boolean): void {
    if (!visible) this.outbox.close();
  }

  dispose(): void {
    this.disposed = true;
    this.outbox.close();
  }
}
