import { Mutex } from 'async-mutex';
import { isViewEvent, type TaskEvent } from '../shared/domain/events';
import type { PermissionMode } from '../core/runtime/types';
import type { FromWebviewMessage } from '../shared/protocol/fromWebview';
import type { ChatConfig, SnapshotMessage, ToWebviewPayload } from '../shared/protocol/toWebview';
import type { PermissionAsker } from '../core/permissions/gate';
import type { ProviderConfig } from '../core/providers/types';
import type { StartTaskOptions, TaskHandle } from '../core/runtime/types';
import { type Logger, describeError } from './logger';
import { PermissionBroker, type NotificationPrompt } from './permissionBroker';
import { TaskBook } from './taskBook';
import type { ViewConnection } from './viewConnection';
import { ViewRequests, type WorkbenchServices } from './viewRequests';

/** The part of the core's TaskRuntime the chat uses (the real class satisfies it structurally). */
export interface TaskRuntimeLike {
  startTask(options: StartTaskOptions): TaskHandle;
  get(id: string): TaskHandle | undefined;
  list(): TaskHandle[];
  dispose(): void;
}

/** What the controller needs from its host (VS Code in the extension, fakes in tests). */
export interface ChatHost {
  readonly log: Logger;
  /**
   * Creates the runtime on first use, asking permissions through `asker`; may reject (e.g. no
   * folder open). Called at most once per success.
   */
  loadRuntime(asker: PermissionAsker): Promise<TaskRuntimeLike>;
  /** The provider settings with the key, read when a task starts. */
  providerConfig(): Promise<ProviderConfig>;
  /** What views show about the configuration (never a key). */
  chatConfig(): ChatConfig;
  permissionMode(): PermissionMode;
  /** Opens a URL outside VS Code. */
  openExternal(href: string): Promise<unknown>;
  /** A modal question; resolves true when the user confirms. */
  confirm(message: string, detail: string): Promise<boolean>;
  /** A warning the user sees (a notification). */
  warn(message: string): void;
  /** The notification prompt for a permission request (shown when no chat view is visible). */
  notifyPermission: NotificationPrompt;
  /** Files, diffs, clipboard and settings. */
  workbench: WorkbenchServices;
}

/** Optional abilities of a task the core may add; used when present. */
interface ModalTask {
  setMode(mode: PermissionMode): void;
}
interface ResumableTask {
  resume(): void;
}
function hasMethod<K extends string>(o: object, key: K): o is Record<K, (...args: never[]) => unknown> {
  return typeof (o as Record<string, unknown>)[key] === 'function';
}

/**
 * One per window: owns the runtime (created lazily on the first prompt), which task the chat
 * shows, the permission prompts, and fans the shown task's events out to every attached view.
 * Views never drive a task; they send intents that arrive here through `handle`.
 *
 * Contract: a view that says `ready` gets a snapshot of the current task (with its pending
 * permission prompts), then that task's events in order; switching task (new task, history)
 * sends every view a new snapshot. Hiding or closing a view never stops a task. Never throws
 * from `handle`; failures become host errors shown in the views.
 */
export class ChatController {
  private readonly views = new Set<ViewConnection>();
  private current: TaskHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private runtime: TaskRuntimeLike | undefined;
  private runtimeLoading: Promise<TaskRuntimeLike> | undefined;
  /** Serializes prompts so two quick sends cannot start two tasks. */
  private readonly promptLock = new Mutex();
  private disposed = false;
  private modeOverride: PermissionMode | undefined;
  readonly permissions: PermissionBroker;
  private readonly book: TaskBook;
  private readonly requests: ViewRequests;

  constructor(private readonly host: ChatHost) {
    this.permissions = new PermissionBroker({
      log: host.log,
      notify: host.notifyPermission,
      hasVisibleView: () => [...this.views].some((v) => v.isReady),
    });
    this.permissions.listen({
      requested: (request) => this.broadcast({ type: 'permissionRequest', request }),
      resolved: (requestId, decision, source) => this.broadcast({ type: 'permissionResolved', requestId, decision, source }),
    });
    this.book = new TaskBook((taskId, messageId, ms) => {
      if (taskId === this.current?.id) this.broadcast({ type: 'thinkingTime', messageId, ms });
    });
    this.requests = new ViewRequests({
      log: host.log,
      workbench: host.workbench,
      openExternal: (href) => host.openExternal(href),
      confirm: (m, d) => host.confirm(m, d),
      warn: (m) => host.warn(m),
      diffSource: (toolCallId) => this.permissions.diffFor(toolCallId) ?? this.toolItem(toolCallId),
      settingsChanged: () => this.refresh(),
    });
  }

