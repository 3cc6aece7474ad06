import { randomUUID } from 'node:crypto';
import { createActor, type Actor } from 'xstate';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent } from '../../shared/domain/events';
import type { ToolResultBlock } from '../../shared/domain/messages';
import { applyTaskEvent, emptyTranscript, type TaskTranscript } from '../../shared/domain/transcript';
import { LockManager } from '../locks/lockManager';
import type { PendingSubtask } from '../machines/task/task.machine';
import type { TurnLimits } from '../machines/turn/turn.machine';
import { denyingAsker, type PermissionAsker } from '../permissions/gate';
import { createProvider } from '../providers/index';
import { costUsd } from '../providers/pricing';
import type { ModelProvider, ProviderConfig } from '../providers/types';
import { createToolRegistry, type ToolRegistry } from '../tools/registry';
import type { StartTaskOptions, TaskHandle } from './types';
import { wireTaskMachine } from './wiring';

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
  storageDir?: string;
}

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

  constructor(private readonly options: TaskRuntimeOptions) {
    this.locks = options.locks ?? new LockManager();
    this.tools = options.tools ?? createToolRegistry();
  }

  startTask(opts: StartTaskOptions, parentId?: string): TaskHandle {
    const id = randomUUID();
    const task = new LiveTask(id, opts, this, parentId);
    this.tasks.set(id, task);
    task.start(opts.prompt);
    return task;
  }

  get(id: string): TaskHandle | undefined {
    return this.tasks.get(id);
  }

  list(): TaskHandle[] {
    return [...this.tasks.values()].filter((t) => !t.parentId);
  }

  dispose(): void {
    for (const t of this.tasks.values()) t.stop();
    this.tasks.clear();
    this.subtasks.clear();
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

class LiveTask implements TaskHandle {
  private readonly actor: Actor<ReturnType<typeof wireTaskMachine>>;
  private transcriptState: TaskTranscript;
  private readonly listeners = new Set<(e: TaskEvent) => void>();
  private settleWaiters: ((e: TaskEvent & { type: 'done' }) => void)[] = [];
  private totalCost = 0;
  private model: string;
  private lastDone: (TaskEvent & { type: 'done' }) | null = null;

  constructor(
    readonly id: string,
    readonly options: StartTaskOptions,
    private readonly runtime: TaskRuntime,
    readonly parentId?: string,
  ) {
    const { options: rt, locks, tools } = runtime.services();
    const providerFactory = rt.providerFactory ?? createProvider;
    const model = options.provider.model;
    this.model = model;
    const title = titleOf(options.prompt);
    this.transcriptState = emptyTranscript(id, title, options.provider.provider === 'demo' ? 'demo model' : model);
    const machine = wireTaskMachine({
      taskId: id,
      workspace: rt.workspace,
      ...(rt.ripgrepPath ? { ripgrepPath: rt.ripgrepPath } : {}),
      locks,
      tools,
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
    });
    this.actor = createActor(machine, {
      input: {
        taskId: id,
        title,
        model,
        mode: options.mode ?? 'default',
        limits: { ...DEFAULT_LIMITS, ...rt.limits, ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}) },
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

  stop(): void {
    this.actor.stop();
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
