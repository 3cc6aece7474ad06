import { createActor, type Actor, type ActorOptions, type AnyActorLogic, type InspectionEvent } from 'xstate';
import { deliveryOf, sessionMachine, type SessionEvent } from '../core/machines/session/session.machine';
import { taskEventHasTag } from '../core/machines/task/taskTags';
import type { EventBus } from '../core/events/eventBus';
import type { TaskHandle } from '../core/runtime/types';
import { type FromWebviewMessage, parseFromWebview } from '../shared/protocol/fromWebview';
import { errorMessage } from '../shared/domain/errors';
import { isViewEvent, type TaskEvent, type ViewTaskEvent } from '../shared/domain/events';
import { COVERED_BY_SNAPSHOT, type SnapshotMessage, type ToWebviewMessage, type ToWebviewPayload } from '../shared/protocol/toWebview';
import { type Logger, silentLogger } from './logger';

// Delivering to a chat view: this file holds the whole way a task's events and the chat's
// messages reach one page — following the shown task's events off the bus (`followTask`), the
// view's session deciding post / keep / drop (`ViewConnection`), and the numbered stream that
// survives a page reload (`Outbox`). One contract spans the three: every event reaches a loaded
// page once, in order, numbered from 1 after its snapshot; a reloaded page loses nothing a
// snapshot does not hold, and gets nothing twice that it does.

export interface TaskFollowerHandlers {
  /** One event of the task, in order (through the bus: only view events, with their `taskSeq`; compare with `eventSeq()`). */
  event(event: TaskEvent, taskSeq?: number): void;
  /** Some events were lost to a full queue: what was shown must be rebuilt from a fresh snapshot. */
  lagged(missed: number): void;
}

/**
 * Follows one task's events for the chat views. With the process's event bus (and a task that
 * numbers its events), through a queued bus subscriber of its own: the views never slow the task
 * or the bus's other subscribers, and one that falls behind is told (`lagged`) and rebuilt from a
 * snapshot; events arrive a little later than the task delivered them, so a snapshot taken
 * meanwhile may already hold some of them (`taskSeq` ≤ the task's `eventSeq()` then). Without a
 * bus, directly from the task, synchronously. Returns the function that stops following.
 */
export function followTask(task: TaskHandle, bus: EventBus | undefined, handlers: TaskFollowerHandlers, capacity?: number): () => void {
  if (!bus || !task.eventSeq) return task.subscribe((e) => handlers.event(e));
  const sub = bus.subscribe(
    (d) => {
      if (d.kind === 'Lagged') handlers.lagged(d.missed);
      else if (d.kind === 'TaskEvent' && d.taskSeq !== undefined) handlers.event(d.event, d.taskSeq);
    },
    {
      name: `chat views of ${task.id}`,
      ...(capacity !== undefined ? { capacity } : {}),
      filter: (e) => e.kind === 'TaskEvent' && e.taskId === task.id && isViewEvent(e.event),
    },
  );
  return () => sub.unsubscribe();
}

/** Where an outbox delivers numbered messages: `Webview.postMessage` in the extension. */
export type PostMessage = (message: ToWebviewMessage) => PromiseLike<boolean> | boolean;

interface OutboxOptions {
  post: PostMessage;
  log?: Logger;
  /** How many kept messages to hold for the next page (oldest dropped first). */
  maxPending?: number;
  /** A message to page `page` was not delivered (postMessage said false, threw or rejected). */
  undelivered?(page: number): void;
}

/**
 * The mechanics of one view's message stream; *when* to post, keep or drop is the view's session
 * (`ViewConnection`, below). Contract:
 * - Messages are numbered per page: `open` posts the snapshot as seq 1, then what was kept, in
 *   order; `post` numbers on (2, 3, …) in the order it was called.
 * - `keep` holds a message for the next page unless a snapshot covers it (`COVERED_BY_SNAPSHOT`:
 *   events, permission prompts, answers the reloaded page asks for again); host errors and
 *   notices are kept, the newest `maxPending`.
 * - Never throws. A failed post is logged and reported once per page (`undelivered`); what is
 *   posted to that page afterwards is kept for the next page instead.
 */
class Outbox {
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
   * One event of the shown task (as `followTask` gives it). One that arrived through a queue
   * (`taskSeq`: its number in the task) is not posted when the snapshot this view last posted
   * already holds it (it would be applied twice: a text delta repeated); otherwise it is sent like
   * any payload. Either way the session follows the task: completed when its run ends (`done`),
   * active again when it runs again (a follow-up, Retry, Resume).
   */
  sendTaskEvent(event: ViewTaskEvent, taskSeq?: number): void {
    const c = this.covered;
    const held = taskSeq !== undefined && c !== undefined && c.taskId === event.taskId && taskSeq <= c.seq;
    if (!held) this.send({ type: 'event', event });
    if (event.type === 'done') this.tell({ type: 'TASK_SETTLED' });
    else if (event.type === 'task' && taskEventHasTag(event, 'running')) this.tell({ type: 'TASK_RESUMED' });
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
