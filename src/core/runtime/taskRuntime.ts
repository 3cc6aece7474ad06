import { randomUUID } from 'node:crypto';
import { createActor, type Actor } from 'xstate';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent } from '../../shared/domain/events';
import type { ConversationMessage, ToolResultBlock } from '../../shared/domain/messages';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../../shared/domain/transcript';
import { LockManager } from '../locks/lockManager';
import type { PendingSubtask } from '../machines/task/task.machine';
import type { TurnLimits } from '../machines/turn/turn.machine';
import { denyingAsker, type PermissionAsker } from '../permissions/gate';
import { createProvider } from '../providers/index';
import { costUsd } from '../providers/pricing';
import type { ModelProvider, ProviderConfig } from '../providers/types';
import { planResume } from '../store/resumePlan';
import type { TaskRecorder } from '../store/taskRecorder';
import { TaskStore, type LoadedTask, type OpenedTask } from '../store/taskStore';
import { StoreError, type StoreProblem, type TaskSummary } from '../store/types';
import { builtinTools, createToolRegistry, type ToolRegistry } from '../tools/registry';
import { createBashTool } from '../tools/bash';
import type { AnyTool } from '../tools/types';
import { createPermissionEngine, type PermissionEngine } from '../permissions/engine';
import { decideByMode } from '../permissions/gate';
import type { SandboxSettings } from '../permissions/sandbox';
import type { PermissionMode, ResumeTaskOptions, StartTaskOptions, TaskHandle } from './types';
import { wireTaskMachine, type PermissionDecider } from './wiring';

export const DEFAULT_LIMITS: TurnLimits = {
  maxTurns: 50,
  maxTokens: 8192,
  contextLimit: 150_000,
  retryLimit: 3,
  retryBaseMs: 1000,
  lockTimeoutMs: 0,
};

