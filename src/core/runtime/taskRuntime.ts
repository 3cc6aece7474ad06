import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { EventBus } from '../events/eventBus';
import { LockManager } from '../locks/lockManager';
import type { PendingSubtask } from '../machines/task/task.machine';
import { SecretKeeper } from '../security/secretKeeper';
import type { TaskRecorder } from '../store/taskRecorder';
import { TaskStore, type LoadedTask } from '../store/taskStore';
import { StoreError, type StoreProblem, type TaskSummary } from '../store/types';
import { createBashTool } from '../tools/bash';
import { builtinTools, createToolRegistry, type ToolRegistry } from '../tools/registry';
import { Sandbox } from '../sandbox/sandbox';
import { ProjectMemory } from '../memory/projectMemory';
import { SettingsEnvironment } from '../permissions/settingsEnv';
import { NOTHING_APPROVED, type TrustView } from '../trust/items';
import { MEMORY_OFF, type MemorySettings } from '../memory/settings';
import { WorkerPool } from '../workers/pool';
import type { AnyTool } from '../tools/types';
import { DEFAULT_LIMITS } from './limits';
import { createSkillTool, type SkillRef } from '../tools/skill';
import { loadSkills } from '../commands/skills';
import { NOTHING_APPROVED as NO_CONTENT_APPROVED } from '../commands/projectGate';
import { LiveTask, seedOf, titleOf } from './liveTask';
import type { TaskRuntimeOptions } from './options';
import type { PermissionDecider } from './permissionCheck';
import { lazyEngine } from './permissionDecider';
import { FollowUpRequired, type ResumeTaskOptions, type StartTaskOptions, type TaskHandle } from './types';
import { errorMessage } from '../../shared/domain/errors';

export { DEFAULT_LIMITS };
export type { TaskRuntimeOptions };

/** What `TaskRuntime.inspect` finds: a task driven here, or one read from the store. */
export type InspectedTask =
  | { kind: 'live'; handle: TaskHandle }
  | { kind: 'stored'; task: LoadedTask; summary: TaskSummary };

/**
 * Owns the live tasks of one host (an extension window, a CLI run). Each task is one actor of
 * the task machine; hosts get a `TaskHandle` that sends intents and relays events. Contract:
 * a task's events reach subscribers in the order the machines published them; a subscriber that
 * throws is logged and does not affect the task or other subscribers.
 */
export class TaskRuntime {
  private readonly tasks = new Map<string, LiveTask>();
  private readonly subtasks = new Map<string, LiveTask>();
  readonly locks: LockManager;
  private readonly tools: ToolRegistry;
  /** The task store, when the runtime was given a `storageDir`. */
  readonly store: TaskStore | undefined;
  /** @internal the permission engine every task of this runtime decides with */
  readonly permissions: PermissionDecider;
  /** The keys this host holds and the variables passed through; shared by every task. */
  readonly secrets: SecretKeeper;
  /** The Bash sandbox of every task here (its network proxy is closed by `dispose`). */
  readonly sandbox: Sandbox;
  private memory: ProjectMemory | undefined;
  /** What the person approved of this workspace (nothing, when the host gave no trust). */
  readonly trust: TrustView;
  private readonly settingsEnv: SettingsEnvironment;

  private pool: WorkerPool | null = null;

  constructor(private readonly options: TaskRuntimeOptions) {
    this.locks = options.locks ?? new LockManager();
    this.sandbox = new Sandbox(options.sandbox ?? { enabled: false }, options.log ? { log: options.log } : {});
    this.tools =
      options.tools ??
      createToolRegistry([...builtinTools.map((t) => (t.name === 'Bash' ? (createBashTool({ sandbox: this.sandbox }) as AnyTool) : t)), createSkillTool(() => this.skills()) as AnyTool]);
    this.trust = options.trust ?? NOTHING_APPROVED;
    const trust = options.trust;
    this.permissions = options.permissions ?? lazyEngine({ ...options, trust: this.trust, ...(trust ? { protectedFiles: () => trust.protectedFilesNow() } : {}) });
    this.settingsEnv = new SettingsEnvironment({ workspace: options.workspace, ...(options.home ? { home: options.home } : {}), trust: this.trust });
    this.secrets = options.secrets ?? SecretKeeper.fromEnvironment(process.env, options.passEnv ?? []);
    // The settings files' `env`, as the person allowed it, for every tool process of this host.
    this.secrets.setExtra(() => this.settingsEnv.current());
    this.store = options.storageDir
      ? new TaskStore(options.storageDir, { ...(options.log ? { log: options.log } : {}), ...(options.flushIntervalMs ? { flushIntervalMs: options.flushIntervalMs } : {}) })
      : undefined;
  }

