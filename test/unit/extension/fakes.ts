import type { ProviderConfig } from '../../../src/core/providers/types';
import type { StartTaskOptions, TaskHandle } from '../../../src/core/runtime/types';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { type TaskTranscript, applyTaskEvent, emptyTranscript } from '../../../src/shared/domain/transcript';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import type { PermissionAnswer, PermissionRequest } from '../../../src/core/permissions/gate';
import type { SettingsState } from '../../../src/shared/protocol/chatMessages';
import type { ChatHost, TaskRuntimeLike } from '../../../src/extension/chatController';
import type { WorkbenchServices } from '../../../src/extension/viewRequests';
import type { Logger } from '../../../src/extension/logger';

/** A task behind the TaskHandle interface whose events the test emits by hand. */
export class FakeTask implements TaskHandle {
  private t: TaskTranscript;
  private readonly listeners = new Set<(e: TaskEvent) => void>();
  readonly followUps: string[] = [];
  cancels = 0;
  retries = 0;

  constructor(
    readonly id: string,
    readonly options: StartTaskOptions,
  ) {
    this.t = emptyTranscript(id, options.prompt.slice(0, 40), options.provider.model);
    // Like the runtime: the first events happen inside startTask, before anyone subscribes.
    this.emit({ type: 'task', taskId: id, state: 'running', title: options.prompt.slice(0, 40) });
    this.emit({ type: 'user_message', taskId: id, id: `${id}-u1`, text: options.prompt });
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  emit(e: TaskEvent): void {
    this.t = applyTaskEvent(this.t, e);
    for (const l of this.listeners) l(e);
  }

  transcript(): TaskTranscript {
    return this.t;
  }
  subscribe(listener: (event: TaskEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  sendUserMessage(text: string): void {
    this.followUps.push(text);
  }
  cancel(): void {
    this.cancels++;
  }
  retry(): void {
    this.retries++;
  }
  abandon(): void {}
  readonly modes: string[] = [];
  setMode(mode: string): void {
    this.modes.push(mode);
  }
  settled(): Promise<TaskEvent & { type: 'done' }> {
    return new Promise(() => {});
  }
}

export class FakeRuntime implements TaskRuntimeLike {
  readonly tasks: FakeTask[] = [];
  disposed = false;
  startTask(options: StartTaskOptions): FakeTask {
    const t = new FakeTask(`task-${this.tasks.length + 1}`, options);
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
