import type { ProviderConfig } from '../../../src/core/providers/types';
import type { MessageExtras, StartTaskOptions, TaskHandle } from '../../../src/core/runtime/types';
import { summaryOf } from '../../../src/shared/domain/attachments';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { EventBus } from '../../../src/core/events/eventBus';
import { ActivityFeed } from '../../../src/core/events/activityFeed';
import type { ErrorCode } from '../../../src/shared/domain/errors';
import { userMessageOf } from '../../../src/core/machines/turn/conversation';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import { turnStateTags } from '../../../src/core/machines/turn/turnTags';
import { type TaskTranscript, applyTaskEvent, emptyTranscript } from '../../../src/shared/domain/transcript';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import type { PermissionAnswer, PermissionRequest } from '../../../src/core/permissions/gate';
import type { SettingsState } from '../../../src/shared/protocol/chatMessages';
import type { PermissionDecider } from '../../../src/core/runtime/permissionCheck';
import type { ChatHost, TaskRuntimeLike } from '../../../src/extension/chatController';
import type { WorkbenchServices } from '../../../src/extension/viewRequests';
import type { Logger } from '../../../src/extension/logger';

/**
 * A task behind the TaskHandle interface whose model output the test emits by hand (`emit`,
 * `answer`, `fail`), and which otherwise behaves like the runtime's LiveTask — the contract suite
 * (taskHandleContract.test.ts) runs the same scenarios against both:
 * - nothing happens inside `startTask`: the run starts on the next microtask (user_message, task
 *   initializing, then task running), so a listener subscribed right away sees every event;
 * - a message sent while a run is under way is queued (`queued`) and sent when the run ends
 *   (`unqueued` sent, then its user_message starts the next run); a message after the run settled
 *   starts the next run at once; `withdrawQueued` takes one back (`unqueued` withdrawn);
 * - cancel ends a run `aborted` and gives queued messages back (`unqueued` returned), Retry runs a
 *   failed one again, abandon ends it `failed`;
 * - `settled()` resolves with the `done` event that ended the current run.
 */
export class FakeTask implements TaskHandle {
  private t: TaskTranscript;
  private readonly listeners = new Set<(e: TaskEvent) => void>();
  readonly followUps: string[] = [];
  /** What came with each message (start included), in order. */
  readonly extras: MessageExtras[] = [];
  /** Messages waiting for the run under way, as the task machine keeps them. */
  private queue: { id: string; text: string; extras: MessageExtras }[] = [];
  private queuedCount = 0;
  cancels = 0;
  retries = 0;
  /** The caps `setBudget` was given. */
  readonly budgets: (number | null)[] = [];
  readonly modes: string[] = [];
  /** A run is under way (between task initializing and its done event). */
  private running = false;
  private lastDone: (TaskEvent & { type: 'done' }) | null = null;
  private waiters: ((e: TaskEvent & { type: 'done' }) => void)[] = [];
  private userMessages = 0;

  /** Events delivered so far (`eventSeq`); each goes on `bus`, when given, with its number, as LiveTask does. */
  private delivered = 0;

  constructor(
    readonly id: string,
    readonly options: StartTaskOptions,
    private readonly bus?: EventBus,
  ) {
    this.t = emptyTranscript(id, options.prompt.slice(0, 40), options.provider.model);
    const first = { text: options.prompt, extras: options.attachments ? { attachments: options.attachments } : {} };
    queueMicrotask(() => this.run([first]));
  }

  eventSeq(): number {
    return this.delivered;
  }

