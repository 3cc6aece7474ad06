import { Mutex } from 'async-mutex';
import { isViewEvent, type TaskEvent } from '../shared/domain/events';
import type { PermissionMode } from '../shared/domain/permissionModes';
import type { FromWebviewMessage } from '../shared/protocol/fromWebview';
import type { ChatConfig, SnapshotMessage, ToWebviewPayload } from '../shared/protocol/toWebview';
import type { PermissionAsker } from '../core/permissions/gate';
import type { ProviderConfig } from '../core/providers/types';
import type { EventBus } from '../core/events/eventBus';
import type { StartTaskOptions, TaskHandle } from '../core/runtime/types';
import { followTask } from './taskFollower';
import { type Logger, describeError } from './logger';
import { PermissionBroker, type NotificationPrompt, type PromptSurface } from './permissionBroker';
import type { RuleCheck } from './permissions/alwaysAllow';
import type { Page, RuleScope } from '../shared/protocol/chatMessages';
import { TaskBook } from './taskBook';
import { HistoryActions, isHistoryMessage } from './history/historyActions';
import { isStoredTask } from './history/storedTask';
import { memoryHistoryServices, TaskHistory, type HistoryServices } from './history/taskHistory';
import type { StoredTaskState } from '../shared/protocol/chatMessages';
import type { ShownTask, ViewConnection } from './viewConnection';
import { ViewRequests, type WorkbenchServices } from './viewRequests';
import { McpRequests, type McpChat } from './mcp/mcpRequests';
import { LoopRequests, type LoopChat } from './loops/loopRequests';
import { MemoryRequests, type MemoryWorkbench } from './memory/memoryRequests';
import { TaskWorkerWatch, type PoolView } from './taskWorker';

/** Task states in which a task runs again after it settled (a follow-up, Retry, Resume). */
const RUNNING_STATES: ReadonlySet<string> = new Set(['initializing', 'reconstructing', 'running']);

/** The part of the core's TaskRuntime the chat uses (the real class satisfies it structurally). */
export interface TaskRuntimeLike {
  /** The process's event bus: the views follow the shown task through a queued subscriber of it (taskFollower.ts). */
  readonly bus?: EventBus | undefined;
  startTask(options: StartTaskOptions): TaskHandle;
  get(id: string): TaskHandle | undefined;
  list(): TaskHandle[];
  /** The subtask a parent started for one Task tool call, if this runtime runs it. */
  subtaskFor(parentId: string, toolCallId: string): TaskHandle | undefined;
  /** Stops every task and records the unsettled ones as interrupted (the window is closing). */
  interruptAll(): string[];
  /** The worker pool turns run on (null: in process); the chat header shows the shown task's worker. */
  workerPool?(): PoolView | null;
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
  /** The provider settings with the key for a run in `mode` (its model: the model-selection machine), read when a run starts. */
  providerConfig(mode: PermissionMode): Promise<ProviderConfig>;
  /** What views show about the configuration for the chat's `mode` (never a key). */
  chatConfig(mode: PermissionMode): ChatConfig;
  permissionMode(): PermissionMode;
  /** Opens a URL outside VS Code. */
  openExternal(href: string): Promise<unknown>;
  /** A modal question; resolves true when the user confirms. */
  confirm(message: string, detail: string): Promise<boolean>;
  /** A warning the user sees (a notification). */
  warn(message: string): void;
  /** The notification prompt for a permission request (shown when no chat view is visible). */
  notifyPermission: NotificationPrompt;
  /** Other places a prompt shows (the diff editor for edits, a modal for risky commands). */
  permissionSurfaces?: PromptSurface[];
  /** Saves "Always allow" rules to a settings file (the engine's saveRule). */
  saveRules?(rules: string[], where: RuleScope): Promise<void>;
  /** Validates an "Always allow" rule the user edited. */
  checkRule?: RuleCheck;
  /** Files, diffs, clipboard and settings. */
  workbench: WorkbenchServices;
  /** The length of the views' queue on the event bus (default 1,000; tests make it short). */
  viewQueueCapacity?: number;
  /** Counts a task this window runs (its runs are the app session's queries). */
  watchTask?(task: TaskHandle): void;
  /** Save dialogs, confirmations and the last task shown, for the history (default: none, in memory). */
  history?: HistoryServices;
  /** The window's MCP servers (the settings page's section; `@server:uri` and `/mcp__…` in prompts). */
  mcp?: McpChat;
  /** The workspace's loops (the loop page); absent: the page says loops need a folder. */
  loops?: LoopChat;
  /** The workspace's memories (the Memory page); absent: the page says memory needs a folder. */
  memory?: MemoryWorkbench;
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
  private readonly mcpRequests: McpRequests | undefined;
  private readonly loopRequests: LoopRequests;
  private readonly memoryRequests: MemoryRequests | undefined;
  private readonly historyServices: HistoryServices;
  private readonly history: HistoryActions;
  /** Set while the current task is shown from the store (read-only until resumed). */
  private stored: StoredTaskState | undefined;
  /** The shown task's worker, for the header (workers on). */
  private readonly worker = new TaskWorkerWatch((taskId, worker) => {
    if (taskId === this.current?.id) this.broadcast({ type: 'taskWorker', taskId, worker });
  });

