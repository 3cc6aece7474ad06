import { createActor, type Actor } from 'xstate';
import type { TaskEvent } from '../../shared/domain/events';
import { costUsd } from '../providers/pricing';
import type { ConversationMessage, Usage } from '../../shared/domain/messages';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { TaskHookPoints } from '../hooks/taskHooks';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../../shared/domain/transcript';
import { taskLockKey, type LockManager } from '../locks/lockManager';
import type { PendingSubtask } from '../machines/task/task.machine';
import { taskStateTags } from '../machines/task/taskTags';
import type { ProjectMemory } from '../memory/projectMemory';
import type { MemorySettings } from '../memory/settings';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import { denyingAsker } from '../permissions/gate';
import { createProvider } from '../providers/index';
import type { ProviderConfig } from '../providers/types';
import type { SecretKeeper } from '../security/secretKeeper';
import { planResume } from '../store/resumePlan';
import type { TaskRecorder } from '../store/taskRecorder';
import type { OpenedTask } from '../store/taskStore';
import type { ToolRegistry } from '../tools/registry';
import { boundedByParent, type PermissionParent } from './childPermissions';
import { allowingLoopProgress } from './loopPermission';
import { DEFAULT_LIMITS } from './limits';
import type { TaskRuntimeOptions } from './options';
import type { PermissionDecider } from './permissionCheck';
import { RunPhases } from './runPhases';
import type { CommandRun, MessageExtras, StartTaskOptions, TaskHandle } from './types';
import { narrowedBy, type CommandNarrowing } from '../commands/narrowing';
import { normalizeModelId } from '../machines/modelSelection/normalize';
import type { SkillRef } from '../tools/skill';
import { wireTaskMachine } from './wiring';
import type { WorkerPool } from '../workers/pool';
import { remoteTurnOf, type RemoteTaskSide } from './remoteTask';

/** What a live task needs from the runtime that owns it. */
export interface TaskOwner {
  services(): { options: TaskRuntimeOptions; locks: LockManager; tools: ToolRegistry; pool: WorkerPool | null };
  /** The skills a run may load now (names and descriptions go into its system prompt). */
  skills(): SkillRef[];
  /** The workspace's memory, or null when memory is off for this host. */
  projectMemory(): ProjectMemory | null;
  /** The memory settings now (read at the start of each run). */
  memorySettings(): MemorySettings;
  readonly permissions: PermissionDecider;
  readonly secrets: SecretKeeper;
  ensureSubtask(parent: LiveTask, sub: PendingSubtask): LiveTask;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /** Where a recorded task's event log is (hooks' `transcript_path`). */
  transcriptPath?(id: string): string;
}

/** Where a LiveTask starts from: nothing (a new task) or what its log holds. */
export interface TaskSeed {
  title: string;
  recorder: TaskRecorder | undefined;
  transcript?: TaskTranscript;
  messages?: ConversationMessage[];
  userMessages?: number;
}

/** The seed of a task continued from its log. */
export function seedOf(opened: OpenedTask): TaskSeed {
  const r = opened.replay;
  return { title: opened.meta.title, recorder: opened.recorder, transcript: r.transcript, messages: r.conversation, userMessages: r.userMessages };
}

/**
 * One task driven by this process: the task machine's actor with its real services, the
 * transcript views attach to, and the record in the store. A subtask is bound to its live parent
 * (`parent`): it starts in the parent's current mode, follows every later mode change of the
 * parent, and is never allowed more than the parent would be (`boundedByParent`).
 */