  /**
   * Starts a new task (it runs from the next microtask on). With a store, the task is recorded
   * from its first event: when its record cannot be created this throws StoreError('unusable') and
   * nothing runs (a task is never run without the record its host asked for).
   */
  startTask(opts: StartTaskOptions): TaskHandle {
    return this.spawn(opts);
  }

  private spawn(opts: StartTaskOptions, parent?: LiveTask): LiveTask {
    const id = randomUUID();
    // A task is known by what the person typed (`/review a.ts`), not by what a command expanded it to.
    const title = opts.title?.trim() || titleOf(opts.typed ?? opts.prompt);
    let recorder: TaskRecorder | undefined;
    if (this.store) {
      try {
        recorder = this.store.create({
          id,
          title,
          model: opts.provider.model,
          provider: opts.provider.provider,
          workspace: this.options.workspace,
          owner: this.ownerLabel(),
          ...(parent ? { parentId: parent.id } : {}),
        });
      } catch (err) {
        if (err instanceof StoreError) throw err;
        throw new StoreError('unusable', `the task cannot be recorded in ${this.store.root}: ${errorMessage(err)}`);
      }
    }
    const task = new LiveTask(id, opts, this, { title, recorder }, parent?.id, parent);
    this.tasks.set(id, task);
    this.options.feed?.bus.publish({ kind: 'SessionCreated', taskId: id, title, resumed: false, ...(parent ? { parentId: parent.id } : {}) });
    task.start(opts.prompt);
    return task;
  }

  /**
   * Stored tasks, newest first (subtasks left out), with `status` as a person should see it: a
   * task recorded as running that no live process holds is `interrupted`. Tasks driven by this
   * runtime are `running` or settled as recorded. Unreadable tasks are quarantined and reported
   * in `problems`. Without a store: an empty list.
   */
  async listStored(): Promise<{ tasks: TaskSummary[]; problems: StoreProblem[] }> {
    if (!this.store) return { tasks: [], problems: [] };
    return this.store.list();
  }

  /**
   * A task by id: the live handle if this runtime drives it, else what the store holds (shown
   * read-only; `task.heldElsewhere` says when another window or process runs it). Throws
   * StoreError (not_found, corrupt after quarantining, unsupported).
   */
  async inspect(id: string): Promise<InspectedTask> {
    const live = this.driven(id);
    if (live) return { kind: 'live', handle: live };
    if (!this.store) throw new StoreError('not_found', `no task "${id}"`);
    const task = await this.store.load(id);
    const status = task.meta.status === 'running' && !task.heldElsewhere ? 'interrupted' : task.meta.status;
    return { kind: 'stored', task, summary: { ...task.meta, status, ...(task.heldElsewhere ? { heldElsewhere: task.heldElsewhere } : {}) } };
  }

