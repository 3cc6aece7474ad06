import { PERMISSION_MODE_INFO, type PermissionMode } from '../shared/domain/permissionModes';
import { MODE_SEMANTICS } from '../core/permissions/modes';
import type { FromWebviewMessage } from '../shared/protocol/fromWebview';
import type { PendingPermission, RuleScope } from '../shared/protocol/chatMessages';
import type { ToWebviewPayload } from '../shared/protocol/toWebview';
import type { MessageExtras, TaskHandle } from '../core/runtime/types';
import type { ChatHost, TaskRuntimeLike } from './chatHost';
import { PermissionBroker } from './permissionBroker';
import { TaskBook } from './taskBook';
import { memoryHistoryServices, TaskHistory, type HistoryServices } from './history/taskHistory';
import type { ViewConnection } from './viewConnection';
import { ViewRequests } from './viewRequests';
import { McpRequests } from './mcp/mcpRequests';
import { LoopRequests } from './loops/loopRequests';
import { MemoryRequests } from './memory/memoryRequests';
import type { PoolView } from './taskWorker';

/** What the window needs of one chat surface (a ChatController). */
export interface ChatSurface {
  /** `sidebar`, `panel`, ...: names the surface in logs and its persisted last task. */
  readonly id: string;
  /** The task the surface shows, if any. */
  shownTaskId(): string | undefined;
  /** Its handle (live, or stored read-only). */
  shownTask(): TaskHandle | undefined;
  /** Whether one of its views can be seen now (its page is loaded and not hidden). */
  isVisible(): boolean;
  /** Whether this surface is the one the person works in now (an active editor tab). */
  isActive(): boolean;
  /** Sends `payload` to every view of the surface. */
  broadcast(payload: ToWebviewPayload): void;
  /** A fresh snapshot to every view (settings, mode or key changed). */
  refresh(): void;
  /** Shows `task` (live) in this surface; undefined: the empty chat. */
  showLive(task: TaskHandle | undefined): void;
  /** The runtime exists now: follow its worker pool. */
  watchPool(pool: PoolView | null): void;
  /** The stored tasks changed (one was deleted): send the History list again to every view. */
  historyChanged(): Promise<void>;
}

/**
 * What one VS Code window's chats share: the runtime (created lazily on the first prompt), the
 * permission prompts, the history, the task book, the settings / MCP / loop / memory pages, and
 * the permission mode chosen in a chat. Each chat surface (the sidebar, an editor tab) is a
 * ChatController with its own current task; this class routes what concerns a task to the
 * surfaces that show it.
 *
 * Permission cards: a prompt's card goes to the surfaces that show its task; a prompt whose task
 * no surface shows (a sub-agent, a task left running in the background) goes to every surface,
 * as the only place it could be answered in the chat. While none of the surfaces it goes to is
 * visible, the prompt also becomes a notification (`hasVisibleView` is per prompt).
 */
export class ChatWindow {
  readonly permissions: PermissionBroker;
  readonly book: TaskBook;
  readonly historyServices: HistoryServices;
  readonly history: TaskHistory;
  private readonly surfaces: ChatSurface[] = [];
  private readonly requests: ViewRequests;
  private readonly mcpRequests: McpRequests | undefined;
  private readonly loopRequests: LoopRequests;
  private readonly memoryRequests: MemoryRequests | undefined;
  private runtime: TaskRuntimeLike | undefined;
  private runtimeLoading: Promise<TaskRuntimeLike> | undefined;
  private modeOverride: PermissionMode | undefined;
  private disposedFlag = false;

