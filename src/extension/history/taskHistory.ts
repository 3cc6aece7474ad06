import type { MessageExtras, StartTaskOptions, TaskHandle } from '../../core/runtime/types';
import type { ExportFormat, StoredTaskState, TaskSummary } from '../../shared/protocol/chatMessages';
import type { Logger } from '../logger';
import { exportContent, exportFileName } from './exportFile';
import { historyRows, isOtherWorkspace, storedStateOf } from './historyRows';
import { StoredTaskHandle } from './storedTask';
import { archiveOf, asHistoryError, HistoryError, type TaskArchive } from './taskArchive';

/** What history asks of VS Code (fakes in tests). */
export interface HistoryServices {
  /** This window's workspace folder (fs path), if any. */
  workspace(): string | undefined;
  /** Asks where to save (a save dialog) and writes `content` there; the path, or undefined if cancelled. */
  saveFile(suggestedName: string, content: string, format: ExportFormat): Promise<string | undefined>;
  /** A modal question with one action button; true when the user chose it. */
  confirm(message: string, detail: string, action: string): Promise<boolean>;
  /** The task the sidebar chat showed last in this workspace; kept across window reloads. */
  readonly lastTask: LastTask;
  /** The same for another chat surface (`surface`: e.g. `panel`); absent: only the sidebar's is kept. */
  lastTaskOf?(surface: string): LastTask;
}

/** Where a chat surface keeps the id of the task it showed last. */
export interface LastTask {
  get(): string | undefined;
  set(id: string | undefined): void;
}

export interface TaskHistoryDeps {
  log: Logger;
  /** The runtime, created on first use (may reject: no folder open). */
  runtime(): Promise<{ get(id: string): TaskHandle | undefined; list(): TaskHandle[] }>;
  services: HistoryServices;
  /** Provider, mode and provider refresh for a resumed task (read from the settings now). */
  startOptions(): Promise<Omit<StartTaskOptions, 'prompt'>>;
  /** When a live task the store does not know started. */
  startedAt(id: string): number;
}

/** A task to show: live (driven here) or stored (read-only, with what can be done about it). */
export interface ShownTask {
  task: TaskHandle;
  stored?: StoredTaskState;
}

const GONE = 'That task is no longer available.';

/** Services for a host without VS Code's dialogs: nothing is confirmed or saved; the last task is remembered in memory. */
export function memoryHistoryServices(): HistoryServices {
  const last = new Map<string, string>();
  const of = (surface: string): LastTask => ({ get: () => last.get(surface), set: (id) => void (id === undefined ? last.delete(surface) : last.set(surface, id)) });
  return {
    workspace: () => undefined,
    saveFile: async () => undefined,
    confirm: async () => false,
    lastTask: of('sidebar'),
    lastTaskOf: of,
  };
}

/** The follow-up a settled task resumes with when the user just clicks Resume. */
export const CONTINUE = 'Continue from where you stopped.';

/**
 * The history of tasks behind the chat: every stored task plus this window's live ones; opening
 * one (the live handle, or the stored transcript read-only), resuming, deleting (after a
 * confirmation) and exporting. Failures a person should read are thrown as HistoryError.
 */
export class TaskHistory {
  private readonly deleted = new Set<string>();

  constructor(private readonly d: TaskHistoryDeps) {}

  /** The rows of the history page; unreadable tasks are quarantined by the store and listed in `problems`. */
  async rows(currentId: string | undefined): Promise<{ rows: TaskSummary[]; problems: string[] }> {
    const runtime = await this.d.runtime();
    const archive = archiveOf(runtime);
    const stored = archive ? await archive.listStored() : { tasks: [], problems: [] };
    for (const p of stored.problems) this.d.log.warn(`history: ${p.taskId}: ${p.message}`);
    const rows = historyRows(stored.tasks, runtime.list(), {
      currentId,
      workspace: this.d.services.workspace(),
      hidden: (id) => this.deleted.has(id),
      startedAt: (id) => this.d.startedAt(id),
    });
    return { rows, problems: stored.problems.map((p) => p.message) };
  }