export interface TaskRuntimeOptions {
  workspace: string;
  ripgrepPath?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  asker?: PermissionAsker;
  /** Builds a provider from its config; defaults to the real ones (`createProvider`). */
  providerFactory?: (config: ProviderConfig) => ModelProvider | KeelError;
  tools?: ToolRegistry;
  limits?: Partial<TurnLimits>;
  locks?: LockManager;
  /**
   * The task store's root (docs/persistence.md). With it every task is recorded (event log, meta,
   * lock) and stored tasks can be listed, inspected and resumed; without it tasks live in memory.
   */
  storageDir?: string;
  /** Names this host in "running in another window or process" messages (e.g. "keel run"). */
  ownerLabel?: string;
  /** How long streamed text may wait before it is written to the log (default 250 ms). */
  flushIntervalMs?: number;
  /**
   * Decides tool calls. Default: the permission engine for `workspace` (rules from the settings
   * files, the shell parser), created on first use.
   */
  permissions?: PermissionDecider;
  /** Extra settings files for the default engine (the CLI's --settings). */
  settingsFiles?: string[];
  /** Runs Bash inside bubblewrap (Linux) when enabled. */
  sandbox?: SandboxSettings;
}

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
  /** @internal shared by every task of this runtime */
  readonly permissions: PermissionDecider;

  constructor(private readonly options: TaskRuntimeOptions) {
    this.locks = options.locks ?? new LockManager();
    this.tools =
      options.tools ??
      createToolRegistry(options.sandbox?.enabled ? builtinTools.map((t) => (t.name === 'Bash' ? (createBashTool({ sandbox: options.sandbox! }) as AnyTool) : t)) : builtinTools);
    this.permissions = options.permissions ?? lazyEngine(options);
    this.store = options.storageDir
      ? new TaskStore(options.storageDir, { ...(options.log ? { log: options.log } : {}), ...(options.flushIntervalMs ? { flushIntervalMs: options.flushIntervalMs } : {}) })
      : undefined;
  }

  startTask(opts: StartTaskOptions, parentId?: string): TaskHandle {
    const id = randomUUID();
    const title = titleOf(opts.prompt);
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
          ...(parentId ? { parentId } : {}),
        });
      } catch (err) {
        this.log('error', `task ${id} cannot be saved (${(err as Error).message}); it runs without a record`);
      }
    }
    const task = new LiveTask(id, opts, this, { title, recorder }, parentId);
    this.tasks.set(id, task);
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
    const live = this.tasks.get(id);
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
   * StoreError('not_found' | 'corrupt' | 'unsupported'); throws Error when a settled task is
   * given no follow-up.
   */
  async resume(id: string, opts: ResumeTaskOptions): Promise<TaskHandle> {
    const live = this.tasks.get(id);
    if (live) {
      if (opts.followUp?.trim()) live.sendUserMessage(opts.followUp.trim());
      return live;
    }
    if (!this.store) throw new StoreError('not_found', `no task "${id}": this runtime has no store`);
    const opened = await this.store.open(id, this.ownerLabel());
    const interrupted = opened.replay.status === 'running' || opened.replay.status === 'interrupted';
    if (!interrupted && !opts.followUp?.trim()) {
      opened.recorder.close();
      throw new Error(`task ${id} is ${opened.replay.status}; give a follow-up message to continue it`);
    }
    if (opened.meta.parentId) this.log('warn', `resuming subtask ${id} on its own; its parent will not receive its answer`);
    const task = new LiveTask(id, { ...opts, prompt: opts.followUp ?? '' }, this, seedOf(opened), opened.meta.parentId);
    this.tasks.set(id, task);
    if (interrupted) task.resumeInterrupted(opened, opts.followUp);
    else task.continueWith(opts.followUp!.trim());
    return task;
  }

  /** The subtask a parent started for one Task tool call, if this runtime runs it. */
  subtaskFor(parentId: string, toolCallId: string): TaskHandle | undefined {
    return this.subtasks.get(`${parentId}:${toolCallId}`);
  }

  get(id: string): TaskHandle | undefined {
    return this.tasks.get(id);
  }

  list(): TaskHandle[] {
    return [...this.tasks.values()].filter((t) => !t.parentId);
  }

  /** Stops every task, writes and closes their logs and releases their locks (synchronously). */
  dispose(): void {
    for (const t of this.tasks.values()) t.stop();
    this.tasks.clear();
    this.subtasks.clear();
  }

  private ownerLabel(): string {
    return this.options.ownerLabel ?? 'Keel';
  }

  /** @internal used by LiveTask */
  services() {
    return { options: this.options, locks: this.locks, tools: this.tools };
  }

  /** @internal idempotent per (parent, tool call): a rebuilt parent re-attaches to the same child. */
  ensureSubtask(parent: LiveTask, sub: PendingSubtask): LiveTask {
    const key = `${parent.id}:${sub.toolCallId}`;
    let child = this.subtasks.get(key);
    if (!child) {
      child = this.startTask({ ...parent.options, prompt: `${sub.description ? `${sub.description}\n\n` : ''}${sub.prompt}` }, parent.id) as LiveTask;
      this.subtasks.set(key, child);
    }
    return child;
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.options.log?.(level, message);
  }
}

/** Where a LiveTask starts from: nothing (a new task) or what its log holds. */
interface TaskSeed {
  title: string;
  recorder: TaskRecorder | undefined;
  transcript?: TaskTranscript;
  messages?: ConversationMessage[];
  userMessages?: number;
  costUsd?: number;
}

function seedOf(opened: OpenedTask): TaskSeed {
  const r = opened.replay;
  return { title: opened.meta.title, recorder: opened.recorder, transcript: r.transcript, messages: r.conversation, userMessages: r.userMessages, costUsd: r.costUsd };
}

class LiveTask implements TaskHandle {
  private readonly actor: Actor<ReturnType<typeof wireTaskMachine>>;
  private transcriptState: TaskTranscript;
  private readonly listeners = new Set<(e: TaskEvent) => void>();
  private settleWaiters: ((e: TaskEvent & { type: 'done' }) => void)[] = [];
  private totalCost: number;
  private model: string;
  private lastDone: (TaskEvent & { type: 'done' }) | null = null;
  private readonly recorder: TaskRecorder | undefined;
  private rebuilt: (() => ConversationMessage[]) | null = null;