  constructor(readonly host: ChatHost) {
    this.permissions = new PermissionBroker({
      log: host.log,
      notify: host.notifyPermission,
      ...(host.permissionSurfaces ? { surfaces: host.permissionSurfaces } : {}),
      ...(host.saveRules ? { saveRules: (rules: string[], where: RuleScope) => host.saveRules!(rules, where) } : {}),
      ...(host.checkRule ? { checkRule: host.checkRule } : {}),
      warn: (message) => host.warn(message),
      hasVisibleView: (request) => this.cardSurfaces(request.taskId).some((s) => s.isVisible()),
    });
    this.permissions.listen({
      requested: (request) => {
        for (const s of this.cardSurfaces(request.taskId)) s.broadcast({ type: 'permissionRequest', request });
      },
      resolved: (requestId, decision, source) => this.broadcast({ type: 'permissionResolved', requestId, decision, source }),
    });
    this.book = new TaskBook((taskId, messageId, ms) => {
      for (const s of this.surfaces) if (s.shownTaskId() === taskId) s.broadcast({ type: 'thinkingTime', messageId, ms });
    });
    this.historyServices = host.history ?? memoryHistoryServices();
    this.history = new TaskHistory({
      log: host.log,
      runtime: () => this.ensureRuntime(),
      services: this.historyServices,
      startOptions: async () => ({ provider: await host.providerConfig(this.permissionMode()), mode: this.permissionMode(), refreshProvider: () => host.providerConfig(this.permissionMode()) }),
      startedAt: (id) => this.book.startedAt(id),
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
    this.mcpRequests = host.mcp ? new McpRequests(host.mcp, host.log, (p) => this.broadcast(p)) : undefined;
    this.loopRequests = new LoopRequests(host.loops, host.log, (p) => this.broadcast(p));
    this.memoryRequests = host.memory ? new MemoryRequests(host.memory, host.log, (p) => this.broadcast(p)) : undefined;
  }

  get disposed(): boolean {
    return this.disposedFlag;
  }

  /** Adds a chat surface; returns the function that removes it. */
  register(surface: ChatSurface): () => void {
    this.surfaces.push(surface);
    if (this.runtime) surface.watchPool(this.runtime.workerPool?.() ?? null);
    return () => {
      const i = this.surfaces.indexOf(surface);
      if (i >= 0) this.surfaces.splice(i, 1);
      this.shownChanged();
    };
  }

  /**
   * The surface a command acts on (New Task, Show History, a loop's iteration, opening a task
   * from a notification, the Agents view or Show Workers): the active editor-tab chat, else the
   * sidebar (the first surface registered), else none.
   */
  target(): ChatSurface | undefined {
    return this.surfaces.find((s) => s.isActive()) ?? this.surfaces[0];
  }

  /** The tasks some visible chat shows now (attention notifications are not sent for them). */
  visibleTaskIds(): Set<string> {
    const ids = new Set<string>();
    for (const s of this.surfaces) {
      const id = s.shownTaskId();
      if (id !== undefined && s.isVisible()) ids.add(id);
    }
    return ids;
  }

  /** The prompts a surface showing `taskId` lists in its snapshot. */
  cardsFor(surface: ChatSurface): PendingPermission[] {
    return this.permissions.list().filter((p) => this.cardSurfaces(p.taskId).includes(surface));
  }

  /**
   * A surface shows another task, or was hidden or closed: prompts whose task no surface shows
   * any more go to every surface, and those no visible view shows also become notifications.
   */
  shownChanged(): void {
    for (const p of this.permissions.list()) {
      if (this.surfaces.some((s) => s.shownTaskId() === p.taskId)) continue;
      for (const s of this.surfaces) s.broadcast({ type: 'permissionRequest', request: p });
    }
    this.permissions.viewsChanged();
  }

  /**
   * Task `id` was deleted from History: every surface that shows it shows the empty chat, and
   * every surface's History list drops it (a chat whose History page is open must not keep
   * offering a task that is gone).
   */
  async taskDeleted(id: string): Promise<void> {
    for (const s of [...this.surfaces]) if (s.shownTaskId() === id) s.showLive(undefined);
    await Promise.all([...this.surfaces].map((s) => s.historyChanged()));
  }

  /** The mode the next task or message uses: a chat's selector, else the setting. */
  permissionMode(): PermissionMode {
    return this.modeOverride ?? this.host.permissionMode();
  }

  setMode(mode: PermissionMode): void {
    this.modeOverride = mode;
    this.host.log.info(`permission mode from now on: ${mode}`);
    this.refresh();
  }

  /** This window's tasks, newest last (empty before the runtime exists). */
  tasks(): TaskHandle[] {
    return this.runtime?.list() ?? [];
  }

  /** The runtime if it exists already. */
  get loadedRuntime(): TaskRuntimeLike | undefined {
    return this.runtime;
  }

  /**
   * Why a loop cannot start or continue in the chat's mode now, or undefined. A loop never runs in
   * Plan mode (docs/loop.md): its iterations change files and keep their progress file, and every
   * one of them would be refused.
   */
  loopModeProblem(): string | undefined {
    const mode = this.permissionMode();
    if (!MODE_SEMANTICS[mode].refusesChanges) return undefined;
    return (
      `a loop cannot run in ${PERMISSION_MODE_INFO[mode].label} mode: its iterations change files and write their progress file, ` +
      'and every change would be refused. Switch the chat to another mode, then start (or continue) the loop.'
    );
  }

  /**
   * What a loop needs to start its iterations in this window (docs/loop.md): each iteration is a
   * task of the runtime with the chat's provider, in the chat's mode as it is now (the loop keeps
   * that mode until it stops or is continued again; switching the chat's mode later does not
   * change a running loop), shown as it starts in the surface commands act on (`target`). Rejects
   * in Plan mode (`loopModeProblem`), and like a first prompt does (no folder open, no provider
   * settings).
   */
  async loopHost(): Promise<{ mode: PermissionMode; startIteration(prompt: string, it: { loopName: string; iteration: number; progressFile: string }): TaskHandle }> {
    const problem = this.loopModeProblem();
    if (problem) throw new Error(problem);
    const mode = this.permissionMode();
    const runtime = await this.ensureRuntime();
    const provider = await this.host.providerConfig(mode);
    return {
      mode,
      startIteration: (prompt, it) => {
        const title = `${it.loopName}: iteration ${it.iteration}`;
        const task = runtime.startTask({ prompt, title, provider, mode, loopProgressFile: it.progressFile, refreshProvider: () => this.host.providerConfig(mode) });
        this.book.track(task, provider.model);
        this.target()?.showLive(task);
        return task;
      },
    };
  }

  /**
   * Starts a task with `prompt` for `surface` in the chat's mode, with the provider settings read
   * now (each run reads them again: a key set meanwhile, the model of the mode it runs in), and
   * watches it, and has the surface show it at once (before any of its events can be missed).
   * Does nothing when the surface closed while the runtime or the settings loaded; rejects when
   * no task can start (no folder, no provider settings, its record cannot be created: nothing
   * runs unrecorded).
   */
  async startTask(surface: ChatSurface, prompt: string, extras: MessageExtras = {}): Promise<void> {
    const runtime = await this.ensureRuntime();
    const provider = await this.host.providerConfig(this.permissionMode());
    if (!this.surfaces.includes(surface) || this.disposedFlag) return;
    const mode = this.permissionMode();
    const task = runtime.startTask({
      prompt,
      provider,
      mode,
      refreshProvider: () => this.host.providerConfig(this.permissionMode()),
      ...(extras.command ? { command: extras.command } : {}),
      ...(extras.attachments?.length ? { attachments: extras.attachments } : {}),
      ...(extras.images?.length ? { images: extras.images } : {}),
      ...(extras.typed !== undefined ? { typed: extras.typed } : {}),
    });
    this.track(task, provider.model);
    this.host.log.info(`task ${task.id} started in the ${surface.id} chat (provider ${provider.provider}, model ${provider.model || 'default'}, mode ${mode})`);
    surface.showLive(task);
  }

  /** Acts on a message of the shared pages, and on the requests of `ViewRequests` (files, diffs, settings). */
  async handleShared(view: ViewConnection, message: FromWebviewMessage): Promise<void> {
    switch (message.type) {
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
        await this.requests.handle(view, message);
    }
  }

  /** Watches a top-level task of this window: its history entry and the app session's queries. */
  track(task: TaskHandle, model: string): void {
    this.book.track(task, model);
    this.host.watchTask?.(task);
  }

  ensureRuntime(): Promise<TaskRuntimeLike> {
    if (this.runtime) return Promise.resolve(this.runtime);
    if (!this.runtimeLoading) {
      this.runtimeLoading = this.host.loadRuntime(this.permissions).then(
        (r) => {
          // Closed while the core was loading: nothing may run in a window that is gone.
          if (this.disposedFlag) {
            r.dispose();
            throw new Error('Keel is shutting down');
          }
          this.runtime = r;
          this.runtimeLoading = undefined;
          for (const s of this.surfaces) s.watchPool(r.workerPool?.() ?? null);
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

  /** Sends every surface a fresh snapshot (after a settings, mode or key change). */
  refresh(): void {
    for (const s of this.surfaces) s.refresh();
  }

  broadcast(payload: ToWebviewPayload): void {
    for (const s of this.surfaces) s.broadcast(payload);
  }

  /**
   * The window is closing: every task this window runs is stopped, and one that had not settled
   * is recorded as interrupted (a reload shows it so, with Resume); prompts are denied.
   */
  dispose(): Promise<void> {
    if (this.disposedFlag) return Promise.resolve();
    this.disposedFlag = true;
    this.permissions.dispose();
    this.requests.dispose();
    this.mcpRequests?.dispose();
    this.loopRequests.dispose();
    this.memoryRequests?.dispose();
    this.book.dispose();
    this.surfaces.length = 0;
    const runtime = this.runtime;
    this.runtime = undefined;
    runtime?.interruptAll();
    runtime?.dispose();
    // The tasks' last writes and their locks' release run off the event loop: the window's
    // saving (deactivate) waits for them.
    return runtime?.closed?.() ?? Promise.resolve();
  }

  /** Where a card of `taskId` shows: the surfaces showing that task, else every surface. */
  private cardSurfaces(taskId: string): ChatSurface[] {
    const showing = this.surfaces.filter((s) => s.shownTaskId() === taskId);
    return showing.length > 0 ? showing : [...this.surfaces];
  }

  private toolItem(toolCallId: string) {
    const shown = this.surfaces.map((s) => s.shownTask()).filter((t): t is TaskHandle => t !== undefined);
    for (const task of [...shown, ...this.tasks()]) {
      const items = task.transcript().items;
      for (let i = items.length - 1; i >= 0; i--) {
        const it = items[i]!;
        if (it.kind === 'tool' && it.id === toolCallId) return it;
      }
    }
    return undefined;
  }
}