  /** Adds a view; returns the function that removes it. */
  attach(view: ViewConnection): () => void {
    this.views.add(view);
    this.host.log.debug(`view ${view.id} (${view.kind}) attached`);
    return () => {
      this.views.delete(view);
      this.host.log.debug(`view ${view.id} detached`);
      this.viewsChanged();
    };
  }

  /** A view became hidden or was closed: prompts nobody can see also go to a notification. */
  viewsChanged(): void {
    if (![...this.views].some((v) => v.isReady)) this.permissions.viewsGone();
  }

  /** The task the chat shows, if any. */
  get currentTask(): TaskHandle | undefined {
    return this.current;
  }

  /** This window's tasks, newest last (empty before the runtime exists). */
  tasks(): TaskHandle[] {
    return this.runtime?.list() ?? [];
  }

  /** The mode the next task or message uses: the chat's selector, else the setting. */
  permissionMode(): PermissionMode {
    return this.modeOverride ?? this.host.permissionMode();
  }

  /** Acts on a validated message from `view`. Never throws. */
  async handle(view: ViewConnection, message: FromWebviewMessage): Promise<void> {
    try {
      switch (message.type) {
        case 'ready':
          this.host.log.debug(`view ${view.id} ready (lastSeq ${message.lastSeq ?? 'none'})`);
          view.open(this.snapshot());
          return;
        case 'prompt':
          await this.prompt(message.text);
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
        case 'resume':
          this.resume(view);
          return;
        case 'permissionAnswer':
          if (!this.permissions.answer(message.requestId, message.decision, message.feedback)) {
            view.send({ type: 'notice', message: 'That permission request was already answered.' });
          }
          return;
        case 'setMode':
          this.setMode(message.mode);
          return;
        case 'listTasks':
          view.send({ type: 'taskList', tasks: this.book.summaries(this.tasks(), this.current?.id) });
          return;
        case 'openTask':
          if (!this.showTask(message.taskId)) view.send({ type: 'notice', message: 'That task is no longer available.' });
          return;
        case 'deleteTask':
          this.book.hide(message.taskId);
          if (this.current?.id === message.taskId) this.show(undefined);
          this.broadcast({ type: 'taskList', tasks: this.book.summaries(this.tasks(), this.current?.id) });
          return;
        case 'openSubtask':
          this.openSubtask(view, message.toolCallId);
          return;
        default:
          await this.requests.handle(view, message);
      }
    } catch (e) {
      this.host.log.error(`handling ${message.type} from view ${view.id} failed: ${describeError(e)}`);
      this.broadcastError(`Keel: ${describeError(e)}`);
    }
  }

  /**
   * Starts a task with `text` when none is open, otherwise sends it to the open task as a
   * follow-up (the task decides whether it can take one now).
   */
  async prompt(text: string): Promise<void> {
    await this.promptLock.runExclusive(async () => {
      if (this.disposed) return;
      if (this.current) {
        this.current.sendUserMessage(text);
        return;
      }
      let runtime: TaskRuntimeLike;
      let provider: ProviderConfig;
      try {
        runtime = await this.ensureRuntime();
        provider = await this.host.providerConfig();
      } catch (e) {
        this.host.log.error(`cannot start a task: ${describeError(e)}`);
        this.broadcastError(`Keel could not start the task: ${describeError(e)}`);
        return;
      }
      if (this.disposed) return;
      const mode = this.permissionMode();
      const task = runtime.startTask({ prompt: text, provider, mode, refreshProvider: () => this.host.providerConfig() });
      this.book.track(task, provider.model);
      this.host.log.info(`task ${task.id} started (provider ${provider.provider}, model ${provider.model || 'default'}, mode ${mode})`);
      this.show(task);
    });
  }

  /** Closes the current task in the chat (it keeps running) and shows the empty state. */
  newTask(): void {
    this.show(undefined);
  }

