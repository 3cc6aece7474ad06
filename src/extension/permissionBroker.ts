import { errorMessage } from '../shared/domain/errors';
import type { PermissionAnswer, PermissionAsker, PermissionRequest } from '../core/permissions/gate';
import type { AlwaysAllow, PendingPermission, PermissionChoice, RuleScope } from '../shared/protocol/chatMessages';
import { type Logger } from './logger';
import { alwaysRules, type RuleCheck } from './permissions/alwaysAllow';

/** Where an answer came from. */
export type AnswerSource = 'card' | 'notification' | 'editor' | 'dialog' | 'task';

/** An answer from any surface. `always` only means something with `allowAlways`. */
export interface PromptAnswer {
  decision: PermissionChoice;
  feedback?: string;
  always?: AlwaysAllow;
}

/** What the broker tells the chat (the controller forwards it to every view). */
export interface PermissionBrokerListener {
  requested(request: PendingPermission): void;
  resolved(requestId: string, decision: PermissionChoice, source: AnswerSource): void;
}

/** The notification prompt (permissionDialog.ts in the extension). Aborting `signal` withdraws it. */
export type NotificationPrompt = (request: PermissionRequest, signal: AbortSignal) => Promise<PermissionAnswer>;

/**
 * A place besides the chat cards where a prompt is shown: the notification, the diff editor, the
 * modal dialog. `show` resolves with the user's answer, or undefined when it was closed without
 * one (the prompt keeps waiting elsewhere). The broker aborts `signal` as soon as the prompt is
 * settled anywhere; the surface then closes what it can (a modal cannot be closed: its late
 * answer is ignored).
 */
export interface PromptSurface {
  readonly source: Exclude<AnswerSource, 'card' | 'task'>;
  /** `atOnce`: with the card, when `applies`; `noVisibleView`: only while no chat view can show the card. */
  readonly when: 'atOnce' | 'noVisibleView';
  applies(request: PermissionRequest): boolean;
  show(request: PermissionRequest, signal: AbortSignal): Promise<PromptAnswer | undefined>;
}

export interface PermissionBrokerOptions {
  log: Logger;
  /** The notification; shown while no chat view can show a card. Kept for hosts that have no other surfaces. */
  notify?: NotificationPrompt;
  /** The other surfaces (diff editor for edits, modal for risky commands, ...). */
  surfaces?: PromptSurface[];
  /**
   * Whether a chat view that shows `request`'s card can be seen right now; if not, the
   * `noVisibleView` surfaces ask too (checked when it is asked and on `viewsChanged`).
   */
  hasVisibleView(request: PermissionRequest): boolean;
  /**
   * Saves "Always allow" rules into a settings file (the engine's `saveRule`). The broker waits for
   * it before the task goes on, so the next call the rule covers is allowed without a prompt.
   * Without it, "Always allow" allows once and says so.
   */
  saveRules?(rules: string[], where: RuleScope): Promise<void>;
  /** Validates one rule (the engine's parser); without it every non-empty rule is accepted. */
  checkRule?: RuleCheck;
  /** Something the user must know that is not an answer (e.g. a rule could not be saved). */
  warn?(message: string): void;
}

interface Pending {
  view: PendingPermission;
  request: PermissionRequest;
  resolve(answer: PermissionAnswer): void;
  /** Aborted when the prompt is settled: withdraws the surfaces still showing it. */
  surfaces: AbortController;
  /** The `noVisibleView` surfaces are showing. */
  notified: boolean;
  cleanup(): void;
}

/** Why an answer was refused. */
export type AnswerRefusal = 'notPending' | 'badRule';

/**
 * The one place a permission prompt lives while it waits. Each request has one id, shared by
 * its chat card(s), its diff editor, its modal and its notification; the first valid answer
 * wins, the others are withdrawn and every view is told to close the card. An answer for an
 * unknown or already answered id is refused, so a stale card can never decide a later prompt.
 *
 * "Always allow" saves the chosen rule(s) to a settings file through `saveRules` before the task
 * continues; the engine re-reads the file, so later calls the rule covers do not ask. Nothing is
 * remembered in memory.
 */
export class PermissionBroker implements PermissionAsker {
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<PermissionBrokerListener>();
  /** Proposed changes of answered prompts, by tool call id (the last 100), for "Open diff". */
  private readonly recentDiffs = new Map<string, NonNullable<PendingPermission['diff']>>();
  private readonly surfaces: PromptSurface[];

  constructor(private readonly options: PermissionBrokerOptions) {
    const notify = options.notify;
    this.surfaces = [
      ...(notify ? [{ source: 'notification', when: 'noVisibleView', applies: () => true, show: (r, s) => notify(r, s) } satisfies PromptSurface] : []),
      ...(options.surfaces ?? []),
    ];
  }

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

  /** Whether `requestId` is still waiting for an answer. */
  isPending(requestId: string): boolean {
    return this.pending.has(requestId);
  }

  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer> {
    if (signal.aborted) return Promise.resolve({ decision: 'deny', feedback: 'The request was cancelled.' });
    return new Promise<PermissionAnswer>((resolve) => {
      const onAbort = () => this.settle(request.requestId, { decision: 'deny', feedback: 'The request was cancelled.' }, 'task');
      signal.addEventListener('abort', onAbort);
      const entry: Pending = {
        view: toView(request),
        request,
        resolve,
        surfaces: new AbortController(),
        notified: false,
        cleanup: () => signal.removeEventListener('abort', onAbort),
      };
      this.pending.set(request.requestId, entry);
      for (const l of this.listeners) l.requested(entry.view);
      for (const s of this.surfaces) if (s.when === 'atOnce' && s.applies(request)) this.showSurface(entry, s);
      if (!this.options.hasVisibleView(request)) this.notify(entry);
    });
  }

