import { createActor, type Actor } from 'xstate';
import type { InstructionsFile } from '../context/instructions';
import type { TaskEvent } from '../../shared/domain/events';
import { costUsd } from '../providers/pricing';
import type { ConversationMessage, Usage } from '../../shared/domain/messages';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { TaskHookPoints } from '../hooks/taskHooks';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../../shared/domain/transcript';
import { taskLockKey, type LockManager } from '../locks/lockManager';
import type { AttachedImage, DoneEvent, PendingSubtask } from '../machines/task/task.machine';
import { taskStateTags } from '../machines/task/taskTags';
import type { ProjectMemory } from '../memory/projectMemory';
import type { TrustView } from '../trust/items';
import type { MemorySettings } from '../memory/settings';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import { denyingAsker } from '../permissions/gate';
import { loadProvider } from '../providers/load';
import type { ProviderConfig } from '../providers/types';
import type { SecretKeeper } from '../security/secretKeeper';
import { planResume } from '../store/resumePlan';
import type { TaskRecorder } from '../store/taskRecorder';
import type { OpenedTask } from '../store/taskStore';
import type { ToolRegistry } from '../tools/registry';
import { boundedByAncestors } from './childPermissions';
import { allowingLoopProgress } from './loopPermission';
import { DEFAULT_LIMITS } from './limits';
import type { TaskRuntimeOptions } from './options';
import type { PermissionDecider } from './permissionCheck';
import type { RunPhaseServices } from './runPhases';
import type { CommandRun, MessageExtras, StartTaskOptions, TaskHandle } from './types';
import { narrowedBy, type CommandNarrowing } from '../commands/narrowing';
import { budgetFor, type TaskBudget } from './taskBudget';
import { normalizeModelId } from '../providers/modelChoice';
import type { SkillRef } from '../tools/skill';
import type { MessageAttachment } from '../../shared/domain/attachments';
import { wireTaskMachine } from './wiring';
import type { WorkerPool } from '../workers/pool';
import { remoteTurnOf, type RemoteTaskSide } from './remoteTask';
import { join } from 'node:path';
import { TaskCheckpoints } from '../checkpoints/recorder';
import { errorMessage } from '../../shared/domain/errors';
import { createPromptHookModel } from '../hooks/promptModel';
import type { ModelProvider } from '../providers/types';
import type { KeelError } from '../../shared/domain/errors';
import type { PromptHookModel } from '../hooks/promptHook';

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
  /** The person's approvals of the workspace (nothing, when the host gave no trust). */
  readonly trust: TrustView;
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
 * parent, and is never allowed more than any task above it would be (`boundedByAncestors`).
 */
/** What a subtask needs of its live parent. */
export interface TaskParent {
  /** The root task's id (the session a task and its sub-agents share). */
  readonly rootId: string;
  /** The parent's mode right now. */
  permissionMode(): PermissionMode;
  /** The parent's mode and its ancestors', nearest first, as they are now. */
  ancestorModes(): PermissionMode[];
  /** The budget the parent spends from: its sub-agents spend from it too. */
  readonly budget: TaskBudget;
}

export class LiveTask implements TaskHandle, TaskParent {
  private readonly actor: Actor<ReturnType<typeof wireTaskMachine>>;
  private transcriptState: TaskTranscript;
  private readonly listeners = new Set<(e: TaskEvent) => void>();
  private settleWaiters: ((e: DoneEvent) => void)[] = [];
  private provider: ProviderConfig['provider'];
  private readonly recorder: TaskRecorder | undefined;
  private rebuilt: (() => ConversationMessage[]) | null = null;
  private readonly decider: PermissionDecider;
  private readonly children = new Set<LiveTask>();
  private readonly locks: LockManager;
  /** A loop iteration's progress file (it may write it without a prompt); sent with each query to a worker. */
  private readonly loopProgressFile: string | undefined;
  /** The root task's id: this task's for a top-level task, its top ancestor's for a sub-agent. */
  readonly rootId: string;
  private readonly hooks: TaskHookPoints | undefined;
  /** Events delivered in this process: the transcript holds exactly these (`eventSeq`). */
  private delivered = 0;
  private readonly parent: TaskParent | undefined;
  /** The provider config the task last initialised with (a worker gets it with each query). */
  private providerConfig: ProviderConfig;
  /** The task's event log (hooks' `transcript_path`), or '' when it is not recorded. */
  private readonly transcriptPath: string;
  /** The task's checkpoints when it is recorded (turns in this process take them; a worker opens its own). */
  private readonly checkpoints: TaskCheckpoints | undefined;
  /** What this task spends from (docs/cli.md, "Budget"): its own, its parent's, or its loop's. */
  readonly budget: TaskBudget;
  private readonly budgetEvents: (() => void) | undefined;