export class LiveTask implements TaskHandle, PermissionParent {
  private readonly actor: Actor<ReturnType<typeof wireTaskMachine>>;
  private transcriptState: TaskTranscript;
  private readonly listeners = new Set<(e: TaskEvent) => void>();
  private settleWaiters: ((e: TaskEvent & { type: 'done' }) => void)[] = [];
  private provider: ProviderConfig['provider'];
  private lastDone: (TaskEvent & { type: 'done' }) | null = null;
  private readonly recorder: TaskRecorder | undefined;
  private rebuilt: (() => ConversationMessage[]) | null = null;
  private mode: PermissionMode;
  private readonly decider: PermissionDecider;
  private readonly children = new Set<LiveTask>();
  private readonly locks: LockManager;
  /** A loop iteration's progress file (it may write it without a prompt); sent with each query to a worker. */
  private readonly loopProgressFile: string | undefined;
  /** The root task's id: this task's for a top-level task, its top ancestor's for a sub-agent. */
  readonly rootId: string;
  private readonly hooks: TaskHookPoints | undefined;
  /** Set once stopped: late callbacks (output of a command being killed) publish nothing more. */
  private stopped = false;
  /** The phases of the current run (instructions, memory, runner, gatekeeper). */
  private readonly phases: RunPhases;
  /** A run's `done`, held until its phases are over (see `emit`). */
  private heldDone: (TaskEvent & { type: 'done' }) | null = null;
  /** Events delivered in this process: the transcript holds exactly these (`eventSeq`). */
  private delivered = 0;
  private readonly parent: PermissionParent | undefined;
  /** The provider config the task last initialised with (a worker gets it with each query). */
  private providerConfig: ProviderConfig;
  /** The task's event log (hooks' `transcript_path`), or '' when it is not recorded. */
  private readonly transcriptPath: string;
  /** While a custom command's run lasts: its `allowed-tools` (docs/commands.md). */
  private narrowing: CommandNarrowing | null = null;
  /** While a command's run uses its own model: the task's model to go back to. */
  private modelAfterRun: string | null = null;