  /**
   * An answer from a chat card. Returns true when it settled the prompt; otherwise the reason it
   * was refused (and nothing changed): `notPending` (unknown, already answered, withdrawn) or
   * `badRule` (an "Always allow" rule that does not parse; the prompt keeps waiting).
   */
  answer(requestId: string, decision: PermissionChoice, feedback?: string, always?: AlwaysAllow): true | { refused: AnswerRefusal; message: string } {
    return this.settle(requestId, { decision, ...(feedback !== undefined ? { feedback } : {}), ...(always ? { always } : {}) }, 'card');
  }

  /** No view can show cards any more: every pending prompt also goes to the `noVisibleView` surfaces. */
  viewsGone(): void {
    for (const p of this.pending.values()) this.notify(p);
  }

  /**
   * The views changed (hidden, closed, or showing another task): each pending prompt no visible
   * view shows any more also goes to the `noVisibleView` surfaces (once; it stays there).
   */
  viewsChanged(): void {
    for (const p of this.pending.values()) if (!this.options.hasVisibleView(p.request)) this.notify(p);
  }

  /** Denies everything pending (the window is closing). */
  dispose(): void {
    for (const id of [...this.pending.keys()]) this.settle(id, { decision: 'deny', feedback: 'Keel was closed.' }, 'task');
    this.listeners.clear();
  }

  private notify(p: Pending): void {
    if (p.notified) return;
    p.notified = true;
    for (const s of this.surfaces) if (s.when === 'noVisibleView' && s.applies(p.request)) this.showSurface(p, s);
  }

  private showSurface(p: Pending, surface: PromptSurface): void {
    const id = p.request.requestId;
    const signal = p.surfaces.signal;
    let shown: Promise<PromptAnswer | undefined>;
    try {
      shown = surface.show(p.request, signal);
    } catch (e) {
      this.options.log.warn(`permission ${id}: the ${surface.source} prompt failed: ${errorMessage(e)}`);
      return;
    }
    shown.then(
      (a) => {
        if (!a || signal.aborted || !this.pending.has(id)) return;
        const r = this.settle(id, a, surface.source);
        if (r !== true) this.options.warn?.(`Keel: ${r.message}`);
      },
      (e: unknown) => this.options.log.warn(`permission ${id}: the ${surface.source} prompt failed: ${errorMessage(e)}`),
    );
  }

  private settle(requestId: string, a: PromptAnswer, source: AnswerSource): true | { refused: AnswerRefusal; message: string } {
    const p = this.pending.get(requestId);
    if (!p) {
      this.options.log.warn(`permission answer for ${requestId.slice(0, 80)} refused: not pending`);
      return { refused: 'notPending', message: 'That permission request was already answered.' };
    }
    let rules: string[] = [];
    if (a.decision === 'allowAlways') {
      const chosen = alwaysRules(a.always, p.view.suggestedRules ?? [], this.options.checkRule);
      if (!chosen.ok) {
        this.options.log.warn(`permission ${requestId}: "Always allow" refused: ${chosen.error}`);
        return { refused: 'badRule', message: chosen.error };
      }
      rules = chosen.rules;
    }
    this.pending.delete(requestId);
    p.cleanup();
    p.surfaces.abort();
    if (p.view.diff) {
      this.recentDiffs.set(p.view.toolCallId, p.view.diff);
      if (this.recentDiffs.size > 100) this.recentDiffs.delete(this.recentDiffs.keys().next().value ?? '');
    }
    const where: RuleScope = a.always?.where ?? 'local';
    this.options.log.info(`permission ${requestId} (${p.request.tool}): ${a.decision} via ${source}${rules.length ? ` (saving ${rules.join(', ')} to ${where})` : ''}`);
    for (const l of this.listeners) l.resolved(requestId, a.decision, source);
    const feedback = a.feedback?.trim();
    if (a.decision === 'deny') {
      p.resolve({ decision: 'deny', feedback: feedback || 'The user denied this.' });
      return true;
    }
    const allow: PermissionAnswer = { decision: 'allow', ...(feedback ? { feedback } : {}) };
    if (a.decision === 'allow') {
      p.resolve(allow);
      return true;
    }
    void this.saveThenAllow(p, rules, where, allow);
    return true;
  }

  /** "Always allow": the rule is on disk before the task goes on; a failed save still allows this call once. */
  private async saveThenAllow(p: Pending, rules: string[], where: RuleScope, allow: PermissionAnswer): Promise<void> {
    const save = this.options.saveRules;
    try {
      if (!save) throw new Error('this host cannot save rules');
      if (rules.length === 0) throw new Error('there is no rule to save for this call');
      await save(rules, where);
      this.options.log.info(`permission ${p.request.requestId}: saved ${rules.join(', ')} to ${where} settings`);
      // Saved: the answer says so, and the task's permission machine ends in allowAlways.
      p.resolve({ ...allow, always: { rules, where } });
      return;
    } catch (e) {
      this.options.log.error(`permission ${p.request.requestId}: could not save ${rules.join(', ') || 'a rule'}: ${errorMessage(e)}`);
      this.options.warn?.(`Keel allowed this call once but could not save the rule: ${errorMessage(e)}`);
    }
    p.resolve(allow);
  }
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
    ...(r.rule ? { rule: r.rule } : {}),
    ...(r.risky ? { risky: true } : {}),
    ...(r.suggestedRules && r.suggestedRules.length > 0 ? { suggestedRules: r.suggestedRules } : {}),
  };
}