  /** Shows task `id` in every view. Returns false if this window has no such task. */
  showTask(id: string): boolean {
    const task = this.runtime?.get(id);
    if (!task) return false;
    this.book.unhide(id);
    this.show(task);
    return true;
  }

  /** Asks every view to show `page` (e.g. history). */
  navigate(page: 'chat' | 'history' | 'settings'): void {
    this.broadcast({ type: 'navigate', page });
  }

  cancel(): void {
    this.current?.cancel();
  }

  retry(): void {
    this.current?.retry();
  }

  /** Sends every view a fresh snapshot (after a settings, mode or key change). */
  refresh(): void {
    this.broadcast(this.snapshot());
  }

  dispose(): void {
    this.disposed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.current = undefined;
    this.permissions.dispose();
    this.requests.dispose();
    this.book.dispose();
    this.views.clear();
    this.runtime?.dispose();
    this.runtime = undefined;
  }

  private setMode(mode: PermissionMode): void {
    this.modeOverride = mode;
    const task = this.current;
    if (task && hasMethod<keyof ModalTask>(task, 'setMode')) (task as unknown as ModalTask).setMode(mode);
    this.host.log.info(`permission mode for the next task or message: ${mode}`);
    this.refresh();
  }

  private resume(view: ViewConnection): void {
    const task = this.current;
    if (task && hasMethod<keyof ResumableTask>(task, 'resume')) {
      (task as unknown as ResumableTask).resume();
      return;
    }
    view.send({ type: 'notice', message: 'Resuming an interrupted task is not available yet in this version.' });
  }

  private openSubtask(view: ViewConnection, toolCallId: string): void {
    const runtime = this.runtime;
    const parent = this.current;
    if (runtime && parent && hasMethod(runtime, 'subtaskFor')) {
      const child = (runtime as unknown as { subtaskFor(parentId: string, toolCallId: string): TaskHandle | undefined }).subtaskFor(parent.id, toolCallId);
      if (child) {
        this.book.track(child, child.transcript().model);
        this.show(child);
        return;
      }
    }
    view.send({ type: 'notice', message: 'That subtask cannot be shown yet.' });
  }

  private toolItem(toolCallId: string) {
    const items = this.current?.transcript().items ?? [];
    for (let i = items.length - 1; i >= 0; i--) {
      const it = items[i]!;
      if (it.kind === 'tool' && it.id === toolCallId) return it;
    }
    return undefined;
  }

  private ensureRuntime(): Promise<TaskRuntimeLike> {
    if (this.runtime) return Promise.resolve(this.runtime);
    if (!this.runtimeLoading) {
      this.runtimeLoading = this.host.loadRuntime(this.permissions).then(
        (r) => {
          this.runtime = r;
          this.runtimeLoading = undefined;
          return r;
        },
        (e: unknown) => {
          this.runtimeLoading = undefined;
          throw e;
        },
      );
    }
    return this.runtimeLoading;
  }

  /** Switches the shown task: subscribes to its future events, then snapshots it to every view. */
  private show(task: TaskHandle | undefined): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.current = task;
    if (task) this.unsubscribe = task.subscribe((event) => this.onTaskEvent(task, event));
    this.broadcast(this.snapshot());
  }

  private onTaskEvent(task: TaskHandle, event: TaskEvent): void {
    if (task !== this.current) return;
    if (event.type === 'error') this.host.log.warn(`task ${task.id}: ${event.code}: ${event.message}`);
    if (event.type === 'done') this.host.log.info(`task ${task.id} done: ${event.status} (${event.stopReason ?? 'no stop reason'})`);
    if (isViewEvent(event)) this.broadcast({ type: 'event', event });
  }

  private snapshot(): Omit<SnapshotMessage, 'seq'> {
    const t = this.current;
    return {
      type: 'snapshot',
      transcript: t?.transcript() ?? null,
      config: { ...this.host.chatConfig(), mode: this.permissionMode() },
      permissions: this.permissions.list(),
      ...(t ? { meta: this.book.meta(t.id) } : {}),
    };
  }

  private broadcastError(message: string): void {
    this.broadcast({ type: 'error', message });
  }

  private broadcast(payload: ToWebviewPayload): void {
    for (const v of this.views) v.send(payload);
  }
}