  constructor(
    readonly id: string,
    readonly options: StartTaskOptions,
    private readonly runtime: TaskRuntime,
    seed: TaskSeed,
    readonly parentId?: string,
  ) {
    const { options: rt, locks, tools } = runtime.services();
    const providerFactory = rt.providerFactory ?? createProvider;
    const model = options.provider.model;
    this.model = model;
    this.recorder = seed.recorder;
    this.totalCost = seed.costUsd ?? 0;
    const title = seed.title;
    this.transcriptState = seed.transcript ?? emptyTranscript(id, title, options.provider.provider === 'demo' ? 'demo model' : model);
    const machine = wireTaskMachine({
      taskId: id,
      workspace: rt.workspace,
      ...(rt.ripgrepPath ? { ripgrepPath: rt.ripgrepPath } : {}),
      locks,
      tools,
      permissions: runtime.permissions,
      asker: rt.asker ?? denyingAsker,
      createProvider: async () => {
        let config = options.provider;
        if (options.refreshProvider) {
          try {
            config = await options.refreshProvider();
          } catch (err) {
            return { code: 'internal', message: `Could not read the provider settings: ${(err as Error).message}`, retryable: true };
          }
        }
        this.model = config.model;
        return providerFactory(config);
      },
      publish: (e) => this.emit(e),
      runSubtask: (_parentId, sub) => this.runSubtask(sub),
      ...(this.recorder ? { durable: () => this.recorder!.durable() } : {}),
      reconstruct: async () => {
        if (!this.rebuilt) throw new Error('nothing to rebuild: this task was not resumed from its log');
        return this.rebuilt();
      },
    });
    this.actor = createActor(machine, {
      input: {
        taskId: id,
        title,
        model,
        mode: options.mode ?? 'default',
        limits: { ...DEFAULT_LIMITS, ...rt.limits, ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}) },
        ...(seed.messages ? { messages: seed.messages } : {}),
        ...(seed.userMessages ? { userMessages: seed.userMessages } : {}),
      },
    });
    this.actor.subscribe({ error: (err) => runtime.log('error', `task ${id} machine error: ${(err as Error).message}`) });
  }

  /** Starts on the next microtask, so a host that subscribes right after `startTask` sees every event. */
  start(prompt: string): void {
    queueMicrotask(() => {
      this.actor.start();
      this.actor.send({ type: 'START', text: prompt });
    });
  }

  /** Continues a settled stored task with a new user message (on a later turn of the event loop, like `resumeInterrupted`). */
  continueWith(followUp: string): void {
    setImmediate(() => {
      this.actor.start();
      this.actor.send({ type: 'START', text: followUp });
    });
  }

  /**
   * Resumes an interrupted stored task: marks it interrupted, then RESUME with the note; the
   * `reconstructing` state records the repairs (cut-off answer, unconfirmed tool results) and
   * hands the machine the rebuilt conversation.
   */
  resumeInterrupted(opened: OpenedTask, followUp: string | undefined): void {
    const plan = planResume(opened.replay, Date.now(), followUp);
    this.rebuilt = () => {
      for (const message of plan.repairs) this.emit({ type: 'message', taskId: this.id, message });
      return plan.conversation;
    };
    // A later turn of the event loop: whoever awaited `resume` subscribes first and sees every event.
    setImmediate(() => {
      this.actor.start();
      this.actor.send({ type: 'MARK_INTERRUPTED' });
      this.actor.send({ type: 'RESUME', note: plan.note });
    });
  }

  /** Stops the actor, then writes and closes the log and releases the lock. */
  stop(): void {
    this.actor.stop();
    this.recorder?.close();
  }

  transcript(): TaskTranscript {
    return this.transcriptState;
  }

  /** The task machine's current state as a dotted path. */
  state(): string {
    const v = this.actor.getSnapshot().value;
    return typeof v === 'string' ? v : Object.entries(v).map(([k, sub]) => `${k}.${String(typeof sub === 'string' ? sub : Object.keys(sub)[0])}`)[0] ?? '';
  }

  subscribe(listener: (event: TaskEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  sendUserMessage(text: string): void {
    this.actor.send({ type: 'USER_MESSAGE', text });
  }

  cancel(): void {
    this.actor.send({ type: 'CANCEL' });
  }

  retry(): void {
    this.actor.send({ type: 'RETRY' });
  }

  setMode(mode: PermissionMode): void {
    this.actor.send({ type: 'SET_MODE', mode });
  }

  abandon(): void {
    this.actor.send({ type: 'ABANDON' });
  }

  settled(): Promise<TaskEvent & { type: 'done' }> {
    if (this.lastDone) return Promise.resolve(this.lastDone);
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  private emit(event: TaskEvent): void {
    if (event.type === 'usage') {
      const cost = costUsd(this.model, event);
      this.totalCost += cost;
      event = { ...event, costUsd: cost, totalCostUsd: this.totalCost };
    }
    // The log first: what listeners saw is never ahead of what was recorded.
    this.recorder?.record(event);
    this.transcriptState = applyTaskEvent(this.transcriptState, event);
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        this.runtime.log('warn', `a task listener threw: ${(err as Error).message}`);
      }
    }
    if (event.type === 'task' && (event.state === 'initializing' || event.state === 'running')) this.lastDone = null;
    if (event.type === 'done') {
      this.lastDone = event;
      const waiters = this.settleWaiters;
      this.settleWaiters = [];
      for (const w of waiters) w(event);
    }
  }

  private runSubtask(sub: PendingSubtask): { result: Promise<{ result: ToolResultBlock; summary: string }>; cancel(): void } {
    const child = this.runtime.ensureSubtask(this, sub);
    const result = child.settled().then((done) => {
      const answer = lastAssistantText(child.transcript());
      const ok = done.status === 'completed';
      return {
        result: { type: 'tool_result' as const, tool_use_id: sub.toolCallId, content: ok ? answer || '(the subtask finished without an answer)' : `The subtask ended ${done.status}: ${answer}`, ...(ok ? {} : { is_error: true }) },
        summary: `subtask ${done.status}`,
      };
    });
    return { result, cancel: () => child.cancel() };
  }
}

