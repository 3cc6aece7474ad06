import { randomUUID } from 'node:crypto';
import { TaskStore } from '../core/store/taskStore';
import { plannedTexts, previewRewind, RewindError, rewindTask, type CheckpointsAccess, type ConflictChoice } from '../core/checkpoints/rewinder';
import type { PlannedFile } from '../core/checkpoints/plan';
import { readTimeline } from '../core/checkpoints/timeline';
import type { TaskHandle } from '../core/runtime/types';
import type { RewindScope } from '../shared/domain/checkpoints';
import { errorMessage } from '../shared/domain/errors';
import type { RewindPreviewView } from '../shared/protocol/rewindMessages';
import type { ToWebviewPayload } from '../shared/protocol/toWebview';
import type { Logger } from './logger';
import type { WorkbenchServices } from './viewRequests';

/** What "Rewind to here" needs of the chat surface it was pressed in. */
export interface RewindChat {
  readonly log: Logger;
  /** The task the surface shows. */
  current(): TaskHandle | undefined;
  /** The window's runtime, when it has one. */
  runtime(): object | undefined;
  workbench: Pick<WorkbenchServices, 'openDiff'>;
  /** To every view of the surface. */
  broadcast(payload: ToWebviewPayload): void;
  /** Shows task `id` again from its log (after the rewind, read-only until the next message resumes it). */
  reopen(id: string): Promise<void>;
}

/** The part of the core's TaskRuntime a rewind uses (the real class has it). */
interface RewindRuntime {
  store: TaskStore;
  forget(id: string): void;
  closed?(): Promise<void>;
}

function rewindRuntimeOf(runtime: object | undefined): RewindRuntime | undefined {
  if (!runtime || !('store' in runtime) || !(runtime.store instanceof TaskStore)) return undefined;
  if (!('forget' in runtime) || typeof runtime.forget !== 'function') return undefined;
  return runtime as RewindRuntime;
}

interface Previewed {
  taskId: string;
  step: number;
  files: PlannedFile[];
}

/**
 * "Rewind to here" in the chat (docs/persistence.md, "In VS Code"): the preview (each file that
 * would change, its diff in VS Code's diff editor, the files the person changed since — theirs are
 * kept unless they choose to overwrite — and the files that cannot be restored), then the rewind
 * itself with the core's `rewindTask`, the same code `keel tasks rewind` runs. Nothing is written
 * before the person applies the preview. A task that is working cannot be rewound (the chat hides
 * the button then); a settled live task is let go first (its log closed, its lock released), and
 * shown again from its log afterwards: the next message resumes it from the rewound conversation.
 */
export class RewindActions {
  private readonly previews = new Map<string, Previewed>();

  constructor(private readonly chat: RewindChat) {}

  /** A preview of rewinding the shown task to before step `stepId` (a user message, tool call or rewind). */
  async preview(stepId: string): Promise<void> {
    const task = this.chat.current();
    const rt = rewindRuntimeOf(this.chat.runtime());
    if (!task || !rt) return this.notice('This task has no checkpoints to rewind to (it is not recorded).');
    if (!task.transcript().done) return this.notice('The task is working: stop it or let it finish, then rewind.');
    const access = this.access(rt);
    const timeline = await readTimeline(rt.store.taskDir(task.id));
    const step = timeline.steps.find((s) => s.id === stepId);
    if (!step) return this.notice('That step cannot be rewound to (it is not in the task’s record).');
    const { plan } = await previewRewind(access, task.id, step.number, 'both');
    const previewId = randomUUID();
    this.previews.clear();
    this.previews.set(previewId, { taskId: task.id, step: step.number, files: plan.files });
    const view: RewindPreviewView = {
      previewId,
      taskId: task.id,
      step: step.number,
      stepKind: step.kind,
      label: step.label.slice(0, 2000),
      files: plan.files.map((f) => ({ path: f.path, action: f.action, conflict: f.conflict, ...(f.reason ? { reason: f.reason } : {}) })),
      notes: plan.notes,
      conversationMessages: plan.conversation?.length ?? 0,
    };
    this.chat.broadcast({ type: 'rewindPlan', preview: view });
    // The first file that would change opens in the diff editor at once; the card's rows open the others.
    const first = plan.files.find((f) => f.action !== 'notRestorable');
    if (first) await this.openDiff(previewId, first.path);
  }

  /** Shows one previewed file in VS Code's diff editor: as it is now (left), as the rewind would leave it (right). */
  async openDiff(previewId: string, path: string): Promise<void> {
    const p = this.previews.get(previewId);
    const file = p?.files.find((f) => f.path === path);
    const rt = rewindRuntimeOf(this.chat.runtime());
    if (!p || !file || !rt) return;
    const { current, target } = await plannedTexts(this.access(rt), p.taskId, file);
    const name = path.split(/[\\/]/).pop() ?? path;
    await this.chat.workbench.openDiff({
      path,
      before: current === null ? null : current.toString('utf8'),
      after: target === null ? '' : target.toString('utf8'),
      title: `${name} (now ↔ rewound to before step ${p.step})`,
    });
  }

  cancel(previewId: string): void {
    this.previews.delete(previewId);
  }

  /**
   * Rewinds as previewed: `scope` says what goes back; each conflicting file is overwritten only
   * when it is in `overwrite`, else the person's version is kept. A preview that is gone (another
   * one replaced it) is refused with a notice; nothing is written then.
   */
  async apply(previewId: string, scope: RewindScope, overwrite: string[]): Promise<void> {
    const p = this.previews.get(previewId);
    this.previews.delete(previewId);
    const rt = rewindRuntimeOf(this.chat.runtime());
    if (!p || !rt) return this.notice('That preview is no longer current; press “Rewind to here” again.');
    const live = this.chat.current();
    if (live?.id === p.taskId && !live.transcript().done) return this.notice('The task is working: stop it or let it finish, then rewind.');
    // The task's log and lock are let go, so the rewind can record itself; the next message resumes it.
    rt.forget(p.taskId);
    await rt.closed?.();
    const chosen = new Set(overwrite);
    const decide = (f: PlannedFile): ConflictChoice => (chosen.has(f.path) ? 'overwrite' : 'keep');
    try {
      const result = await rewindTask(this.access(rt), p.taskId, p.step, scope, decide);
      this.chat.log.info(`task ${p.taskId} rewound to before step ${p.step} (${scope}): ${result.files.length} files`);
      await this.chat.reopen(p.taskId);
      if (result.messageText !== undefined) this.chat.broadcast({ type: 'composerText', text: result.messageText });
      if (result.notes.length) this.notice(result.notes.join(' '));
    } catch (e) {
      await this.chat.reopen(p.taskId).catch(() => undefined);
      this.notice(e instanceof RewindError ? e.message : `Keel could not rewind the task: ${errorMessage(e)}`);
    }
  }

  private access(rt: RewindRuntime): CheckpointsAccess {
    return { store: rt.store, owner: 'VS Code' };
  }

  private notice(message: string): void {
    this.chat.broadcast({ type: 'notice', message });
  }
}
