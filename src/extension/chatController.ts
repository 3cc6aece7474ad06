import { errorMessage } from '../shared/domain/errors';
import { Mutex } from 'async-mutex';
import { isViewEvent, type TaskEvent } from '../shared/domain/events';
import type { FromWebviewMessage } from '../shared/protocol/fromWebview';
import type { SnapshotMessage, ToWebviewPayload } from '../shared/protocol/toWebview';
import { taskEventHasTag } from '../core/machines/task/taskTags';
import type { TaskHandle } from '../core/runtime/types';
import type { PermissionBroker } from './permissionBroker';
import type { Page, StoredTaskState } from '../shared/protocol/chatMessages';
import { HistoryActions, isHistoryMessage } from './history/historyActions';
import { isStoredTask } from './history/storedTask';
import type { LastTask } from './history/taskHistory';
import { followTask, type ShownTask, type ViewConnection } from './viewConnection';
import { TaskWorkerWatch, type PoolView } from './taskWorker';
import type { ChatHost } from './chatHost';
import { ChatWindow, type ChatSurface } from './chatWindow';
import { RewindActions } from './rewindActions';
import type { SlashSurface } from './slashChat';
import { composeMessage } from './composerMessage';
import type { PromptImageMessage } from '../shared/protocol/fromWebview';

export type { ChatHost, TaskRuntimeLike } from './chatHost';
export { ChatWindow } from './chatWindow';

/** How a surface is placed in the window (the vscode side gives these; tests leave them out). */
export interface SurfaceOptions {
  /** `sidebar` (default) or `panel`; the key of its persisted last task. */
  id?: string;
  /** Whether the person works in this surface now (an active editor tab). */
  isActive?(): boolean;
}

/**
 * One chat surface (the sidebar, an editor tab): the task it shows, and its views, which get that
 * task's snapshot and events. Each surface has its own current task: starting or opening a task
 * in one never changes what another shows, and tasks shown in two surfaces stream in both at
 * once. What surfaces share (the runtime, prompts, history, pages) is the window's
 * (`ChatWindow`); `new ChatController(host)` makes a window of its own with this one surface.
 * Views never drive a task; they send intents that arrive here through `handle`.
 *
 * Contract: a view that says `ready` gets a snapshot of this surface's task (with its pending
 * permission prompts), then that task's events in order; switching task (new task, history)
 * sends every view of this surface a new snapshot. Hiding or closing a view never stops a task.
 * Never throws from `handle`; failures become host errors shown in this surface's views.
 */
export class ChatController implements ChatSurface {
  readonly id: string;
  readonly window: ChatWindow;
  private readonly views = new Set<ViewConnection>();
  private current: TaskHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Serializes prompts so two quick sends cannot start two tasks. */
  private readonly promptLock = new Mutex();
  private closed = false;
  private readonly ownsWindow: boolean;
  private readonly unregister: () => void;
  private readonly history: HistoryActions;
  /** "Rewind to here" on this surface's task: preview, diffs, apply. */
  private readonly rewinds: RewindActions;
  private readonly lastTask: LastTask;
  /** Set while the current task is shown from the store (read-only until resumed). */
  private stored: StoredTaskState | undefined;
  /** The shown task's worker, for the header (workers on). */
  private readonly worker = new TaskWorkerWatch((taskId, worker) => {
    if (taskId === this.current?.id) this.broadcast({ type: 'taskWorker', taskId, worker });
  });

  constructor(
    hostOrWindow: ChatHost | ChatWindow,
    private readonly options: SurfaceOptions = {},
  ) {
    this.ownsWindow = !(hostOrWindow instanceof ChatWindow);
    this.window = hostOrWindow instanceof ChatWindow ? hostOrWindow : new ChatWindow(hostOrWindow);
    this.id = options.id ?? 'sidebar';
    const services = this.window.historyServices;
    this.lastTask = this.id === 'sidebar' ? services.lastTask : (services.lastTaskOf?.(this.id) ?? { get: () => undefined, set: () => undefined });
    this.history = new HistoryActions(
      {
        log: this.host.log,
        current: () => this.current,
        show: (task, stored) => this.show(task, stored),
        track: (task) => this.window.track(task, task.transcript().model),
        broadcast: (payload) => this.broadcast(payload),
        deleted: (id) => this.window.taskDeleted(id),
      },
      this.window.history,
    );
    this.rewinds = new RewindActions({
      log: this.host.log,
      current: () => this.current,
      runtime: () => this.window.loadedRuntime,
      workbench: this.host.workbench,
      broadcast: (payload) => this.broadcast(payload),
      reopen: (id) => this.history.open(id),
    });
    this.unregister = this.window.register(this);
  }