function lastAssistantText(t: TaskTranscript): string {
  for (let i = t.items.length - 1; i >= 0; i--) {
    const it = t.items[i]!;
    if (it.kind === 'assistant' && it.text) return it.text;
  }
  return '';
}

function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New task';
}

/**
 * The default permission engine, loaded on the first decision (it loads the shell parser's wasm).
 * If it cannot load, nothing is allowed that the mode alone would not allow, and whatever would be
 * allowed beyond reads asks instead: a broken engine never widens permissions.
 */
function lazyEngine(options: TaskRuntimeOptions): PermissionDecider {
  let engine: Promise<PermissionEngine> | null = null;
  return {
    async decide(call, mode) {
      engine ??= createPermissionEngine({
        workspace: options.workspace,
        ...(options.settingsFiles ? { settingsFiles: options.settingsFiles } : {}),
        ...(options.sandbox ? { sandbox: { enabled: options.sandbox.enabled } } : {}),
      });
      try {
        return await (await engine).decide(call, mode);
      } catch (err) {
        const reason = `the permission engine could not load (${(err as Error).message})`;
        if (call.subject.kind === 'read') {
          const byMode = decideByMode(mode === 'dontAsk' ? 'dontAsk' : 'default', call.subject, call.readOnly, options.workspace);
          return { ...byMode, reason: `${byMode.reason} (${reason})` };
        }
        return { decision: mode === 'dontAsk' ? 'deny' : 'ask', reason };
      }
    },
  };
}