  /** Task `id` to show: the live handle when this window drives it, else the stored transcript. */
  async open(id: string): Promise<ShownTask> {
    const runtime = await this.d.runtime();
    const live = runtime.get(id);
    const archive = archiveOf(runtime);
    if (live && (!this.deleted.has(id) || !archive)) {
      this.deleted.delete(id); // without a store, "delete" only hid it
      return { task: live };
    }
    if (!archive) throw new HistoryError('not_found', GONE);
    try {
      const found = await archive.inspect(id);
      if (found.kind === 'live') return { task: found.handle };
      const stored = storedStateOf(found.summary, this.d.services.workspace());
      return { task: new StoredTaskHandle(id, found.task.replay.transcript, stored), stored };
    } catch (err) {
      const e = asHistoryError(err);
      throw e.code === 'not_found' ? new HistoryError('not_found', GONE) : e;
    }
  }

  /**
   * Continues task `id` here and returns its live handle: an interrupted task is rebuilt from its
   * log; a failed or aborted one continues with `followUp` (default CONTINUE); a task held by a
   * live window is refused (HistoryError 'locked'), a stale holder is taken over. A task this
   * window drives gets `followUp` as a message. `extras` come with the follow-up (what its
   * mentions brought, its images, its command and what the person typed).
   */
  async resume(id: string, followUp?: string, extras: MessageExtras = {}): Promise<TaskHandle> {
    const runtime = await this.d.runtime();
    const live = runtime.get(id);
    if (live && !this.deleted.has(id)) {
      if (followUp?.trim()) live.sendUserMessage(followUp.trim(), extras);
      return live;
    }
    const archive = this.archive(runtime);
    try {
      const found = await archive.inspect(id);
      if (found.kind === 'live') return found.handle;
      if (isOtherWorkspace(found.summary.workspace, this.d.services.workspace())) {
        throw new HistoryError('unavailable', `This task belongs to ${found.summary.workspace}; open that folder to continue it.`);
      }
      const interrupted = found.summary.status === 'interrupted' || found.summary.status === 'running';
      const text = followUp?.trim() || (interrupted ? undefined : CONTINUE);
      const options = await this.d.startOptions();
      const task = await archive.resume(id, { ...options, ...(text ? { followUp: text, ...(followUp?.trim() ? extras : {}) } : {}) });
      this.d.log.info(`task ${id} resumed (${found.summary.status}${text ? ', with a follow-up' : ''})`);
      return task;
    } catch (err) {
      throw asHistoryError(err);
    }
  }

  /**
   * Deletes task `id` from the store after the user confirms; false when they did not. A task
   * running in this window must be cancelled first (HistoryError 'busy'); one running in another
   * window is refused by the store (HistoryError 'locked').
   */
  async delete(id: string, title: string): Promise<boolean> {
    const runtime = await this.d.runtime();
    const archive = archiveOf(runtime);
    if (!archive) {
      // Nothing is stored: the task only leaves the list (it keeps running if it runs).
      this.deleted.add(id);
      return true;
    }
    const live = this.deleted.has(id) ? undefined : runtime.get(id);
    if (live && !live.transcript().done) throw new HistoryError('busy', 'This task is still running; cancel it before deleting it.');
    if (!(await this.d.services.confirm(`Delete the task "${title}"?`, 'Its conversation and log are removed from disk. This cannot be undone.', 'Delete'))) return false;
    // A settled live task holds its log and lock until it is stopped.
    if (live) archive.forget(id);
    try {
      await archive.store?.delete(id);
    } catch (err) {
      throw asHistoryError(err);
    }
    this.deleted.add(id);
    if (this.d.services.lastTask.get() === id) this.d.services.lastTask.set(undefined);
    const panel = this.d.services.lastTaskOf?.('panel');
    if (panel?.get() === id) panel.set(undefined);
    this.d.log.info(`task ${id} deleted`);
    return true;
  }

  /** Exports task `id` to a file the user picks; the path written, or undefined when cancelled. */
  async export(id: string, format: ExportFormat): Promise<string | undefined> {
    const archive = this.archive(await this.d.runtime());
    try {
      const loaded = await archive.store!.load(id);
      const content = exportContent(loaded, format);
      const path = await this.d.services.saveFile(exportFileName(loaded.meta.title, id, format), content, format);
      if (path) this.d.log.info(`task ${id} exported as ${format} to ${path}`);
      return path;
    } catch (err) {
      throw asHistoryError(err);
    }
  }

  /** Whether `id` was deleted in this window (a stopped live handle may still be known to the runtime). */
  isDeleted(id: string): boolean {
    return this.deleted.has(id);
  }

  private archive(runtime: object): TaskArchive {
    const archive = archiveOf(runtime);
    if (!archive) throw new HistoryError('unavailable', 'Tasks are not being saved in this window, so there is no stored task to open.');
    return archive;
  }
}
