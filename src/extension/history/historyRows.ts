import { hostname } from 'node:os';
import type { TaskHandle } from '../../core/runtime/types';
import { describeOwnerWords } from '../../shared/words/owners';
import type { TaskSummary as StoredSummary, LockOwner } from '../../core/store/types';
import type { HistoryStatus, StoredTaskState, TaskSummary } from '../../shared/protocol/chatMessages';

/** Statuses a stored task can be resumed from (a settled one gets a "continue" follow-up). */
const RESUMABLE: ReadonlySet<HistoryStatus> = new Set<HistoryStatus>(['interrupted', 'failed', 'aborted']);

/**
 * "another VS Code window (since 10:31)": who has a task elsewhere, in words a person knows (no
 * pid; the machine only when it is another one).
 */
export function describeOwner(owner: LockOwner, thisHost = hostname()): string {
  return describeOwnerWords(owner, thisHost, (at) => new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
}

/** Whether `taskWorkspace` is another folder than this window's (unknown counts as the same). */
export function isOtherWorkspace(taskWorkspace: string | undefined, workspace: string | undefined): boolean {
  return Boolean(taskWorkspace && workspace && taskWorkspace !== workspace);
}

/** How a stored (not live) task is shown in the chat: read-only, with Resume or Take over when possible. */
export function storedStateOf(s: StoredSummary, workspace: string | undefined): StoredTaskState {
  const other = isOtherWorkspace(s.workspace, workspace);
  return {
    status: s.status,
    resumable: !other && (s.heldElsewhere !== undefined || RESUMABLE.has(s.status) || s.status === 'running'),
    ...(s.heldElsewhere ? { heldElsewhere: describeOwner(s.heldElsewhere) } : {}),
    ...(other ? { otherWorkspace: s.workspace } : {}),
  };
}

export interface RowOptions {
  currentId: string | undefined;
  /** This window's workspace folder (tasks of other folders are shown, not resumed). */
  workspace: string | undefined;
  /** Tasks removed from the list in this window (deleted ones a stale runtime still knows). */
  hidden(id: string): boolean;
  /** When a live task that the store does not know started (epoch ms). */
  startedAt(id: string): number;
}

/**
 * History rows: every stored task, with this window's live tasks overlaid (their state, figures
 * and `live`), plus live tasks the store does not know; newest first. Pure.
 */
export function historyRows(stored: readonly StoredSummary[], live: readonly TaskHandle[], o: RowOptions): TaskSummary[] {
  const liveById = new Map(live.map((t) => [t.id, t] as const));
  const rows: TaskSummary[] = [];
  const seen = new Set<string>();
  for (const s of stored) {
    if (o.hidden(s.id)) continue;
    seen.add(s.id);
    const handle = liveById.get(s.id);
    if (handle) {
      rows.push({ ...liveRow(handle, o), startedAt: s.createdAt, status: s.status, updatedAt: s.updatedAt });
      continue;
    }
    const state = storedStateOf(s, o.workspace);
    rows.push({
      taskId: s.id,
      title: s.title || '(untitled task)',
      startedAt: s.createdAt,
      updatedAt: s.updatedAt,
      state: s.heldElsewhere ? 'running elsewhere' : s.status,
      status: s.status,
      done: s.status !== 'running',
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: s.tokens,
      costUsd: s.costUsd,
      ...(s.model ? { model: s.model } : {}),
      current: s.id === o.currentId,
      live: false,
      resumable: state.resumable && !s.heldElsewhere,
      ...(state.heldElsewhere ? { heldElsewhere: state.heldElsewhere } : {}),
      ...(state.otherWorkspace ? { otherWorkspace: state.otherWorkspace } : {}),
    });
  }
  for (const t of live) if (!seen.has(t.id) && !o.hidden(t.id)) rows.push({ ...liveRow(t, o), startedAt: o.startedAt(t.id) });
  return rows.sort((a, b) => b.startedAt - a.startedAt);
}

function liveRow(t: TaskHandle, o: RowOptions): TaskSummary {
  const tr = t.transcript();
  return {
    taskId: t.id,
    title: tr.title || '(untitled task)',
    startedAt: 0,
    state: tr.state,
    done: tr.done,
    inputTokens: tr.usage.inputTokens + tr.usage.cacheReadTokens + tr.usage.cacheWriteTokens,
    outputTokens: tr.usage.outputTokens,
    costUsd: tr.usage.costUsd,
    ...(tr.model ? { model: tr.model } : {}),
    current: t.id === o.currentId,
    live: true,
    resumable: false,
  };
}
