import { createActor, type Actor, type ActorOptions, type AnyActorLogic, type InspectionEvent } from 'xstate';
import { deliveryOf, sessionMachine, type SessionEvent } from '../core/machines/session/session.machine';
import { type FromWebviewMessage, parseFromWebview } from '../shared/protocol/fromWebview';
import type { ViewTaskEvent } from '../shared/domain/events';
import type { SnapshotMessage, ToWebviewPayload } from '../shared/protocol/toWebview';
import type { Logger } from './logger';
import { Outbox, type PostMessage } from './outbox';

/** Where a view lives. */
export type ViewKind = 'sidebar' | 'panel';

/** What a view shows: a task (and whether it has settled), or nothing. */
export type ShownTask = { taskId: string; settled: boolean } | null;

/** The events of a task a snapshot holds: its first `seq` events (see `TaskHandle.eventSeq`). */
export interface SnapshotCoverage {
  taskId: string;
  seq: number;
}

/** What a view needs from the chat it is connected to. */
export interface ViewSource {
  /** The snapshot a page gets now: the task the chat shows, its prompts, the configuration. */
  snapshot(): Omit<SnapshotMessage, 'seq'>;
  /**
   * What a snapshot taken now holds of the shown task's events (read together with `snapshot`),
   * when its events reach the view late, through a queue (`sendTaskEvent` skips those it holds).
   */
  coverage?(): SnapshotCoverage | undefined;
  /** Whether this view can show messages now changed (hidden, back, its page lost). */
  readinessChanged(): void;
}

export interface ViewConnectionOptions {
  /** How long a hidden view keeps messages a snapshot does not cover (default: the machine's 30 min). */
  idleTimeoutMs?: number;
  /** How many such messages it keeps (default 20). */
  maxPending?: number;
  /** Watches the session actor (tests, coverage). */
  inspect?: (event: InspectionEvent) => void;
  /** Sets the idle timer (tests: xstate's SimulatedClock). */
  clock?: ActorOptions<AnyActorLogic>['clock'];
}

/**
 * One chat view (the sidebar view or an editor tab): a session-machine actor that follows the
 * view's page (ready, hidden, a lost page), which task it shows (attach, detach, the task settling
 * or running again) and its disposal, and that decides what happens to each message for the view:
 * posted now, kept for the next page, or dropped (see `sessionMachine`). Free of 'vscode' so it can
 * be tested; the vscode-side host forwards `postMessage`, visibility and incoming messages to it.
 *
 * Contract: nothing here reaches the task a view shows: navigation only pauses the session.
 * Every call is ignored after `dispose`.
 */
export class ViewConnection {
  private readonly session: Actor<typeof sessionMachine>;
  private readonly outbox: Outbox;
  private source: ViewSource | undefined;
  private wasReady = false;
  private lastState = 'new';
  /** What the last snapshot this view posted holds of its task's events. */
  private covered: SnapshotCoverage | undefined;

  constructor(
    readonly id: string,
    readonly kind: ViewKind,
    post: PostMessage,
    private readonly log: Logger,
    options: ViewConnectionOptions = {},
  ) {
    this.outbox = new Outbox({
      post,
      log,
      ...(options.maxPending !== undefined ? { maxPending: options.maxPending } : {}),
      undelivered: (page) => this.tell({ type: 'UNDELIVERED', page }),
    });
    const machine = sessionMachine.provide({
      actions: {
        openPage: ({ context }) => this.outbox.open(context.pages, this.snapshot()),
        sendSnapshot: () => this.outbox.post(this.snapshot()),
        dropBuffered: () => this.outbox.drop(),
      },
      ...(options.idleTimeoutMs !== undefined ? { delays: { idleTimeout: options.idleTimeoutMs } } : {}),
    });
    this.session = createActor(machine, { input: { viewId: id }, ...(options.inspect ? { inspect: options.inspect } : {}), ...(options.clock ? { clock: options.clock } : {}) });
    this.session.subscribe(() => {
      const state = this.state;
      if (state !== this.lastState) this.log.debug(`view ${id}: ${this.lastState} → ${state}`);
      this.lastState = state;
      if (this.isReady !== this.wasReady) {
        this.wasReady = this.isReady;
        this.source?.readinessChanged();
      }
    });
    this.session.start();
  }

