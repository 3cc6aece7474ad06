import { Mutex } from 'async-mutex';
import { isViewEvent, type TaskEvent } from '../shared/domain/events';
import type { FromWebviewMessage } from '../shared/protocol/fromWebview';
import type { ChatConfig, SnapshotMessage } from '../shared/protocol/toWebview';
import type { ProviderConfig } from '../core/providers/types';
import type { PermissionMode, StartTaskOptions, TaskHandle } from '../core/runtime/types';
import { type Logger, describeError } from './logger';
import { isExternalHttpLink } from './links';
import type { ViewConnection } from './viewConnection';

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
  /** Creates the runtime on first use; may reject (e.g. no folder open). Called at most once per success. */
  loadRuntime(): Promise<TaskRuntimeLike>;
  /** The provider settings with the key, read when a task starts. */
  providerConfig(): Promise<ProviderConfig>;
  /** What views show about the configuration (never a key). */
  chatConfig(): ChatConfig;
  permissionMode(): PermissionMode;
  /** Opens an http(s) URL outside VS Code. */
  openExternal(href: string): Promise<unknown>;
  /** A warning the user sees (a notification). */
  warn(message: string): void;
}

/**
 * One per window: owns the runtime (created lazily on the first prompt) and which task the chat
 * shows, and fans that task's events out to every attached view. Views never drive a task; they
 * send intents that arrive here through `handle`.
 *
 * Contract: a view that says `ready` gets a snapshot of the current task, then that task's
 * events in order; switching task (new task, history) sends every view a new snapshot. Hiding or
 * closing a view never stops a task. Never throws from `handle`; failures become host errors
 * shown in the views.
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

  constructor(private readonly host: ChatHost) {}

  /** Adds a view; returns the function that removes it. */
  attach(view: ViewConnection): () => void {
    this.views.add(view);
    this.host.log.debug(`view ${view.id} (${view.kind}) attached`);
    return () => {
      this.views.delete(view);
      this.host.log.debug(`view ${view.id} detached`);
    };
  }

  /** The task the chat shows, if any. */
  get currentTask(): TaskHandle | undefined {
    return this.current;
  }

  /** This window's tasks, newest last (empty before the runtime exists). */
  tasks(): TaskHandle[] {
    return this.runtime?.list() ?? [];
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
        case 'openLink':
          await this.openLink(message.href);
          return;
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
      const task = runtime.startTask({ prompt: text, provider, mode: this.host.permissionMode(), refreshProvider: () => this.host.providerConfig() });
      this.host.log.info(`task ${task.id} started (provider ${provider.provider}, model ${provider.model || 'default'})`);
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
    this.show(task);
    return true;
  }

  cancel(): void {
    this.current?.cancel();
  }

  retry(): void {
    this.current?.retry();
  }

  /** Sends every view a fresh snapshot (after a settings or key change). */
  refresh(): void {
    this.broadcast(this.snapshot());
  }

  dispose(): void {
    this.disposed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.current = undefined;
    this.views.clear();
    this.runtime?.dispose();
    this.runtime = undefined;
  }

  private async openLink(href: string): Promise<void> {
    if (!isExternalHttpLink(href)) {
      this.host.log.warn(`refused to open a link that is not http(s): ${href.slice(0, 200)}`);
      this.host.warn('Keel only opens http and https links.');
      return;
    }
    await this.host.openExternal(href);
  }

  private ensureRuntime(): Promise<TaskRuntimeLike> {
    if (this.runtime) return Promise.resolve(this.runtime);
    if (!this.runtimeLoading) {
      this.runtimeLoading = this.host.loadRuntime().then(
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
    return { type: 'snapshot', transcript: this.current?.transcript() ?? null, config: this.host.chatConfig() };
  }

  private broadcastError(message: string): void {
    this.broadcast({ type: 'error', message });
  }

  private broadcast(payload: Parameters<ViewConnection['send']>[0]): void {
    for (const v of this.views) v.send(payload);
  }
}