  constructor(
    readonly id: string,
    readonly options: StartTaskOptions,
    private readonly runtime: TaskOwner,
    seed: TaskSeed,
    readonly parentId?: string,
    parent?: TaskParent,
  ) {
    const { options: rt, locks, tools, pool } = runtime.services();
    this.parent = parent;
    this.locks = locks;
    const mode = parent ? parent.permissionMode() : (options.mode ?? 'default');
    this.loopProgressFile = options.loopProgressFile;
    const defaultCap = typeof rt.maxBudgetUsd === 'function' ? rt.maxBudgetUsd() : rt.maxBudgetUsd;
    this.budget = budgetFor({
      shared: options.sharedBudget,
      parent: parent?.budget,
      capUsd: options.maxBudgetUsd,
      defaultCapUsd: defaultCap,
      stored: seed.transcript?.budget,
      storedOwnUsd: seed.transcript?.usage.costUsd ?? 0,
    });
    if (seed.transcript?.usage.costUsd) this.budget.record(id, seed.transcript.usage.costUsd);
    // A top-level task tells its budget as it changes (cap, spending of the whole tree), once one is set.
    this.budgetEvents = parent ? undefined : this.budget.subscribe(() => this.publishBudget());
    const own = options.loopProgressFile ? allowingLoopProgress(runtime.permissions, options.loopProgressFile, rt.workspace) : runtime.permissions;
    // A command's allowed-tools narrow every decision of its run, sub-agents' included (they ask their parent).
    this.decider = narrowedBy(parent ? boundedByAncestors(own, () => parent.ancestorModes()) : own, () => this.narrowing(), rt.workspace, rt.home);
    const providerFactory = rt.providerFactory ?? ((config: ProviderConfig) => loadProvider(config));
    const model = options.provider.model;
    this.provider = options.provider.provider;
    this.providerConfig = options.provider;
    this.recorder = seed.recorder;
    const title = seed.title;
    this.transcriptState = seed.transcript ?? { ...emptyTranscript(id, title, options.provider.provider === 'demo' ? 'demo model' : model), tags: taskStateTags('created') };
    this.rootId = parent?.rootId ?? id;
    this.transcriptPath = seed.recorder && runtime.transcriptPath ? runtime.transcriptPath(id) : '';
    this.checkpoints =
      seed.recorder && rt.checkpoints !== false
        ? new TaskCheckpoints({
            dir: join(seed.recorder.dir, 'checkpoints'),
            workspace: rt.workspace,
            ...(rt.checkpoints ? { limits: rt.checkpoints } : {}),
            ...(rt.home ? { home: rt.home } : {}),
            log: (level, message) => runtime.log(level, `task ${id}: ${message}`),
          })
        : undefined;
    this.hooks = rt.hooks
      ? new TaskHookPoints(rt.hooks, {
          taskId: id,
          sessionId: this.rootId,
          workspace: rt.workspace,
          transcriptPath: this.transcriptPath,
          mode: () => this.permissionMode(),
          requestStop: (reason) => this.hookStop(reason),
          log: (level, message) => runtime.log(level, message),
          promptModel: this.promptHookModel(id, (config) => {
            runtime.secrets.remember(config.apiKey);
            return providerFactory(config);
          }),
        })
      : undefined;
    const createTaskProvider = async () => {
      let config = options.provider;
      if (options.refreshProvider) {
        try {
          config = await options.refreshProvider();
        } catch (err) {
          return { code: 'internal' as const, message: `Could not read the provider settings: ${errorMessage(err)}`, retryable: true };
        }
      }
      // The key this task's provider uses is one Keel holds: kept from tools and redacted.
      runtime.secrets.remember(config.apiKey);
      this.providerConfig = config;
      this.provider = config.provider;
      return providerFactory(config);
    };
    const phases: Omit<RunPhaseServices, 'createProvider' | 'publish'> = {
      taskId: id,
      workspace: rt.workspace,
      ...(rt.home ? { home: rt.home } : {}),
      subtask: parent !== undefined || parentId !== undefined,
      loopIteration: options.loopProgressFile !== undefined,
      memory: () => runtime.projectMemory(),
      skills: () => runtime.skills(),
      settings: () => runtime.memorySettings(),
      secrets: runtime.secrets,
      trust: runtime.trust,
      held: (items) => rt.trust?.reportHeld(items),
      // InstructionsLoaded hooks, for each file the run read into its context.
      ...(this.hooks ? { instructionsLoaded: (files: InstructionsFile[]) => this.hooks!.instructionsLoaded(files, (display) => files.find((f) => f.display === display)?.path) } : {}),
      ownMemory: async (item) => rt.trust?.recordOwn([item]),
      locks,
      providerKind: () => this.provider,
      // The lesson call uses the model the run's turns used.
      model: () => this.actor.getSnapshot().context.model,
      conversation: () => this.actor.getSnapshot().context.messages,
      // The lesson call is a priced request too: it is made only when the budget leaves room for it.
      admit: (estimateUsd) => this.budget.verdict(estimateUsd) === null,
      // Priced at the model the call used; the task machine owns the totals.
      charge: (usage) => this.actor.send({ type: 'CHARGE', usage, costUsd: costUsd(this.actor.getSnapshot().context.model, usage) }),
      log: (level, message) => runtime.log(level, message),
    };
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
      ...(this.checkpoints ? { checkpoints: this.checkpoints } : {}),
      createProvider: createTaskProvider,
      phases,
      // `done` never announces a run whose record failed: that failure reaches the machine first
      // (RECORD_FAILED, on a microtask), which ends the run failed instead. A record that failed
      // in an earlier run (already told) does not hold this run's `done` back.
      recorded: () => this.recorded().catch(() => new Promise<void>((resolve) => setImmediate(resolve))),
      release: () => this.stop(),
      // A command's model is not the demo's to take.
      commandModelApplies: () => this.provider !== 'demo',
      publish: (e) => this.emit(e),
      startSubtask: (sub) => {
        const child = runtime.ensureSubtask(this, sub);
        // SubagentStart in this task's hooks, once per sub-agent (a rebuilt parent re-attaches without it).
        if (!this.children.has(child)) this.hooks?.subagentStart(child.id);
        this.children.add(child);
        return child;
      },
      // Hooks and MCP servers cross to a worker: the worker runs the turn's hooks the host approved
      // (queryParts; the task's own hooks run here), and calls the MCP servers, which stay in this
      // process, through it (mcp/onWorkers/hostServer.ts).
      ...(pool ? { remote: remoteTurnOf(this.remoteSide(), pool, rt, parentId !== undefined) } : {}),
      ...(this.recorder ? { durable: () => this.recorder!.durable() } : {}),
      // Every priced request of the turn (in process or on a worker) asks the budget first.
      admit: async (request) => this.budget.verdict(request.estimateUsd),
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
        mode,
        limits: { ...DEFAULT_LIMITS, ...rt.limits, ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}) },
        ...(seed.messages ? { messages: seed.messages } : {}),
        ...(seed.userMessages ? { userMessages: seed.userMessages } : {}),
        // What earlier runs cost: the task machine adds each run to it.
        ...(seed.transcript ? { usage: usageOf(seed.transcript), costUsd: seed.transcript.usage.costUsd } : {}),
        // Run numbers go on from the log's last run (its phases, the chat header, `keel tasks show`).
        ...(seed.transcript?.phases ? { runs: seed.transcript.phases.run } : {}),
        // With a pool, every run of the turn loop goes to a worker (the task machine's running.loop.onWorker).
        runner: pool ? 'worker' : 'local',
      },
    });
    this.actor.subscribe({ error: (err) => runtime.log('error', `task ${id} machine error: ${errorMessage(err)}`) });
    // Started at once, in `created` (which publishes nothing): an interrupt before the first
    // message is the machine's too.
    this.actor.start();
    this.recorder?.onFailure((message) => this.recordFailed(message));
  }

  /** Starts on the next microtask, so a host that subscribes right after `startTask` sees every event. */
  start(prompt: string): void {
    queueMicrotask(() => {
      this.actor.send({ type: 'START', text: prompt, ...this.extrasOf(this.options) });
    });
  }

  /** Continues a settled stored task with a new user message (on a later turn of the event loop, like `resumeInterrupted`). */
  continueWith(followUp: string): void {
    setImmediate(() => {
      this.actor.send({ type: 'START', text: followUp, ...this.extrasOf(this.options) });
    });
  }

  /** Continues a stored task that paused at its budget, with no new message (its next request is asked again). */
  continueAtBudget(): void {
    setImmediate(() => this.actor.send({ type: 'CONTINUE' }));
  }

  /**
   * Resumes an interrupted stored task: marks it interrupted, then RESUME with the note; the
   * `reconstructing` state records the repairs (cut-off answer, unconfirmed tool results) and
   * hands the machine the rebuilt conversation.
   */
  resumeInterrupted(opened: OpenedTask, followUp: string | undefined): void {
    // The follow-up ends the resume note's text; its images, mentions, command and what was typed
    // go with the note as with any message (a follow-up's extras are this task's options).
    const plan = planResume(opened.replay, Date.now(), followUp);
    this.rebuilt = () => {
      for (const message of plan.repairs) this.emit({ type: 'message', taskId: this.id, message });
      return plan.conversation;
    };
    // A later turn of the event loop: whoever awaited `resume` subscribes first and sees every event.
    setImmediate(() => {
      this.actor.send({ type: 'MARK_INTERRUPTED' });
      this.actor.send({ type: 'RESUME', note: plan.note, ...this.extrasOf(this.options) });
    });
  }

  /** Stops the actor, then writes and closes the log and releases the lock and the task's continuation keys. */
  stop(): void {
    // A run still finishing publishes its `done`; the machine ends what is left of the run's phases.
    if (!this.hasStopped) this.actor.send({ type: 'CLOSE' });
    // Once per session, also for a task whose machine ended (`failed`).
    this.hooks?.sessionEnd();
    this.budgetEvents?.();
    this.actor.stop();
    // Its last writes and the lock's release go on off the event loop (TaskRuntime.closed waits for them).
    void this.recorder?.close();
    void this.checkpoints?.close();
    this.locks.endScope(taskLockKey(this.id));
  }

  /**
   * Stops a task where it is (the request in flight and a running command are aborted) and, if it
   * had not settled, records it as `interrupted` — a `task` event listeners see too — before the
   * log is closed and the lock released, so it can be resumed later. Synchronous; idempotent.
   * Returns whether it was interrupted (false for a settled or already stopped task).
   */
  interrupt(): boolean {
    if (this.hasStopped) return false;
    // The task machine takes INTERRUPT in every running state (and only there): the run's phases
    // end (`failed`, recorded) first, then `interrupted`, the task's last event.
    const unsettled = this.actor.getSnapshot().hasTag('running');
    this.actor.send({ type: 'INTERRUPT' });
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
    // The actor's own status: stopped here (`stop`) — or the machine ended (`failed`) letting it go
    // itself (`release`, a failed record). A task given up (ABANDON) is done but still held until stopped.
    const snap = this.actor.getSnapshot();
    return snap.status === 'stopped' || (snap.status === 'done' && snap.context.ending !== null);
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
    // A command's message narrows the run that answers it (the task machine's `startCommand`), never the one going on.
    this.actor.send({ type: 'USER_MESSAGE', text, ...this.extrasOf(extras) });
  }

  withdrawQueued(id: string): void {
    this.actor.send({ type: 'UNQUEUE', id });
  }

  /** What a message carries besides its text, as the task machine takes it. */
  private extrasOf(extras: MessageExtras): { attachments?: MessageAttachment[]; images?: AttachedImage[]; command?: CommandRun; typed?: string } {
    return {
      ...(extras.attachments?.length ? { attachments: extras.attachments } : {}),
      ...(extras.images?.length ? { images: extras.images } : {}),
      ...(extras.command ? { command: extras.command } : {}),
      ...(extras.typed !== undefined ? { typed: extras.typed } : {}),
    };
  }

  /** The model later runs use (`/model`); the turn running now keeps its own. */
  setModel(model: string): void {
    const id = normalizeModelId(model);
    if (!id) return;
    this.actor.send({ type: 'SET_MODEL', model: id });
  }

  /** The model the task's next run uses. */
  model(): string {
    return this.actor.getSnapshot().context.model;
  }

  /** While a custom command's run lasts (the task machine's `runCommand`): its `allowed-tools` (docs/commands.md). */
  private narrowing(): CommandNarrowing | null {
    return this.actor.getSnapshot().context.runCommand?.narrowing ?? null;
  }

  cancel(): void {
    // After the turn loop (`finishing`), the machine's CANCEL stops the gatekeeper's lesson call (the run still completed).
    this.actor.send({ type: 'CANCEL' });
  }

  retry(): void {
    this.actor.send({ type: 'RETRY' });
  }

  /** A new cap for this task's budget; a task paused at its budget goes on (its next request is asked again). */
  setBudget(capUsd: number | null): void {
    this.budget.setCap(capUsd);
    if (this.actor.getSnapshot().hasTag('budgetReached')) this.actor.send({ type: 'RETRY' });
  }

  /** The `budget` event of a top-level task whose budget has (or had) a cap. */
  private publishBudget(): void {
    const capUsd = this.budget.capUsd;
    if (capUsd === null && this.transcriptState.budget === undefined) return;
    this.emit({ type: 'budget', taskId: this.id, capUsd, spentUsd: this.budget.total() });
  }

  /** The mode from now on, for this task and every live subtask of it (they follow their parent). */
  setMode(mode: PermissionMode): void {
    this.actor.send({ type: 'SET_MODE', mode });
    for (const child of this.children) child.setMode(mode);
  }

  /**
   * The task's record could not be saved (a full disk, its folder removed, its lock lost): a run
   * whose record failed must not look like a success. The task machine decides (RECORD_FAILED): a
   * run in progress — or finishing, its `done` not yet published — is stopped where it is and
   * ends `failed` with a `record_failed` error saying why, and the task is let go; after a run
   * ended, the error is published all the same. The store has marked meta.json failed as far as
   * the disk allowed.
   */
  private recordFailed(failure: string): void {
    if (this.hasStopped) return;
    this.runtime.log('info', `task ${this.id}: ${failure}`);
    this.actor.send({ type: 'RECORD_FAILED', failure });
  }

  /**
   * Resolves when everything this task published so far is saved (its log fsynced, meta.json
   * written); rejects with StoreError('io') saying why when its record failed. A task without a
   * store resolves at once.
   */
  recorded(): Promise<void> {
    return this.recorder ? this.recorder.recorded() : Promise.resolve();
  }

  /** This task's mode and its ancestors', nearest first (a worker bounds a subtask by all of them). */
  ancestorModes(): PermissionMode[] {
    return [this.permissionMode(), ...(this.parent?.ancestorModes() ?? [])];
  }

  /** What the worker side of this task's turn loop needs of it (remoteTask.ts). */
  private remoteSide(): RemoteTaskSide {
    return {
      id: this.id,
      ...(this.checkpoints ? { checkpoints: { dir: this.checkpoints.store.dir, limits: this.checkpoints.limits } } : {}),
      rootId: this.rootId,
      transcriptPath: this.transcriptPath,
      loopProgressFile: this.loopProgressFile,
      narrowing: () => this.narrowing(),
      skills: () => this.runtime.skills(),
      secrets: this.runtime.secrets,
      providerConfig: () => this.providerConfig,
      parentModes: () => this.parent?.ancestorModes() ?? [],
      decide: (call) => this.decide(call),
      hookStop: (reason) => this.hookStop(reason),
      log: (level, message) => this.runtime.log(level, message),
    };
  }

  /** A hook answered `"continue": false` (here or on the worker): the task stops, the reason shown. */
  /**
   * What this task's prompt hooks ask when they run in this process (docs/hooks.md, "Prompt
   * hooks"): the task's provider (made once per provider settings), asked against the task's
   * budget; the cost goes to the task (to its running turn, when one runs here: the machine
   * routes CHARGE).
   */
  private promptHookModel(taskId: string, make: (config: ProviderConfig) => ModelProvider | KeelError | Promise<ModelProvider | KeelError>): PromptHookModel {
    let made: { config: ProviderConfig; provider: Promise<ModelProvider | string> } | null = null;
    return createPromptHookModel({
      taskId,
      provider: () => {
        const config = this.providerConfig;
        if (made?.config !== config) {
          made = { config, provider: Promise.resolve(make(config)).then((p) => ('stream' in p ? p : p.message)) };
        }
        return made.provider;
      },
      taskModel: () => this.actor.getSnapshot().context.model,
      admit: async (estimateUsd) => this.budget.verdict(estimateUsd),
      charge: (usage, costUsd) => this.actor.send({ type: 'CHARGE', usage, costUsd }),
    });
  }

  private hookStop(reason: string): void {
    this.runtime.log('warn', `a hook stopped task ${this.id}: ${reason}`);
    this.cancel();
  }

  /** The task's mode now (the task machine's: SET_MODE changes it). */
  permissionMode(): PermissionMode {
    return this.actor.getSnapshot().context.mode;
  }

  /** This task's own decision for `call` now: its rules, its mode, bounded by its ancestors'. */
  decide(call: PermissionCall): Promise<EngineDecision> {
    return this.decider.decide(call, this.permissionMode());
  }

  abandon(): void {
    this.actor.send({ type: 'ABANDON' });
  }

  settled(): Promise<DoneEvent> {
    // The machine's own record of the current run's `done` (null while a run goes on).
    const done = this.actor.getSnapshot().context.lastDone;
    if (done) return Promise.resolve(done);
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  /**
   * Publishes one event of this task: to the log first, then the transcript, then listeners. The
   * run's phases hear of the turn loop's tool calls and tokens from the task machine, which its
   * turn loop tells (`RUN_EVENT`), not from here. A run's `done`
   * comes from the task machine once the run's phases and its record are over (its `finishing`
   * state), so it is the run's last event. Once this process let the task go (its actor stopped),
   * late callbacks (output of a command being killed) publish nothing more.
   */
  private emit(event: TaskEvent): void {
    if (this.hasStopped) return;
    this.deliver(event);
    // Each usage event carries the task's running total: the budget counts it (answers, retries, summaries, the lesson).
    if (event.type === 'usage') this.budget.record(this.id, event.totalCostUsd);
  }

  private deliver(event: TaskEvent): void {
    if (event.type === 'error') {
      const advice = this.runtime.services().options.advise?.({ code: event.code, provider: this.provider, taskId: this.id });
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
        this.runtime.log('warn', `a task listener threw: ${errorMessage(err)}`);
      }
    }
    if (event.type === 'done') {
      // The run is over and its continuation keys (unique per run) can never recur: let them go.
      this.locks.endScope(taskLockKey(this.id));
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