  constructor(private readonly host: ChatHost) {
    this.permissions = new PermissionBroker({
      log: host.log,
      notify: host.notifyPermission,
      ...(host.permissionSurfaces ? { surfaces: host.permissionSurfaces } : {}),
      ...(host.saveRules ? { saveRules: (rules: string[], where: RuleScope) => host.saveRules!(rules, where) } : {}),
      ...(host.checkRule ? { checkRule: host.checkRule } : {}),
      warn: (message) => host.warn(message),
      hasVisibleView: () => [...this.views].some((v) => v.isReady),
    });
    this.permissions.listen({
      requested: (request) => this.broadcast({ type: 'permissionRequest', request }),
      resolved: (requestId, decision, source) => this.broadcast({ type: 'permissionResolved', requestId, decision, source }),
    });
    this.book = new TaskBook((taskId, messageId, ms) => {
      if (taskId === this.current?.id) this.broadcast({ type: 'thinkingTime', messageId, ms });
    });
    this.historyServices = host.history ?? memoryHistoryServices();
    this.history = new HistoryActions(
      {
        log: host.log,
        current: () => this.current,
        show: (task, stored) => this.show(task, stored),
        track: (task) => this.track(task, task.transcript().model),
        broadcast: (payload) => this.broadcast(payload),
      },
      new TaskHistory({
        log: host.log,
        runtime: () => this.ensureRuntime(),
        services: this.historyServices,
        startOptions: async () => ({ provider: await host.providerConfig(this.permissionMode()), mode: this.permissionMode(), refreshProvider: () => host.providerConfig(this.permissionMode()) }),
        startedAt: (id) => this.book.startedAt(id),
      }),
    );
    this.requests = new ViewRequests({
      log: host.log,
      workbench: host.workbench,
      openExternal: (href) => host.openExternal(href),
      confirm: (m, d) => host.confirm(m, d),
      warn: (m) => host.warn(m),
      diffSource: (toolCallId) => this.permissions.diffFor(toolCallId) ?? this.toolItem(toolCallId),
      settingsChanged: () => this.refresh(),
    });
    this.mcpRequests = host.mcp ? new McpRequests(host.mcp, host.log, (p) => this.broadcast(p)) : undefined;
    this.loopRequests = new LoopRequests(host.loops, host.log, (p) => this.broadcast(p));
    this.memoryRequests = host.memory ? new MemoryRequests(host.memory, host.log, (p) => this.broadcast(p)) : undefined;
  }

  /**
   * Connects a view: from now on its session follows the task the chat shows (each view gets
   * that task's snapshot when its page says ready). Returns the function that removes it.
   */
  attach(view: ViewConnection): () => void {
    this.views.add(view);
    this.host.log.debug(`view ${view.id} (${view.kind}) attached`);
    view.connect({ snapshot: () => this.snapshot(), coverage: () => this.coverage(), readinessChanged: () => this.viewsChanged() }, this.shown());
    return () => {
      this.views.delete(view);
      this.host.log.debug(`view ${view.id} detached`);
      this.viewsChanged();
    };
  }

  /** A view was hidden, lost its page or was closed: prompts nobody can see also go to a notification. */
  viewsChanged(): void {
    if (![...this.views].some((v) => v.isReady)) this.permissions.viewsGone();
  }