  private get host(): ChatHost {
    return this.window.host;
  }

  private get disposed(): boolean {
    return this.closed || this.window.disposed;
  }

  /** The window's permission prompts (shared by every surface). */
  get permissions(): PermissionBroker {
    return this.window.permissions;
  }

  /**
   * Connects a view: from now on its session follows the task this surface shows (each view gets
   * that task's snapshot when its page says ready). Returns the function that removes it.
   */
  attach(view: ViewConnection): () => void {
    this.views.add(view);
    this.host.log.debug(`view ${view.id} (${view.kind}) attached to the ${this.id} chat`);
    view.connect({ snapshot: () => this.snapshot(), coverage: () => this.coverage(), readinessChanged: () => this.viewsChanged() }, this.shown());
    return () => {
      this.views.delete(view);
      this.host.log.debug(`view ${view.id} detached`);
      this.viewsChanged();
    };
  }

  /** A view was hidden, lost its page or was closed: prompts nobody can see also go to a notification. */
  viewsChanged(): void {
    this.window.permissions.viewsChanged();
  }

  isVisible(): boolean {
    return [...this.views].some((v) => v.isReady);
  }

  isActive(): boolean {
    return this.options.isActive?.() ?? false;
  }

  /** Shows the chat page and puts the focus in its message box (Keel: Focus Chat). */
  focusComposer(): void {
    this.broadcast({ type: 'focusComposer' });
  }

  shownTaskId(): string | undefined {
    return this.current?.id;
  }

  shownTask(): TaskHandle | undefined {
    return this.current;
  }

  watchPool(pool: PoolView | null): void {
    this.worker.watch(pool);
  }

  /** Acts on a validated message from `view`. Never throws. */
  async handle(view: ViewConnection, message: FromWebviewMessage): Promise<void> {
    try {
      switch (message.type) {
        case 'ready':
          this.host.log.debug(`view ${view.id} ready (lastSeq ${message.lastSeq ?? 'none'})`);
          view.ready();
          if (!this.current) void this.history.restoreLast(this.lastTask.get());
          return;
        case 'prompt':
          await this.prompt(message.text, message.images);
          return;
        case 'withdrawQueued':
          this.current?.withdrawQueued(message.id);
          return;
        case 'newTask':
          this.newTask();
          return;
        case 'cancel':
          this.cancel();
          return;
        case 'retry':
          this.retry();
          return;
        case 'permissionAnswer': {
          const r = this.permissions.answer(message.requestId, message.decision, message.feedback, message.always, message.review?.choices);
          if (r !== true) {
            view.send({ type: 'notice', message: r.message });
            // A refused "Always allow" rule: the card was removed optimistically; show it again.
            const still = this.permissions.list().find((p) => p.requestId === message.requestId);
            if (still) view.send({ type: 'permissionRequest', request: still });
          }
          return;
        }
        case 'setMode':
          this.window.setMode(message.mode);
          this.current?.setMode(message.mode);
          return;
        case 'openSubtask':
          this.openSubtask(view, message.toolCallId);
          return;
        case 'rewindPreview':
          await this.rewinds.preview(message.stepId);
          return;
        case 'rewindOpenDiff':
          await this.rewinds.openDiff(message.previewId, message.path);
          return;
        case 'rewindApply':
          await this.rewinds.apply(message.previewId, message.scope, message.overwrite);
          return;
        case 'rewindCancel':
          this.rewinds.cancel(message.previewId);
          return;
        default:
          if (isHistoryMessage(message)) await this.history.handle(view, message);
          else await this.window.handleShared(view, message);
      }
    } catch (e) {
      this.host.log.error(`handling ${message.type} from view ${view.id} failed: ${errorMessage(e)}`);
      this.broadcastError(`Keel: ${errorMessage(e)}`);
    }
  }

