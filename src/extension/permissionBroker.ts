import type { PermissionAnswer, PermissionAsker, PermissionRequest } from '../core/permissions/gate';
import type { PendingPermission, PermissionChoice } from '../shared/protocol/chatMessages';
import type { Logger } from './logger';

/** Where an answer came from. */
export type AnswerSource = 'card' | 'notification' | 'task';

/** What the broker tells the chat (the controller forwards it to every view). */
export interface PermissionBrokerListener {
  requested(request: PendingPermission): void;
  resolved(requestId: string, decision: PermissionChoice, source: AnswerSource): void;
}

/** The notification prompt (permissionDialog.ts in the extension). Aborting `signal` withdraws it. */
export type NotificationPrompt = (request: PermissionRequest, signal: AbortSignal) => Promise<PermissionAnswer>;

export interface PermissionBrokerOptions {
  log: Logger;
  notify: NotificationPrompt;
  /** Whether some chat view can show a card right now; if not, the notification asks too. */
  hasVisibleView(): boolean;
}

interface Pending {
  view: PendingPermission;
  request: PermissionRequest;
  resolve(answer: PermissionAnswer): void;
  /** Withdraws the notification, if one is shown. */
  notification?: AbortController;
  cleanup(): void;
}

/**
 * The one place a permission prompt lives while it waits. Each request has one id, shared by
 * its chat card(s) and its notification; the first valid answer wins, the others are refused and
 * every view is told to close the card. An answer for an unknown or already answered id is
 * refused (returns false), so a stale card can never decide a later prompt.
 *
 * "Always allow" allows later calls of the same kind for the rest of this window's session
 * (same tool; for commands, the same command line).
 */
export class PermissionBroker implements PermissionAsker {
  private readonly pending = new Map<string, Pending>();
  private readonly alwaysAllowed = new Set<string>();
  private readonly listeners = new Set<PermissionBrokerListener>();
  /** Proposed changes of answered prompts, by tool call id (the last 100), for "Open diff". */
  private readonly recentDiffs = new Map<string, NonNullable<PendingPermission['diff']>>();

  constructor(private readonly options: PermissionBrokerOptions) {}

  /** Subscribes to requests and resolutions; returns the unsubscribe function. */
  listen(listener: PermissionBrokerListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The prompts waiting now, oldest first (what a snapshot shows). */
  list(taskId?: string): PendingPermission[] {
    return [...this.pending.values()].map((p) => p.view).filter((v) => taskId === undefined || v.taskId === taskId);
  }

  /** The proposed change of a pending prompt for `toolCallId`, if any. */
  diffFor(toolCallId: string): PendingPermission['diff'] {
    for (const p of this.pending.values()) if (p.view.toolCallId === toolCallId) return p.view.diff;
    return this.recentDiffs.get(toolCallId);
  }

  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer> {
    if (this.alwaysAllowed.has(alwaysKey(request))) {
      this.options.log.info(`permission ${request.requestId} (${request.tool}): allow (always allowed this session)`);
      return Promise.resolve({ decision: 'allow' });
    }
    if (signal.aborted) return Promise.resolve({ decision: 'deny', feedback: 'The request was cancelled.' });
    return new Promise<PermissionAnswer>((resolve) => {
      const onAbort = () => this.settle(request.requestId, 'deny', 'task', 'The request was cancelled.');
      signal.addEventListener('abort', onAbort);
      const entry: Pending = {
        view: toView(request),
        request,
        resolve,
        cleanup: () => signal.removeEventListener('abort', onAbort),
      };
      this.pending.set(request.requestId, entry);
      for (const l of this.listeners) l.requested(entry.view);
      if (!this.options.hasVisibleView()) this.showNotification(entry);
    });
  }

  /**
   * An answer from a chat card. Returns false (and changes nothing) when `requestId` is not
   * pending: unknown, already answered, or withdrawn.
   */
  answer(requestId: string, decision: PermissionChoice, feedback?: string): boolean {
    return this.settle(requestId, decision, 'card', feedback);
  }

  /** No view can show cards any more: every pending prompt also gets a notification. */
  viewsGone(): void {
    for (const p of this.pending.values()) if (!p.notification) this.showNotification(p);
  }

  /** Denies everything pending (the window is closing). */
  dispose(): void {
    for (const id of [...this.pending.keys()]) this.settle(id, 'deny', 'task', 'Keel was closed.');
    this.listeners.clear();
  }

  private showNotification(p: Pending): void {
    const controller = new AbortController();
    p.notification = controller;
    const id = p.request.requestId;
    this.options.notify(p.request, controller.signal).then(
      (a) => {
        if (!controller.signal.aborted) this.settle(id, a.decision, 'notification', a.feedback);
      },
      () => undefined,
    );
  }

  private settle(requestId: string, decision: PermissionChoice, source: AnswerSource, feedback?: string): boolean {
    const p = this.pending.get(requestId);
    if (!p) {
      this.options.log.warn(`permission answer for ${requestId.slice(0, 80)} refused: not pending`);
      return false;
    }
    this.pending.delete(requestId);
    p.cleanup();
    p.notification?.abort();
    if (decision === 'allowAlways') this.alwaysAllowed.add(alwaysKey(p.request));
    if (p.view.diff) {
      this.recentDiffs.set(p.view.toolCallId, p.view.diff);
      if (this.recentDiffs.size > 100) this.recentDiffs.delete(this.recentDiffs.keys().next().value ?? '');
    }
    this.options.log.info(`permission ${requestId} (${p.request.tool}): ${decision} via ${source}`);
    const answer: PermissionAnswer =
      decision === 'deny'
        ? { decision: 'deny', feedback: feedback?.trim() || 'The user denied this.' }
        : { decision: 'allow', ...(feedback?.trim() ? { feedback: feedback.trim() } : {}) };
    p.resolve(answer);
    for (const l of this.listeners) l.resolved(requestId, decision, source);
    return true;
  }
}

function alwaysKey(r: PermissionRequest): string {
  return r.subject.kind === 'execute' ? `${r.tool}\u0000${r.subject.command}` : r.tool;
}

function toView(r: PermissionRequest): PendingPermission {
  const input = r.input !== null && typeof r.input === 'object' && !Array.isArray(r.input) ? (r.input as Record<string, unknown>) : {};
  const diff = r.subject.kind === 'write' ? r.subject.diff : undefined;
  return {
    requestId: r.requestId,
    taskId: r.taskId,
    toolCallId: r.toolCallId,
    tool: r.tool,
    input,
    summary: r.subject.summary || r.tool,
    reason: r.reason,
    ...(diff ? { diff: { path: diff.path, before: diff.before, after: diff.after } } : {}),
  };
}