  /** The task a visible chat view shows right now (undefined: none shown, or no view visible). */
  visibleTaskId(): string | undefined {
    return [...this.views].some((v) => v.isReady) ? this.current?.id : undefined;
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
          view.ready();
          if (!this.current) void this.history.restoreLast(this.historyServices.lastTask.get());
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
        case 'permissionAnswer': {
          const r = this.permissions.answer(message.requestId, message.decision, message.feedback, message.always);
          if (r !== true) {
            view.send({ type: 'notice', message: r.message });
            // A refused "Always allow" rule: the card was removed optimistically; show it again.
            const still = this.permissions.list().find((p) => p.requestId === message.requestId);
            if (still) view.send({ type: 'permissionRequest', request: still });
          }
          return;
        }
        case 'setMode':
          this.setMode(message.mode);
          return;
        case 'openSubtask':
          this.openSubtask(view, message.toolCallId);
          return;
        case 'getMcpStatus':
        case 'mcpAction':
          if (this.mcpRequests) await this.mcpRequests.handle(view, message);
          else view.send({ type: 'mcpStatus', status: { servers: [], problems: [], available: false } });
          return;
        case 'getLoops':
        case 'loopAction':
          await this.loopRequests.handle(view, message);
          return;
        case 'getMemories':
        case 'searchMemories':
        case 'memoryAction':
        case 'setMemorySetting':
          if (this.memoryRequests) await this.memoryRequests.handle(view, message);
          else view.send({ type: 'memories', state: { available: false, dir: '', memories: [], problems: [], settings: { enabled: false, autoSave: false } } });
          return;
        default:
          if (isHistoryMessage(message)) await this.history.handle(view, message);
          else await this.requests.handle(view, message);
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
  async prompt(typed: string): Promise<void> {
    await this.promptLock.runExclusive(async () => {
      if (this.disposed) return;
      const text = this.host.mcp ? await this.host.mcp.expand(typed, new AbortController().signal) : typed;
      if (this.disposed) return;
      if (isStoredTask(this.current)) {
        await this.history.followUp(text);
        return;
      }
      if (this.current?.transcript().state === 'interrupted') {
        // Interrupted here (its worker died): its handle is stopped, so the message resumes the
        // task from its log, as for a stored one.
        try {
          await this.history.resume(this.current.id, text);
        } catch (e) {
          this.broadcastError(`Keel could not resume the task: ${describeError(e)}`);
        }
        return;
      }
      if (this.current) {
        this.current.sendUserMessage(text);
        return;
      }
      let runtime: TaskRuntimeLike;
      let provider: ProviderConfig;
      try {
        runtime = await this.ensureRuntime();
        provider = await this.host.providerConfig(this.permissionMode());
      } catch (e) {
        this.host.log.error(`cannot start a task: ${describeError(e)}`);
        this.broadcastError(`Keel could not start the task: ${describeError(e)}`);
        return;
      }
      if (this.disposed) return;
      const mode = this.permissionMode();
      let task: TaskHandle;
      try {
        // Each run reads the settings again: a key set meanwhile, and the model for the mode it runs in.
        task = runtime.startTask({ prompt: text, provider, mode, refreshProvider: () => this.host.providerConfig(this.permissionMode()) });
      } catch (e) {
        // The task's record could not be created (storage unusable): nothing runs unrecorded.
        this.host.log.error(`cannot start a task: ${describeError(e)}`);
        this.broadcastError(`Keel could not start the task: ${describeError(e)}`);
        return;
      }
      this.track(task, provider.model);
      this.host.log.info(`task ${task.id} started (provider ${provider.provider}, model ${provider.model || 'default'}, mode ${mode})`);
      this.show(task);
    });
  }

  /**
   * What a loop needs to start its iterations in this window (docs/loop.md): each iteration is a
   * task of the chat's runtime with the chat's provider and mode, shown as it starts. Rejects
   * like a first prompt does (no folder open, no provider settings).
   */
  async loopHost(): Promise<{ startIteration(prompt: string, it: { loopName: string; iteration: number; progressFile: string }): TaskHandle }> {
    const runtime = await this.ensureRuntime();
    const provider = await this.host.providerConfig(this.permissionMode());
    return {
      startIteration: (prompt, it) => {
        const mode = this.permissionMode();
        const title = `${it.loopName}: iteration ${it.iteration}`;
        const task = runtime.startTask({ prompt, title, provider, mode, loopProgressFile: it.progressFile, refreshProvider: () => this.host.providerConfig(this.permissionMode()) });
        this.book.track(task, provider.model);
        this.show(task);
        return task;
      },
    };
  }

  /** Closes the current task in the chat (it keeps running) and shows the empty state, on the chat page. */
  newTask(): void {
    this.navigate('chat');
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

  /**
   * Shows task `id`: live in this window, else from the store (read-only, with Resume — e.g. a
   * task whose worker died). Resolves false when neither has it; never rejects.
   */
  async openTask(id: string): Promise<boolean> {
    if (this.showTask(id)) return true;
    try {
      await this.history.open(id);
      return true;
    } catch (e) {
      this.host.log.info(`task ${id} cannot be shown: ${describeError(e)}`);
      return false;
    }
  }

  /** Asks every view to show `page` (e.g. history); the loop page selects loop `loop` when given. */
  navigate(page: Page, loop?: string): void {
    this.broadcast({ type: 'navigate', page, ...(page === 'loop' && loop ? { loop } : {}) });
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

  /**
   * The window is closing: every task this window runs is stopped, and one that had not settled
   * is recorded as interrupted (a reload shows it so, with Resume); prompts are denied.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.current = undefined;
    this.permissions.dispose();
    this.requests.dispose();
    this.mcpRequests?.dispose();
    this.loopRequests.dispose();
    this.memoryRequests?.dispose();
    this.book.dispose();
    this.worker.dispose();
    this.views.clear();
    this.runtime?.interruptAll();
    this.runtime?.dispose();
    this.runtime = undefined;
  }

  private setMode(mode: PermissionMode): void {
    this.modeOverride = mode;
    const task = this.current;
    task?.setMode(mode);
    this.host.log.info(`permission mode from now on: ${mode}`);
    this.refresh();
  }

  private openSubtask(view: ViewConnection, toolCallId: string): void {
    const runtime = this.runtime;
    const parent = this.current;
    if (runtime && parent) {
      const child = runtime.subtaskFor(parent.id, toolCallId);
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
          // Closed while the core was loading: nothing may run in a window that is gone.
          if (this.disposed) {
            r.dispose();
            throw new Error('Keel is shutting down');
          }
          this.runtime = r;
          this.runtimeLoading = undefined;
          this.worker.watch(r.workerPool?.() ?? null);
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

  /** Watches a top-level task of this window: its history entry and the app session's queries. */
  private track(task: TaskHandle, model: string): void {
    this.book.track(task, model);
    this.host.watchTask?.(task);
  }

  /** Switches the shown task: subscribes to its future events, then snapshots it to every view. */
  private show(task: TaskHandle | undefined, stored?: StoredTaskState): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.current = task;
    this.stored = task ? stored : undefined;
    this.historyServices.lastTask.set(task?.id);
    this.worker.follow(task?.id);
    if (task) {
      this.unsubscribe = followTask(
        task,
        this.runtime?.bus,
        {
          event: (event, taskSeq) => this.onTaskEvent(task, event, taskSeq),
          // Events were lost to the views' full queue: every view is rebuilt from a fresh snapshot.
          lagged: (missed) => {
            if (task !== this.current) return;
            this.host.log.warn(`the chat views fell ${missed} events behind task ${task.id}; sending a fresh snapshot`);
            this.refresh();
          },
        },
        this.host.viewQueueCapacity,
      );
    }
    const shown = this.shown();
    for (const v of this.views) v.show(shown);
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
    // Through the bus, each view skips what the snapshot it last got already holds.
    if (isViewEvent(event)) {
      for (const v of this.views) {
        if (taskSeq === undefined) v.send({ type: 'event', event });
        else v.sendTaskEvent(event, taskSeq);
      }
    }
    // The views' sessions follow the shown task: completed when its run ends, active when it runs again.
    if (event.type === 'done') for (const v of this.views) v.taskSettled();
    else if (event.type === 'task' && RUNNING_STATES.has(event.state)) for (const v of this.views) v.taskResumed();
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
      config: { ...this.host.chatConfig(this.permissionMode()), mode: this.permissionMode() },
      permissions: this.permissions.list(),
      ...(t ? { meta: this.book.meta(t.id) } : {}),
      ...(t && this.stored ? { stored: this.stored } : {}),
      ...(worker ? { worker } : {}),
    };
  }

  private broadcastError(message: string): void {
    this.broadcast({ type: 'error', message });
  }

  private broadcast(payload: ToWebviewPayload): void {
    for (const v of this.views) v.send(payload);
  }
}