  /** The session's state: new, active, completed, inactive, paused, timeout or destroyed. */
  get state(): string {
    const s = this.session.getSnapshot();
    return s.status === 'done' ? 'destroyed' : String(s.value);
  }

  /** Whether messages are posted now (the page is loaded and the view not hidden). */
  get isReady(): boolean {
    return deliveryOf(this.state) === 'post';
  }

  get isDisposed(): boolean {
    return this.session.getSnapshot().status !== 'active';
  }

  /** Connects the view to the chat, which shows `shown`. */
  connect(source: ViewSource, shown: ShownTask): void {
    this.source = source;
    this.show(shown);
  }

  /**
   * Validates a raw message from the webview. Returns it when valid; logs and returns undefined
   * when not (an invalid message never reaches the controller).
   */
  receive(data: unknown): FromWebviewMessage | undefined {
    if (this.isDisposed) return undefined;
    const parsed = parseFromWebview(data);
    if (!parsed.ok) {
      this.log.warn(`view ${this.id}: dropped an invalid message: ${parsed.error}`);
      return undefined;
    }
    return parsed.message;
  }

  /** Posts now, keeps for the next page, or drops, as the session's state says. */
  send(payload: ToWebviewPayload): void {
    switch (deliveryOf(this.state)) {
      case 'post':
        if (payload.type === 'snapshot') this.covered = this.source?.coverage?.();
        this.outbox.post(payload);
        return;
      case 'keep':
        this.outbox.keep(payload);
        return;
      case 'drop':
        return;
    }
  }

  /**
   * One event of the shown task that arrived through a queue: `taskSeq` is its number in the task.
   * Skipped when the snapshot this view last posted already holds it (it would be applied twice:
   * a text delta repeated); otherwise sent like any payload.
   */
  sendTaskEvent(event: ViewTaskEvent, taskSeq: number): void {
    const c = this.covered;
    if (c && c.taskId === event.taskId && taskSeq <= c.seq) return;
    this.send({ type: 'event', event });
  }

  /** The page said `ready`: a new page gets the snapshot (seq 1), then what was kept. */
  ready(): void {
    if (!this.source) {
      this.log.warn(`view ${this.id} said ready before it was connected to the chat`);
      return;
    }
    this.tell({ type: 'READY' });
  }

  /** The view was hidden: its page is destroyed (no retainContextWhenHidden); showing it again reloads it, which says ready. */
  setVisible(visible: boolean): void {
    if (!visible) this.tell({ type: 'HIDE' });
  }

  /** The chat shows `shown` from now on (a loaded page gets its snapshot). */
  show(shown: ShownTask): void {
    this.tell(shown ? { type: 'ATTACH', taskId: shown.taskId, settled: shown.settled } : { type: 'DETACH' });
  }

  /** The task shown ended its run (it waits for the user or is done). */
  taskSettled(): void {
    this.tell({ type: 'TASK_SETTLED' });
  }

  /** The task shown runs again (a follow-up, Retry, Resume). */
  taskResumed(): void {
    this.tell({ type: 'TASK_RESUMED' });
  }

  dispose(): void {
    if (this.isDisposed) return;
    this.session.send({ type: 'DISPOSE' });
    this.session.stop();
  }

  /** Late callbacks of a closed view (a post that fails after dispose) change nothing. */
  private tell(event: SessionEvent): void {
    if (!this.isDisposed) this.session.send(event);
  }

  private snapshot(): Omit<SnapshotMessage, 'seq'> {
    if (!this.source) throw new Error(`view ${this.id} is not connected to a chat`);
    const snapshot = this.source.snapshot();
    this.covered = this.source.coverage?.();
    return snapshot;
  }
}