  /**
   * Continues a stored task here. An interrupted task is rebuilt from its log (`interrupted →
   * reconstructing → initializing → running`): the cut-off answer stays, marked interrupted; the
   * model is told how long ago and what was cut off; a tool call without a recorded result is
   * reported to the model as not confirmed to have run and is never run again unless the model
   * asks again (which goes through the permission check). A settled task continues with
   * `followUp` as its next user message. A task this runtime already drives gets `followUp` as a
   * user message. Throws StoreError('locked') when another live process drives it, and
   * StoreError('not_found' | 'corrupt' | 'unsupported'); throws FollowUpRequired when a settled
   * task is given no follow-up.
   */
  async resume(id: string, opts: ResumeTaskOptions): Promise<TaskHandle> {
    const live = this.driven(id);
    if (live) {
      // The follow-up's extras (mentions, images, command, what was typed) are the options' own.
      if (opts.followUp?.trim()) live.sendUserMessage(opts.followUp.trim(), opts);
      return live;
    }
    if (!this.store) throw new StoreError('not_found', `no task "${id}": this runtime has no store`);
    const opened = await this.store.open(id, this.ownerLabel());
    const interrupted = opened.replay.status === 'running' || opened.replay.status === 'interrupted';
    // A task paused at its budget goes on without a message (with the budget given now, or its own).
    const atBudget = !interrupted && (opened.replay.transcript.tags ?? []).includes('budgetReached');
    if (!interrupted && !atBudget && !opts.followUp?.trim()) {
      void opened.recorder.close();
      throw new FollowUpRequired(id, opened.replay.status);
    }
    if (opened.meta.parentId) this.log('warn', `resuming subtask ${id} on its own; its parent will not receive its answer`);
    const task = new LiveTask(id, { ...opts, prompt: opts.followUp ?? '' }, this, seedOf(opened), opened.meta.parentId);
    this.tasks.set(id, task);
    this.options.feed?.bus.publish({ kind: 'SessionCreated', taskId: id, title: opened.meta.title, resumed: true, ...(opened.meta.parentId ? { parentId: opened.meta.parentId } : {}) });
    if (interrupted) task.resumeInterrupted(opened, opts.followUp);
    else if (atBudget && !opts.followUp?.trim()) task.continueAtBudget();
    else task.continueWith(opts.followUp!.trim());
    return task;
  }

  /** The subtask a parent started for one Task tool call, if this runtime runs it. */
  subtaskFor(parentId: string, toolCallId: string): TaskHandle | undefined {
    return this.subtasks.get(`${parentId}:${toolCallId}`);
  }

  get(id: string): TaskHandle | undefined {
    return this.driven(id);
  }

  /**
   * The task this runtime drives, if any. A task whose handle has stopped on its own — its worker
   * died, so it was recorded `interrupted`, its log closed and its lock released — is let go of
   * here: from now on it is a stored task, shown and resumed from its log like one a closed
   * window left behind (its dead handle could never run again).
   */
  private driven(id: string): LiveTask | undefined {
    const task = this.tasks.get(id);
    if (!task?.hasStopped) return task;
    this.tasks.delete(id);
    return undefined;
  }

  list(): TaskHandle[] {
    return [...this.tasks.values()].filter((t) => !t.parentId);
  }

  /**
   * Stops a task and lets go of it (its log is closed, its lock released); a later `get` finds
   * nothing. Its subtasks are let go too. Used before deleting a stored task.
   */
  forget(id: string): void {
    const task = this.tasks.get(id);
    if (!task) return;
    task.stop();
    this.tasks.delete(id);
    for (const [key, child] of this.subtasks) {
      if (key.startsWith(`${id}:`)) {
        child.stop();
        this.subtasks.delete(key);
        this.tasks.delete(child.id);
      }
    }
  }