  /**
   * Starts a task with `text` when this surface shows none, otherwise sends it to the shown task
   * as a follow-up (the task decides whether it can take one now).
   */
  async prompt(typed: string, attached: readonly PromptImageMessage[] = []): Promise<void> {
    await this.promptLock.runExclusive(async () => {
      if (this.disposed) return;
      const message = await composeMessage(typed, attached, {
        runtime: () => this.window.ensureRuntime(),
        mode: () => this.window.permissionMode(),
        mentions: this.host.mentions,
        commands: this.host.commands,
        mcp: this.host.mcp,
        surface: this.slashSurface(),
        error: (m) => this.broadcastError(m),
        closed: () => this.disposed,
      });
      if (message.kind === 'nothing') return;
      const { text, extras } = message;
      if (isStoredTask(this.current)) {
        await this.history.followUp(text, extras);
        return;
      }
      if (this.current?.transcript().state === 'interrupted') {
        // Interrupted here (its worker died): its handle is stopped, so the message resumes the
        // task from its log, as for a stored one.
        try {
          await this.history.resume(this.current.id, text, extras);
        } catch (e) {
          this.broadcastError(`Keel could not resume the task: ${errorMessage(e)}`);
        }
        return;
      }
      if (this.current) {
        // While a run is under way the task queues it (shown as pending, cancellable) until the run ends.
        this.current.sendUserMessage(text, extras);
        return;
      }
      try {
        await this.window.startTask(this, text, extras);
      } catch (e) {
        this.host.log.error(`cannot start a task: ${errorMessage(e)}`);
        this.broadcastError(`Keel could not start the task: ${errorMessage(e)}`);
      }
    });
  }

  /** What a built-in slash command may do to this chat. */
  private slashSurface(): SlashSurface {
    return {
      current: () => (isStoredTask(this.current) ? undefined : this.current),
      newTask: () => this.newTask(),
      setMode: (mode) => {
        this.window.setMode(mode);
        this.current?.setMode(mode);
        this.refresh();
      },
      mode: () => this.window.permissionMode(),
      notice: (message) => this.broadcast({ type: 'notice', message }),
      ...(this.host.selectModel ? { selectModel: () => this.host.selectModel?.() } : {}),
    };
  }

  /** Shows `task` here, live (a loop's iteration); undefined: the empty chat. */
  showLive(task: TaskHandle | undefined): void {
    this.show(task);
  }

  /** Closes the current task in this surface (it keeps running) and shows the empty state, on the chat page. */
  newTask(): void {
    this.navigate('chat');
    this.show(undefined);
  }

  /** Shows task `id` in this surface's views. Returns false if this window has no such task. */
  showTask(id: string): boolean {
    const task = this.window.loadedRuntime?.get(id);
    if (!task) return false;
    this.window.book.unhide(id);
    this.show(task);
    return true;
  }

  /**
   * Shows task `id` here: live in this window, else from the store (read-only, with Resume — e.g.
   * a task whose worker died). Resolves false when neither has it; never rejects.
   */
  async openTask(id: string): Promise<boolean> {
    if (this.showTask(id)) return true;
    try {
      await this.history.open(id);
      return true;
    } catch (e) {
      this.host.log.info(`task ${id} cannot be shown: ${errorMessage(e)}`);
      return false;
    }
  }

  /** Asks this surface's views to show `page` (e.g. history); the loop page selects loop `loop` when given. */
  navigate(page: Page, loop?: string): void {
    this.broadcast({ type: 'navigate', page, ...(page === 'loop' && loop ? { loop } : {}) });
  }

  cancel(): void {
    this.current?.cancel();
  }

  retry(): void {
    this.current?.retry();
  }

  /** Sends this surface's views a fresh snapshot (after a settings, mode or key change). */
  refresh(): void {
    this.broadcast(this.snapshot());
  }

  historyChanged(): Promise<void> {
    return this.history.refreshList();
  }

