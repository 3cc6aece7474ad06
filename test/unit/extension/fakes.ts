import type { ProviderConfig } from '../../../src/core/providers/types';
import type { StartTaskOptions, TaskHandle } from '../../../src/core/runtime/types';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { type TaskTranscript, applyTaskEvent, emptyTranscript } from '../../../src/shared/domain/transcript';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import type { ChatHost, TaskRuntimeLike } from '../../../src/extension/chatController';
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

/** A ChatHost with a fake runtime; `runtimeError` makes loading the runtime fail. */
export function fakeHost(opts: { runtimeError?: string; provider?: ProviderConfig } = {}) {
  const runtime = new FakeRuntime();
  const log = new MemoryLogger();
  const opened: string[] = [];
  const warnings: string[] = [];
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
    warn: (m) => warnings.push(m),
  };
  return { host, runtime, log, opened, warnings, loads: () => loads };
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