  /**
   * Waits until every live task (subtasks included) has settled, or `limitMs` has passed; never
   * rejects. A host about to end calls it after its own task settled: a parent that was cancelled
   * cancelled its sub-agents, and they get to settle (aborted) before `interruptAll` would record
   * them as interrupted.
   */
  async settleAll(limitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)));
    await Promise.race([Promise.all([...this.tasks.values()].map((t) => t.settled())), limit]);
    clearTimeout(timer);
  }

  /**
   * Stops every task at once and records each one that had not settled as `interrupted` (see
   * `LiveTask.interrupt`): what a host does when it is told to end (SIGTERM). Synchronous.
   * Returns the ids of the tasks that were interrupted.
   */
  interruptAll(): string[] {
    const interrupted = [...this.tasks.values()].filter((t) => t.interrupt()).map((t) => t.id);
    this.tasks.clear();
    this.subtasks.clear();
    return interrupted;
  }

  /** Stops every task, writes and closes their logs and releases their locks (synchronously). */
  dispose(): void {
    for (const t of this.tasks.values()) t.stop();
    this.tasks.clear();
    this.subtasks.clear();
    void this.sandbox.dispose();
    void this.pool?.shutdown();
    this.settingsEnv.dispose();
  }

  /**
   * Resolves once the record of every task this runtime stopped (`interruptAll`, `dispose`,
   * `forget`, a worker lost) is written and its lock released: those last writes run off the
   * event loop, and a host that is about to end awaits this first. Never rejects.
   */
  closed(): Promise<void> {
    return this.store?.closed() ?? Promise.resolve();
  }

  /** Stops the worker pool, if any; resolves once every worker is gone. */
  async shutdownWorkers(): Promise<void> {
    await this.pool?.shutdown();
  }

  /** The process's event bus the tasks publish on (the host's activity feed), if any. */
  get bus(): EventBus | undefined {
    return this.options.feed?.bus;
  }

  /** The worker pool (started on first use), or null when this runtime runs turns in process. */
  workerPool(): WorkerPool | null {
    const w = this.options.workers;
    if (!w) return null;
    this.pool ??= new WorkerPool({
      owner: this.ownerLabel(),
      ...(this.options.log ? { log: this.options.log } : {}),
      ...w,
      command: { baseEnv: this.secrets.environment(), ...w.command },
    });
    return this.pool;
  }

  private ownerLabel(): string {
    return this.options.ownerLabel ?? 'Keel';
  }

  /**
   * The skills tasks here may load (docs/commands.md, "Skills"): the person's, and the
   * workspace's once approved. Read fresh on every call.
   */
  skills(): SkillRef[] {
    const workspace = this.options.workspace;
    const found = loadSkills({ workspace, ...(this.options.home ? { home: this.options.home } : {}), gate: this.options.contentGate ?? NO_CONTENT_APPROVED });
    return found.skills.map((s) => ({ name: s.name, description: s.description, dir: s.dir, path: s.path, linkFree: s.linkFree, ...(s.linkFree ? { workspace } : {}) }));
  }

  /** The workspace's memory (built on first use), or null when memory is off for this host. */
  projectMemory(): ProjectMemory | null {
    if (!this.memorySettings().enabled) return null;
    this.memory ??= new ProjectMemory(this.options.workspace, (level, message) => this.log(level, message), this.options.storageDir);
    return this.memory;
  }

  /** The memory settings now (memory off when the host gave none). */
  memorySettings(): MemorySettings {
    const m = this.options.memory;
    return (typeof m === 'function' ? m() : m) ?? MEMORY_OFF;
  }

  /** @internal used by LiveTask */
  services() {
    return { options: this.options, locks: this.locks, tools: this.tools, pool: this.workerPool() };
  }

  /**
   * @internal The child of a parent's Task call, started on first use; idempotent per (parent,
   * tool call), so a rebuilt parent re-attaches to the same child. Throws StoreError when the
   * child's record cannot be created.
   */
  ensureSubtask(parent: LiveTask, sub: PendingSubtask): LiveTask {
    const key = `${parent.id}:${sub.toolCallId}`;
    let child = this.subtasks.get(key);
    if (!child) {
      // The child takes the parent's mode as it is now, not as the parent started (LiveTask binds it).
      // Its title comes from its own prompt, not from the parent's; the parent's images are not its
      // message's. Its command narrowing and its budget are the parent's (it spends from it).
      const { title: _parentTitle, images: _parentImages, ...inherited } = parent.options;
      child = this.spawn({ ...inherited, mode: parent.permissionMode(), prompt: `${sub.description ? `${sub.description}\n\n` : ''}${sub.prompt}` }, parent);
      this.subtasks.set(key, child);
    }
    return child;
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.options.log?.(level, message);
  }

  /** @internal a recorded task's event log (hooks' `transcript_path`). */
  transcriptPath(id: string): string {
    return this.store ? join(this.store.taskDir(id), 'events.jsonl') : '';
  }
}