  constructor(
    readonly id: string,
    readonly options: StartTaskOptions,
    private readonly runtime: TaskOwner,
    seed: TaskSeed,
    readonly parentId?: string,
    parent?: PermissionParent & { readonly rootId?: string },
  ) {
    const { options: rt, locks, tools, pool } = runtime.services();
    this.parent = parent;
    this.locks = locks;
    this.mode = parent ? parent.permissionMode() : (options.mode ?? 'default');
    this.loopProgressFile = options.loopProgressFile;
    const own = options.loopProgressFile ? allowingLoopProgress(runtime.permissions, options.loopProgressFile) : runtime.permissions;
    // A command's allowed-tools narrow every decision of its run, sub-agents' included (they ask their parent).
    this.decider = narrowedBy(parent ? boundedByParent(own, parent) : own, () => this.narrowing, rt.workspace, rt.home);
    const providerFactory = rt.providerFactory ?? createProvider;
    const model = options.provider.model;
    this.provider = options.provider.provider;
    this.providerConfig = options.provider;
    this.recorder = seed.recorder;
    const title = seed.title;
    this.transcriptState = seed.transcript ?? { ...emptyTranscript(id, title, options.provider.provider === 'demo' ? 'demo model' : model), tags: taskStateTags('created') };
    this.rootId = parent?.rootId ?? id;
    this.transcriptPath = seed.recorder && runtime.transcriptPath ? runtime.transcriptPath(id) : '';
    this.hooks = rt.hooks
      ? new TaskHookPoints(rt.hooks, {
          taskId: id,
          sessionId: this.rootId,
          workspace: rt.workspace,
          transcriptPath: this.transcriptPath,
          mode: () => this.mode,
          requestStop: (reason) => this.hookStop(reason),
          log: (level, message) => runtime.log(level, message),
        })
      : undefined;
    const createTaskProvider = async () => {
      let config = options.provider;
      if (options.refreshProvider) {
        try {
          config = await options.refreshProvider();
        } catch (err) {
          return { code: 'internal' as const, message: `Could not read the provider settings: ${(err as Error).message}`, retryable: true };
        }
      }
      // The key this task's provider uses is one Keel holds: kept from tools and redacted.
      runtime.secrets.remember(config.apiKey);
      this.providerConfig = config;
      this.provider = config.provider;
      return providerFactory(config);
    };
    this.phases = new RunPhases({
      taskId: id,
      workspace: rt.workspace,
      ...(rt.home ? { home: rt.home } : {}),
      subtask: parent !== undefined || parentId !== undefined,
      loopIteration: options.loopProgressFile !== undefined,
      memory: () => runtime.projectMemory(),
      skills: () => runtime.skills(),
      settings: () => runtime.memorySettings(),
      secrets: runtime.secrets,
      locks,
      createProvider: createTaskProvider,
      providerKind: () => this.provider,
      // The lesson call uses the model the run's turns used.
      model: () => this.actor.getSnapshot().context.model,
      conversation: () => this.actor.getSnapshot().context.messages,
      publish: (e) => this.emit(e),
      // Priced at the model the call used; the task machine owns the totals.
      charge: (usage) => this.actor.send({ type: 'CHARGE', usage, costUsd: costUsd(this.actor.getSnapshot().context.model, usage) }),
      log: (level, message) => runtime.log(level, message),
    });
    const machine = wireTaskMachine({
      taskId: id,
      ...(this.hooks ? { hooks: this.hooks } : {}),
      ...(seed.messages ? { resumed: true } : {}),
      workspace: rt.workspace,
      ...(rt.ripgrepPath ? { ripgrepPath: rt.ripgrepPath } : {}),
      locks,
      tools,
      permissions: this.decider,
      secrets: runtime.secrets,
      asker: rt.asker ?? denyingAsker,
      ...(rt.mcp ? { mcp: rt.mcp } : {}),
      createProvider: createTaskProvider,
      beginRun: (start) => this.phases.begin(start),
      publish: (e) => this.emit(e),
      startSubtask: (sub) => {
        const child = runtime.ensureSubtask(this, sub);
        this.children.add(child);
        return child;
      },
      // Hooks and MCP servers cross to a worker: the worker runs the turn's hooks the host approved
      // (queryParts; the task's own hooks run here), and calls the MCP servers, which stay in this
      // process, through it (workers/mcpHostServer.ts).
      ...(pool ? { remote: remoteTurnOf(this.remoteSide(), pool, rt, parentId !== undefined) } : {}),
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
        mode: this.mode,
        limits: { ...DEFAULT_LIMITS, ...rt.limits, ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}) },
        ...(seed.messages ? { messages: seed.messages } : {}),
        ...(seed.userMessages ? { userMessages: seed.userMessages } : {}),
        // What earlier runs cost: the task machine adds each run to it.
        ...(seed.transcript ? { usage: usageOf(seed.transcript), costUsd: seed.transcript.usage.costUsd } : {}),
        // Run numbers go on from the log's last run (its phases, the chat header, `keel tasks show`).
        ...(seed.transcript?.phases ? { runs: seed.transcript.phases.run } : {}),
      },
    });
    this.actor.subscribe({ error: (err) => runtime.log('error', `task ${id} machine error: ${(err as Error).message}`) });
  }

  /** Starts on the next microtask, so a host that subscribes right after `startTask` sees every event. */
  start(prompt: string): void {
    queueMicrotask(() => {
      this.actor.start();
      this.beginCommand(this.options.command);
      this.actor.send({ type: 'START', text: prompt, ...(this.options.images?.length ? { images: this.options.images } : {}) });
    });
  }

  /** Continues a settled stored task with a new user message (on a later turn of the event loop, like `resumeInterrupted`). */
  continueWith(followUp: string): void {
    setImmediate(() => {
      this.actor.start();
      this.beginCommand(this.options.command);
      this.actor.send({ type: 'START', text: followUp, ...(this.options.images?.length ? { images: this.options.images } : {}) });
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

  /** Stops the actor, then writes and closes the log and releases the lock and the task's continuation keys. */
  stop(): void {
    if (!this.stopped) this.hooks?.sessionEnd();
    // What is left of the run's phases ends (recorded as failed), then its held `done`.
    this.phases.stop();
    this.flushDone();
    this.stopped = true;
    this.actor.stop();
    this.recorder?.close();
    this.locks.endScope(taskLockKey(this.id));
  }

  /**
   * Stops a task where it is (the request in flight and a running command are aborted) and, if it
   * had not settled, records it as `interrupted` — a `task` event listeners see too — before the
   * log is closed and the lock released, so it can be resumed later. Synchronous; idempotent.
   * Returns whether it was interrupted (false for a settled or already stopped task).
   */
  interrupt(): boolean {
    if (this.stopped) return false;
    const unsettled = this.lastDone === null && this.heldDone === null;
    this.actor.stop();
    if (unsettled) {
      // The run's phases end (`failed`, recorded) first: `interrupted` stays the task's last event.
      this.phases.stop();
      this.emit({ type: 'task', taskId: this.id, state: 'interrupted', title: this.transcriptState.title });
    }
    this.stop();
    return unsettled;
  }

  transcript(): TaskTranscript {
    return this.transcriptState;
  }

  eventSeq(): number {
    return this.delivered;
  }

  /**
   * True once stopped (its log closed, its lock released): a task whose worker died, or that was
   * forgotten or interrupted. Such a handle never runs again; its runtime continues the task from
   * its log instead (`TaskRuntime.resume`).
   */
  get hasStopped(): boolean {
    return this.stopped;
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

  sendUserMessage(text: string, extras: MessageExtras = {}): void {
    // A message sent while a run goes on is refused by the machine: it must not narrow that run.
    if (!this.transcriptState.tags.includes('running')) this.beginCommand(extras.command);
    this.actor.send({ type: 'USER_MESSAGE', text, ...(extras.images?.length ? { images: extras.images } : {}) });
  }

  /** The model later runs use (`/model`); the turn running now keeps its own. */
  setModel(model: string): void {
    const id = normalizeModelId(model);
    if (!id) return;
    this.modelAfterRun = null;
    this.actor.send({ type: 'SET_MODEL', model: id });
  }

  /** The model the task's next run uses. */
  model(): string {
    return this.actor.getSnapshot().context.model;
  }

  /** A custom command's run: its allowed-tools and model hold until that run's `done`. */
  private beginCommand(command: CommandRun | undefined): void {
    this.narrowing = command?.narrowing ?? null;
    const id = command?.model ? normalizeModelId(command.model) : null;
    if (!id || this.provider === 'demo') return;
    const current = this.actor.getSnapshot().context.model;
    if (id === current) return;
    this.modelAfterRun = current;
    this.actor.send({ type: 'SET_MODEL', model: id });
  }

  /** A run ended: a command's narrowing and model end with it. */
  private endCommand(): void {
    this.narrowing = null;
    if (this.modelAfterRun !== null) {
      const back = this.modelAfterRun;
      this.modelAfterRun = null;
      this.actor.send({ type: 'SET_MODEL', model: back });
    }
  }

  cancel(): void {
    // After the turn loop: cancelling stops the gatekeeper's lesson call (the run still completed).
    if (this.heldDone) this.phases.stop();
    this.actor.send({ type: 'CANCEL' });
  }

  retry(): void {
    this.actor.send({ type: 'RETRY' });
  }

  /** The mode from now on, for this task and every live subtask of it (they follow their parent). */
  setMode(mode: PermissionMode): void {
    this.mode = mode;
    this.actor.send({ type: 'SET_MODE', mode });
    for (const child of this.children) child.setMode(mode);
  }

  /**
   * The worker running this task's query died: the task is interrupted (recorded, resumable; the
   * query is never re-run by itself), with the reason as an error event and `done` interrupted so
   * whoever waits for it hears it ended.
   */
  private workerLost(message: string): void {
    if (this.stopped || this.lastDone || this.heldDone) return;
    this.actor.stop();
    // The run's phases end (`failed`, recorded) first: `interrupted` stays the task's last event.
    this.phases.stop();
    this.emit({ type: 'error', taskId: this.id, code: 'worker_lost', message, retryable: true });
    this.emit({ type: 'task', taskId: this.id, state: 'interrupted', title: this.transcriptState.title });
    this.emit({ type: 'done', taskId: this.id, status: 'interrupted', stopReason: null });
    this.stop();
  }

  /** This task's mode and its ancestors', nearest first (a worker bounds a subtask by all of them). */
  ancestorModes(): PermissionMode[] {
    return [this.mode, ...(this.parent?.ancestorModes?.() ?? [])];
  }

  /** What the worker side of this task's turn loop needs of it (remoteTask.ts). */
  private remoteSide(): RemoteTaskSide {
    return {
      id: this.id,
      rootId: this.rootId,
      transcriptPath: this.transcriptPath,
      loopProgressFile: this.loopProgressFile,
      narrowing: () => this.narrowing,
      skills: () => this.runtime.skills(),
      secrets: this.runtime.secrets,
      providerConfig: () => this.providerConfig,
      parentModes: () => this.parent?.ancestorModes?.() ?? [],
      decide: (call) => this.decideAsParent(call),
      workerLost: (message) => this.workerLost(message),
      hookStop: (reason) => this.hookStop(reason),
      log: (level, message) => this.runtime.log(level, message),
    };
  }

  /** A hook answered `"continue": false` (here or on the worker): the task stops, the reason shown. */
  private hookStop(reason: string): void {
    this.runtime.log('warn', `a hook stopped task ${this.id}: ${reason}`);
    this.cancel();
  }

  permissionMode(): PermissionMode {
    return this.mode;
  }

  decideAsParent(call: PermissionCall): Promise<EngineDecision> {
    return this.decider.decide(call, this.mode);
  }

  abandon(): void {
    this.actor.send({ type: 'ABANDON' });
  }

  settled(): Promise<TaskEvent & { type: 'done' }> {
    if (this.lastDone) return Promise.resolve(this.lastDone);
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  /**
   * Publishes one event of this task: to the log first, then the transcript, then listeners.
   * A run's `done` is held back while the run's phases finish (the gatekeeper and the memory
   * write come after the turn loop ends), so `done` stays the last event of a run for every reader.
   */
  private emit(event: TaskEvent): void {
    if (this.stopped) return;
    if (event.type === 'done' && this.heldDone === null) {
      this.heldDone = event;
      this.phases.observe(event);
      const held = event;
      void this.phases.finished().then(() => {
        if (this.heldDone === held) this.flushDone();
      });
      return;
    }
    // A new run starts while the last one's phases wind down: its `done` comes first.
    if (event.type === 'task' && this.heldDone) this.flushDone();
    this.deliver(event);
    this.phases.observe(event);
  }

  private flushDone(): void {
    const done = this.heldDone;
    this.heldDone = null;
    if (done) this.deliver(done);
  }

  private deliver(event: TaskEvent): void {
    if (this.stopped) return;
    if (event.type === 'error') {
      const advice = this.runtime.services().options.advise?.({ code: event.code, provider: this.provider });
      if (advice) event = { ...event, message: `${event.message} ${advice}` };
    }
    // The log first: what listeners saw is never ahead of what was recorded.
    this.recorder?.record(event);
    // Then the process's event bus: every event, log-only ones too (activity listeners take the view ones).
    const parent = this.parentId ? { parentId: this.parentId } : {};
    const taskSeq = this.delivered + 1;
    this.runtime.services().options.feed?.publishTask(event, { ...parent, title: this.transcriptState.title, taskSeq });
    this.transcriptState = applyTaskEvent(this.transcriptState, event);
    // Counted once the transcript holds it: a snapshot taken with `eventSeq()` never claims more.
    this.delivered = taskSeq;
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        this.runtime.log('warn', `a task listener threw: ${(err as Error).message}`);
      }
    }
    if (event.type === 'task' && event.tags?.includes('running')) this.lastDone = null;
    if (event.type === 'done') {
      this.endCommand();
      // The run is over and its continuation keys (unique per run) can never recur: let them go.
      this.locks.endScope(taskLockKey(this.id));
      this.lastDone = event;
      const waiters = this.settleWaiters;
      this.settleWaiters = [];
      for (const w of waiters) w(event);
    }
  }
}

function usageOf(t: TaskTranscript): Usage {
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = t.usage;
  return { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens };
}

export function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New task';
}
