import * as vscode from 'vscode';
import type { WorkerPool } from '../core/workers/pool';
import { describeWorker } from '../core/workers/poolStatus';
import { poolHeadline } from '../shared/words/workers';

/**
 * "Keel: Show Workers": this window's worker pool in a quick pick titled with what a person needs
 * ("4 workers, all idle"), one item per worker (what it does, the task it runs by title, its id
 * and pid, uptime, runs, memory — asked of each worker first, waiting at most a second). Picking a
 * worker that runs (or last ran) a task opens that task's chat. `pool` is undefined before the
 * first task loaded the runtime, null when workers are off (`keel.workers.max` 0); `titleOf`
 * names a task by its title.
 */
export async function showWorkers(
  pool: WorkerPool | null | undefined,
  openTask: (taskId: string) => Thenable<unknown>,
  titleOf: (taskId: string) => string | undefined = () => undefined,
): Promise<void> {
  if (pool === null) {
    void vscode.window.showInformationMessage('Workers are off (keel.workers.max is 0): tasks run in the extension host. Set it above 0 and reload the window.');
    return;
  }
  if (pool === undefined) {
    void vscode.window.showInformationMessage('No worker pool yet: it starts with the first task of this window.');
    return;
  }
  const status = await pool.refreshHealth(1000);
  const now = Date.now();
  type Item = vscode.QuickPickItem & { taskId: string | null };
  const items: Item[] = status.workers.map((w) => ({ ...describeWorker(w, now, titleOf), taskId: w.taskId }));
  if (items.length === 0) items.push({ label: 'No workers running', description: 'one starts with the next task', taskId: null });
  const picked = await vscode.window.showQuickPick(items, { title: `Keel workers — ${poolHeadline(status)}`, placeHolder: 'Pick a worker to open its task', ignoreFocusOut: true });
  if (picked?.taskId) await openTask(picked.taskId);
}