  setBudget(capUsd: number | null): void {
    this.budgets.push(capUsd);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Publishes `e` as the task's machines would (the test plays the model and the tools). */
  emit(event: TaskEvent): void {
    // A state's event says what it means, as the machines' events do (their tags).
    const e: TaskEvent =
      event.type === 'task' && !event.tags ? { ...event, tags: taskStateTags(event.state) } : event.type === 'turn' && !event.tags ? { ...event, tags: turnStateTags(event.state) } : event;
    if (e.type === 'task' && e.tags?.includes('running')) {
      this.running = true;
      this.lastDone = null;
    }
    if (e.type === 'done') this.running = false;
    if (this.bus) new ActivityFeed(undefined, this.bus).publishTask(e, { taskSeq: this.delivered + 1 });
    this.t = applyTaskEvent(this.t, e);
    this.delivered++;
    for (const l of this.listeners) l(e);
    if (e.type === 'done') {
      this.lastDone = e;
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w(e);
    }
  }

  /** The model answers `text` and the run completes. */
  answer(text: string): void {
    this.emit({ type: 'assistant_start', taskId: this.id, messageId: `${this.id}-m${this.userMessages}`, model: this.t.model });
    this.emit({ type: 'text', taskId: this.id, delta: text });
    this.emit({ type: 'task', taskId: this.id, state: 'completed', title: this.t.title });
    this.emit({ type: 'done', taskId: this.id, status: 'completed', stopReason: 'end_turn' });
    this.sendQueued();
  }

  /** The run fails and the task waits for the user (Retry, a message, or abandon). */
  fail(code: ErrorCode, message: string): void {
    this.emit({ type: 'task', taskId: this.id, state: 'awaitingUser', title: this.t.title });
    this.emit({ type: 'error', taskId: this.id, code, message, retryable: false });
    this.emit({ type: 'done', taskId: this.id, status: 'failed', stopReason: null });
    this.sendQueued();
  }

  transcript(): TaskTranscript {
    return this.t;
  }
  subscribe(listener: (event: TaskEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  sendUserMessage(text: string, extras: MessageExtras = {}): void {
    if (this.t.state === 'failed') return;
    this.followUps.push(text);
    if (this.running) {
      const id = `${this.id}-q${++this.queuedCount}`;
      this.queue.push({ id, text, extras });
      const attachments = extras.attachments?.length ? { attachments: extras.attachments.map(summaryOf) } : {};
      this.emit({ type: 'queued', taskId: this.id, message: { id, text, ...attachments } });
      return;
    }
    this.run([{ text, extras }]);
  }
  withdrawQueued(id: string): void {
    if (!this.queue.some((q) => q.id === id)) return;
    this.queue = this.queue.filter((q) => q.id !== id);
    this.emit({ type: 'unqueued', taskId: this.id, ids: [id], outcome: 'withdrawn' });
  }
  cancel(): void {
    this.cancels++;
    if (!this.running) return;
    // Like the turn: the request is aborted, then the run ends on a later turn of the event loop.
    setImmediate(() => {
      if (!this.running) return;
      const returned = this.queue.map((q) => q.id);
      this.queue = [];
      if (returned.length > 0) this.emit({ type: 'unqueued', taskId: this.id, ids: returned, outcome: 'returned' });
      this.emit({ type: 'task', taskId: this.id, state: 'aborted', title: this.t.title });
      this.emit({ type: 'done', taskId: this.id, status: 'aborted', stopReason: null });
    });
  }
  retry(): void {
    this.retries++;
    if (this.running || this.lastDone?.status !== 'failed' || this.t.state === 'failed') return;
    this.emit({ type: 'task', taskId: this.id, state: 'initializing', title: this.t.title });
    queueMicrotask(() => this.emit({ type: 'task', taskId: this.id, state: 'running', title: this.t.title }));
  }
  abandon(): void {
    if (this.running || this.lastDone?.status !== 'failed' || this.t.state === 'failed') return;
    this.emit({ type: 'task', taskId: this.id, state: 'failed', title: this.t.title });
  }
  setMode(mode: string): void {
    this.modes.push(mode);
  }
  settled(): Promise<TaskEvent & { type: 'done' }> {
    if (this.lastDone) return Promise.resolve(this.lastDone);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The run ended: what was queued during it starts the next run, as the task machine does. */
  private sendQueued(): void {
    if (this.queue.length === 0) return;
    const sent = this.queue;
    this.queue = [];
    this.emit({ type: 'unqueued', taskId: this.id, ids: sent.map((q) => q.id), outcome: 'sent' });
    this.run(sent);
  }

  /** A run starts with `messages` as its user messages: initializing at once, running a moment later. */
  private run(messages: { text: string; extras: MessageExtras }[]): void {
    for (const { text, extras } of messages) {
      this.userMessages += 1;
      this.extras.push(extras);
      const attachments = extras.attachments?.length ? { attachments: extras.attachments.map(summaryOf) } : {};
      this.emit({ type: 'user_message', taskId: this.id, id: `${this.id}-u${this.userMessages}`, text, ...attachments });
      this.emit({ type: 'message', taskId: this.id, message: userMessageOf(text, extras.attachments) });
    }
    this.emit({ type: 'task', taskId: this.id, state: 'initializing', title: this.t.title });
    queueMicrotask(() => this.emit({ type: 'task', taskId: this.id, state: 'running', title: this.t.title }));
  }
}

export class FakeRuntime implements TaskRuntimeLike {
  readonly tasks: FakeTask[] = [];
  disposed = false;
  /** The process's event bus: when set, the chat follows its tasks through it. */
  bus: EventBus | undefined;
  /** The permission engine mentions are resolved under (a test sets a real one); none: every mention's read is refused. */
  permissions: PermissionDecider | undefined;
  startTask(options: StartTaskOptions): FakeTask {
    const t = new FakeTask(`task-${this.tasks.length + 1}`, options, this.bus);
    this.tasks.push(t);
    return t;
  }
  get(id: string): FakeTask | undefined {
    return this.tasks.find((t) => t.id === id);
  }
  list(): FakeTask[] {
    return this.tasks.slice();
  }
  /** Subtasks registered by a test: `${parentId}:${toolCallId}` → task. */
  readonly subtasks = new Map<string, FakeTask>();
  subtaskFor(parentId: string, toolCallId: string): FakeTask | undefined {
    return this.subtasks.get(`${parentId}:${toolCallId}`);
  }
  /** Like TaskRuntime.interruptAll: the tasks that had not settled. */
  interrupted: string[] | undefined;
  interruptAll(): string[] {
    const unsettled = this.tasks.filter((t) => !t.transcript().done);
    for (const t of unsettled) t.emit({ type: 'task', taskId: t.id, state: 'interrupted', title: t.transcript().title });
    this.interrupted = unsettled.map((t) => t.id);
    return this.interrupted;
  }
  dispose(): void {
    this.disposed = true;
  }
}

export class MemoryLogger implements Logger {
  readonly lines: string[] = [];
  debug(m: string) {
    this.lines.push(`debug ${m}`);
  }
  info(m: string) {
    this.lines.push(`info ${m}`);
  }
  warn(m: string) {
    this.lines.push(`warn ${m}`);
  }
  error(m: string) {
    this.lines.push(`error ${m}`);
  }
}

/** A notification prompt the test answers by hand (`answer`), recording what was shown and withdrawn. */
export class FakeNotifications {
  readonly shown: PermissionRequest[] = [];
  readonly withdrawn: string[] = [];
  private readonly resolvers = new Map<string, (a: PermissionAnswer) => void>();
  readonly prompt = (request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer> => {
    this.shown.push(request);
    return new Promise((resolve) => {
      this.resolvers.set(request.requestId, resolve);
      signal.addEventListener('abort', () => {
        this.withdrawn.push(request.requestId);
        resolve({ decision: 'deny', feedback: 'withdrawn' });
      });
    });
  };
  answer(requestId: string, a: PermissionAnswer): void {
    this.resolvers.get(requestId)?.(a);
  }
}

/** Workbench services in memory: files to search, diffs and clipboard recorded, settings and keys in maps. */
export class FakeWorkbench implements WorkbenchServices {
  files: string[] = ['src/greet.ts', 'src/greet.test.ts', 'README.md', 'package.json'];
  readonly searches: string[] = [];
  findCommands?: WorkbenchServices['findCommands'];
  readonly diffs: Array<{ path: string; before: string | null; after: string; title: string }> = [];
  readonly copied: string[] = [];
  readonly keys = new Map<string, string>();
  settings: Omit<SettingsState, 'hasKey'> = { provider: 'anthropic', model: '', anthropicBaseUrl: '', openaiBaseUrl: 'http://localhost:11434/v1' };
  async findFiles(query: string, max: number): Promise<string[]> {
    this.searches.push(query);
    return this.files.filter((f) => f.includes(query)).slice(0, max);
  }
  async openDiff(change: { path: string; before: string | null; after: string; title: string }): Promise<void> {
    this.diffs.push(change);
  }
  async copy(text: string): Promise<void> {
    this.copied.push(text);
  }
  async readSettings(): Promise<SettingsState> {
    return { ...this.settings, hasKey: { anthropic: this.keys.has('anthropic'), 'openai-compatible': this.keys.has('openai-compatible') } };
  }
  async saveSettings(s: { provider: SettingsState['provider']; model: string; baseUrl: string }): Promise<void> {
    this.settings = { ...this.settings, provider: s.provider, model: s.model, ...(s.provider === 'anthropic' ? { anthropicBaseUrl: s.baseUrl } : s.provider === 'openai-compatible' ? { openaiBaseUrl: s.baseUrl } : {}) };
  }
  async storeApiKey(provider: 'anthropic' | 'openai-compatible', key: string): Promise<void> {
    if (key) this.keys.set(provider, key);
    else this.keys.delete(provider);
  }
}

/** A ChatHost with a fake runtime; `runtimeError` makes loading the runtime fail. */
export function fakeHost(opts: { runtimeError?: string; provider?: ProviderConfig; confirm?: boolean } = {}) {
  const runtime = new FakeRuntime();
  const log = new MemoryLogger();
  const opened: string[] = [];
  const warnings: string[] = [];
  const confirms: string[] = [];
  const notifications = new FakeNotifications();
  const workbench = new FakeWorkbench();
  let loads = 0;
  const host: ChatHost = {
    log,
    loadRuntime: async () => {
      loads++;
      if (opts.runtimeError) throw new Error(opts.runtimeError);
      return runtime;
    },
    providerConfig: async () => opts.provider ?? { provider: 'demo', model: 'demo' },
    chatConfig: () => ({ provider: 'demo', providerLabel: 'Demo', model: 'demo model', mode: 'default' }),
    permissionMode: () => 'acceptEdits',
    openExternal: async (href) => {
      opened.push(href);
    },
    warn: (m) => {
      warnings.push(m);
    },
    confirm: async (message, detail) => {
      confirms.push(`${message} ${detail}`);
      return opts.confirm ?? false;
    },
    notifyPermission: notifications.prompt,
    workbench,
  };
  return { host, runtime, log, opened, warnings, confirms, notifications, workbench, loads: () => loads };
}

/** Records what a view was posted; `accept` decides postMessage's answer. */
export function recordingPort() {
  const posted: ToWebviewMessage[] = [];
  const port = {
    posted,
    accept: true,
    post: (m: ToWebviewMessage) => {
      posted.push(m);
      return Promise.resolve(port.accept);
    },
  };
  return port;
}