  /**
   * This surface is gone (its tab closed). Its task keeps running. A controller that made its own
   * window (`new ChatController(host)`) also closes the window: every task is stopped, one that
   * had not settled is recorded as interrupted, prompts are denied.
   */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.current = undefined;
    this.worker.dispose();
    this.views.clear();
    this.unregister();
    if (this.ownsWindow) this.window.dispose();
  }

  private openSubtask(view: ViewConnection, toolCallId: string): void {
    const runtime = this.window.loadedRuntime;
    const parent = this.current;
    if (runtime && parent) {
      const child = runtime.subtaskFor(parent.id, toolCallId);
      if (child) {
        this.window.book.track(child, child.transcript().model);
        this.show(child);
        return;
      }
    }
    view.send({ type: 'notice', message: 'That subtask cannot be shown yet.' });
  }

  /** Switches the shown task: subscribes to its future events, then snapshots it to this surface's views. */
  private show(task: TaskHandle | undefined, stored?: StoredTaskState): void {
    if (this.closed) return;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.current = task;
    this.stored = task ? stored : undefined;
    this.lastTask.set(task?.id);
    this.worker.follow(task?.id);
    if (task) {
      this.unsubscribe = followTask(
        task,
        this.window.loadedRuntime?.bus,
        {
          event: (event, taskSeq) => this.onTaskEvent(task, event, taskSeq),
          // Events were lost to the views' full queue: every view is rebuilt from a fresh snapshot.
          lagged: (missed) => {
            if (task !== this.current) return;
            this.host.log.warn(`the ${this.id} chat's views fell ${missed} events behind task ${task.id}; sending a fresh snapshot`);
            this.refresh();
          },
        },
        this.host.viewQueueCapacity,
      );
    }
    const shown = this.shown();
    for (const v of this.views) v.show(shown);
    this.window.shownChanged();
  }

  /** What the views show: the current task and whether it has settled (a stored one is not running). */
  private shown(): ShownTask {
    const t = this.current;
    return t ? { taskId: t.id, settled: this.stored !== undefined || t.transcript().done } : null;
  }

  private onTaskEvent(task: TaskHandle, event: TaskEvent, taskSeq?: number): void {
    if (task !== this.current) return;
    if (event.type === 'error') this.host.log.warn(`task ${task.id}: ${event.code}: ${event.message}`);
    if (event.type === 'done') this.host.log.info(`task ${task.id} done: ${event.status} (${event.stopReason ?? 'no stop reason'})`);
    // Each view skips what the snapshot it last got already holds, and its session follows the task.
    if (isViewEvent(event)) for (const v of this.views) v.sendTaskEvent(event, taskSeq);
    // Paused at its budget: the header says so; the person is offered to raise it, which continues the task.
    if (event.type === 'task' && taskEventHasTag(event, 'budgetReached') && this.host.raiseBudget && task.setBudget) {
      const budget = task.transcript().budget ?? { capUsd: null, spentUsd: 0 };
      void this.host.raiseBudget(budget).then((capUsd) => {
        if (capUsd !== null) task.setBudget?.(capUsd);
      });
    }
  }

  /** What a snapshot taken now holds of the shown task's events (when they come through the bus). */
  private coverage(): { taskId: string; seq: number } | undefined {
    const t = this.current;
    return t?.eventSeq ? { taskId: t.id, seq: t.eventSeq() } : undefined;
  }

  private snapshot(): Omit<SnapshotMessage, 'seq'> {
    const t = this.current;
    const worker = t ? this.worker.current() : null;
    return {
      type: 'snapshot',
      transcript: t?.transcript() ?? null,
      config: { ...this.host.chatConfig(this.window.permissionMode()), mode: this.window.permissionMode() },
      permissions: this.window.cardsFor(this),
      ...(t ? { meta: this.window.book.meta(t.id) } : {}),
      ...(t && this.stored ? { stored: this.stored } : {}),
      ...(worker ? { worker } : {}),
    };
  }

  private broadcastError(message: string): void {
    this.broadcast({ type: 'error', message });
  }

  broadcast(payload: ToWebviewPayload): void {
    for (const v of this.views) v.send(payload);
  }
}
