import { createActor, type Actor } from 'xstate';
import type { TaskEvent } from '../../shared/domain/events';
import type { ConversationMessage, ToolResultBlock } from '../../shared/domain/messages';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../../shared/domain/transcript';
import type { PendingSubtask } from '../machines/task/task.machine';
import { denyingAsker } from '../permissions/gate';
import { createProvider } from '../providers/index';
import { costUsd } from '../providers/pricing';
import type { TaskRecorder } from '../store/taskRecorder';
import { planResume } from '../store/resumePlan';
import type { OpenedTask } from '../store/taskStore';
import { DEFAULT_LIMITS } from './limits';
import type { LockManager } from '../locks/lockManager';
import type { ToolRegistry } from '../tools/registry';
import type { TaskRuntimeOptions } from './options';
import type { PermissionDecider } from './wiring';
import type { PermissionMode, StartTaskOptions, TaskHandle } from './types';
import { wireTaskMachine } from './wiring';

/** Where a LiveTask starts from: nothing (a new task) or what its log holds. */
/** What a live task needs from the runtime that owns it. */
export interface TaskOwner {
  services(): { options: TaskRuntimeOptions; locks: LockManager; tools: ToolRegistry };
  readonly permissions: PermissionDecider;
  ensureSubtask(parent: LiveTask, sub: PendingSubtask): LiveTask;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

export interface TaskSeed {
  title: string;
  recorder: TaskRecorder | undefined;
  transcript?: TaskTranscript;
  messages?: ConversationMessage[];
  userMessages?: number;
  costUsd?: number;
}

export function seedOf(opened: OpenedTask): TaskSeed {
  const r = opened.replay;
  return { title: opened.meta.title, recorder: opened.recorder, transcript: r.transcript, messages: r.conversation, userMessages: r.userMessages, costUsd: r.costUsd };
}

export class LiveTask implements TaskHandle {
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
    private readonly runtime: TaskOwner,
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
      ...(rt.mcp ? { mcp: rt.mcp } : {}),
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

export function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New task';
}
