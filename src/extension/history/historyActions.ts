import { errorMessage } from '../../shared/domain/errors';
import type { MessageExtras, TaskHandle } from '../../core/runtime/types';
import type { StoredTaskState } from '../../shared/protocol/chatMessages';
import type { FromWebviewMessage } from '../../shared/protocol/fromWebview';
import type { ToWebviewPayload } from '../../shared/protocol/toWebview';
import { type Logger } from '../logger';
import type { ViewConnection } from '../viewConnection';
import { isStoredTask } from './storedTask';
import { HistoryError } from './taskArchive';
import type { TaskHistory } from './taskHistory';

/** What the history actions need of the chat controller. */
export interface HistoryChat {
  readonly log: Logger;
  current(): TaskHandle | undefined;
  /** Shows `task` in every view (a snapshot), stored read-only when `stored` is given. */
  show(task: TaskHandle | undefined, stored?: StoredTaskState): void;
  /** Starts watching a live task (thinking times, context) before it is shown. */
  track(task: TaskHandle): void;
  broadcast(payload: ToWebviewPayload): void;
  /**
   * Task `id` was deleted: every chat that shows it shows nothing instead and every chat's list is
   * sent again (default: this chat only).
   */
  deleted?(id: string): Promise<void>;
}

type HistoryMessage = Extract<FromWebviewMessage, { type: 'listTasks' | 'openTask' | 'deleteTask' | 'resumeTask' | 'exportTask' | 'resume' }>;

/** Whether `m` is a message the history actions handle. */
export function isHistoryMessage(m: FromWebviewMessage): m is HistoryMessage {
  return m.type === 'listTasks' || m.type === 'openTask' || m.type === 'deleteTask' || m.type === 'resumeTask' || m.type === 'exportTask' || m.type === 'resume';
}

/**
 * The chat's history intents: list, open, resume (also Take over), delete, export, and bringing
 * back the task the chat showed before a reload. Never throws: failures become notices (what the
 * user can act on) or host errors, and are logged.
 */
export class HistoryActions {
  private restoring: Promise<void> | undefined;

  constructor(
    private readonly chat: HistoryChat,
    private readonly history: TaskHistory,
  ) {}

  async handle(view: ViewConnection, m: HistoryMessage): Promise<void> {
    try {
      switch (m.type) {
        case 'listTasks':
          await this.sendList(view);
          return;
        case 'openTask':
          await this.open(m.taskId);
          return;
        case 'resumeTask':
          await this.resume(m.taskId);
          return;
        case 'resume':
          await this.resumeCurrent(view);
          return;
        case 'deleteTask':
          await this.delete(m.taskId);
          return;
        case 'exportTask': {
          const path = await this.history.export(m.taskId, m.format);
          if (path) view.send({ type: 'notice', message: `Exported to ${path}` });
          return;
        }
      }
    } catch (err) {
      this.fail(view, m.type, err);
    }
  }

  /** Shows task `id` (live, or stored read-only). */
  async open(id: string): Promise<void> {
    const shown = await this.history.open(id);
    if (!shown.stored) this.chat.track(shown.task);
    this.chat.show(shown.task, shown.stored);
  }

  /** Resumes task `id` here (optionally with a follow-up) and shows it live. */
  async resume(id: string, followUp?: string, extras?: MessageExtras): Promise<void> {
    const task = await this.history.resume(id, followUp, extras);
    this.chat.track(task);
    this.chat.show(task);
  }

  /**
   * The composer's text while a stored task is shown: it continues the task (resuming it) rather
   * than starting a new one. Failures are told to every view.
   */
  async followUp(text: string, extras?: MessageExtras): Promise<void> {
    const current = this.chat.current();
    if (!isStoredTask(current)) return;
    try {
      await this.resume(current.id, text, extras);
    } catch (err) {
      this.fail(undefined, 'prompt', err);
    }
  }

  /**
   * Once per window, on the first view: shows again the task the chat showed before a reload
   * (stored: interrupted with Resume, or live elsewhere). Quiet when there is none or it is gone.
   */
  restoreLast(lastId: string | undefined): Promise<void> {
    this.restoring ??= (async () => {
      if (!lastId || this.chat.current()) return;
      try {
        const shown = await this.history.open(lastId);
        if (this.chat.current()) return; // the user moved on meanwhile
        if (!shown.stored) this.chat.track(shown.task);
        this.chat.show(shown.task, shown.stored);
        this.chat.log.info(`showing task ${lastId} again${shown.stored ? ` (${shown.stored.status})` : ''}`);
      } catch (err) {
        this.chat.log.info(`the last task ${lastId} cannot be shown again: ${errorMessage(err)}`);
      }
    })();
    return this.restoring;
  }

  private async resumeCurrent(view: ViewConnection): Promise<void> {
    const current = this.chat.current();
    if (!current) {
      view.send({ type: 'notice', message: 'There is no task to resume.' });
      return;
    }
    if (!isStoredTask(current) && current.transcript().state !== 'interrupted') {
      // A live answer cut off by a failure: the task waits for Retry, which is what Resume means here.
      const last = current.transcript().items.at(-1);
      if (current.transcript().done && last?.kind === 'error' && last.retryable) current.retry();
      else view.send({ type: 'notice', message: 'Resume is not available: this task is live in this window.' });
      return;
    }
    try {
      await this.resume(current.id);
    } catch (err) {
      // Still held by a live window: show what it has written since, read-only.
      if (err instanceof HistoryError && err.code === 'locked') await this.open(current.id).catch(() => undefined);
      throw err;
    }
  }

  private async delete(id: string): Promise<void> {
    const row = (await this.history.rows(this.chat.current()?.id)).rows.find((r) => r.taskId === id);
    if (!(await this.history.delete(id, row?.title ?? id))) return;
    if (this.chat.deleted) return this.chat.deleted(id);
    if (this.chat.current()?.id === id) this.chat.show(undefined);
    await this.sendList(undefined);
  }

  /** The list again to every view of this chat (the stored tasks changed elsewhere). */
  refreshList(): Promise<void> {
    return this.sendList(undefined).catch((err: unknown) => this.fail(undefined, 'listTasks', err));
  }

  /** The list to `view`, or to every view (after a change). */
  private async sendList(view: ViewConnection | undefined): Promise<void> {
    const { rows, problems } = await this.history.rows(this.chat.current()?.id);
    const send = (payload: ToWebviewPayload) => (view ? view.send(payload) : this.chat.broadcast(payload));
    send({ type: 'taskList', tasks: rows });
    for (const p of problems) send({ type: 'notice', message: p });
  }

  private fail(view: ViewConnection | undefined, what: string, err: unknown): void {
    const message = errorMessage(err);
    this.chat.log.warn(`history ${what} failed: ${message}`);
    const payload: ToWebviewPayload = err instanceof HistoryError ? { type: 'notice', message } : { type: 'error', message: `Keel: ${message}` };
    if (view) view.send(payload);
    else this.chat.broadcast(payload);
  }
}
