import * as vscode from 'vscode';
import type { PermissionRequest } from '../../core/permissions/gate';
import type { Logger } from '../logger';
import type { PromptAnswer, PromptSurface } from '../permissionBroker';
import { proposedTitle, requestIdOfQuery } from './proposal';
import { hunksOf, type HunkChoice } from '../../shared/diff/lineDiff';
import { choicesToSend, hunkAtLine, hunkLayout } from './hunkLayout';

/** Scheme of the proposed (right) side; the Accept / Reject editor-title buttons show for it. */
export const PROPOSED_SCHEME = 'keel-proposed';
/** Scheme of the current (left) side. */
export const CURRENT_SCHEME = 'keel-current';
export const ACCEPT_COMMAND = 'keel.permission.accept';
export const REJECT_COMMAND = 'keel.permission.reject';
/** A lens's command: set one hunk's choice (`requestId`, hunk index, 'accept' | 'reject'). */
export const HUNK_COMMAND = 'keel.permission.hunk';
/** The hunk at the cursor of the proposed side: apply it / leave it out (palette and keybindings). */
export const APPLY_CHANGE_COMMAND = 'keel.permission.applyChange';
export const LEAVE_OUT_CHANGE_COMMAND = 'keel.permission.leaveOutChange';

interface Shown {
  request: PermissionRequest;
  finish(answer: PromptAnswer | undefined): void;
}

/**
 * The diff-editor prompt for edits (Write, Edit): VS Code's diff editor with the current file on
 * the left and the proposed one on the right, and Accept / Reject in the editor title (the
 * commands below, shown when the active editor's resource has the `keel-proposed` scheme). It
 * is one surface of the broker: Accept / Reject answer the request by its id; when the request
 * is settled anywhere else, the diff tab is closed. Closing the tab by hand answers nothing.
 *
 * Per-hunk review there (issue 23): a lens above each change of the proposed side says whether it
 * applies and toggles it (Apply / Leave out); the palette's "Keel: Apply This Change" / "Keel:
 * Leave Out This Change" act on the change at the cursor (and VS Code's "Show CodeLens Commands
 * for Current Line" reaches the lenses from the keyboard). The proposed side then shows what
 * would be written; Accept allows with those choices, which the broker turns into the review
 * from the request's own proposal. The chat card keeps its own choices: the surface that answers
 * decides.
 */
export class DiffPrompt implements PromptSurface, vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly source = 'editor' as const;
  readonly when = 'atOnce' as const;
  private readonly docs = new Map<string, string>();
  private readonly shown = new Map<string, Shown>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Each shown request's choice per hunk (missing: applied as proposed). */
  private readonly choices = new Map<string, (HunkChoice | undefined)[]>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly log: Logger) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this),
      vscode.workspace.registerTextDocumentContentProvider(CURRENT_SCHEME, this),
      vscode.commands.registerCommand(ACCEPT_COMMAND, (uri?: unknown) => this.answerFrom(uri, (id) => this.allowAnswer(id))),
      vscode.commands.registerCommand(REJECT_COMMAND, (uri?: unknown) => this.answerFrom(uri, () => ({ decision: 'deny', feedback: 'The user rejected the proposed change in the diff editor.' }))),
      vscode.commands.registerCommand(HUNK_COMMAND, (id: unknown, index: unknown, kind: unknown) => {
        if (typeof id === 'string' && typeof index === 'number' && (kind === 'accept' || kind === 'reject')) this.choose(id, index, { kind });
      }),
      vscode.commands.registerCommand(APPLY_CHANGE_COMMAND, () => this.chooseAtCursor({ kind: 'accept' })),
      vscode.commands.registerCommand(LEAVE_OUT_CHANGE_COMMAND, () => this.chooseAtCursor({ kind: 'reject' })),
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSED_SCHEME }, { provideCodeLenses: (doc) => this.lenses(doc), onDidChangeCodeLenses: this.lensesChanged.event }),
      this.changed,
      this.lensesChanged,
    );
  }

  applies(request: PermissionRequest): boolean {
    return request.subject.kind === 'write' && request.subject.diff !== undefined;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(`${uri.scheme}:${uri.query}`) ?? '';
  }

  show(request: PermissionRequest, signal: AbortSignal): Promise<PromptAnswer | undefined> {
    const diff = request.subject.kind === 'write' ? request.subject.diff : undefined;
    if (!diff || signal.aborted) return Promise.resolve(undefined);
    const id = request.requestId;
    const query = `request=${encodeURIComponent(id)}`;
    const path = diff.path.startsWith('/') ? diff.path : `/${diff.path}`;
    this.docs.set(`${CURRENT_SCHEME}:${query}`, diff.before ?? '');
    this.docs.set(`${PROPOSED_SCHEME}:${query}`, diff.after);
    const left = vscode.Uri.from({ scheme: CURRENT_SCHEME, path, query });
    const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path, query });
    return new Promise<PromptAnswer | undefined>((resolve) => {
      let done = false;
      const finish = (answer: PromptAnswer | undefined) => {
        if (done) return;
        done = true;
        this.shown.delete(id);
        this.choices.delete(id);
        signal.removeEventListener('abort', onAbort);
        void this.closeTabs(id).finally(() => {
          this.docs.delete(`${CURRENT_SCHEME}:${query}`);
          this.docs.delete(`${PROPOSED_SCHEME}:${query}`);
        });
        resolve(answer);
      };
      const onAbort = () => finish(undefined);
      signal.addEventListener('abort', onAbort);
      this.shown.set(id, { request, finish });
      vscode.commands
        .executeCommand('vscode.diff', left, right, proposedTitle(diff.path, diff.before === null), { preview: false, preserveFocus: true })
        .then(undefined, (e: unknown) => {
          this.log.warn(`permission ${id}: could not open the diff editor: ${String(e)}`);
          finish(undefined);
        });
    });
  }

  /** Reveals the diff of a pending request for `toolCallId`; false if there is none. */
  async reveal(toolCallId: string): Promise<boolean> {
    for (const s of this.shown.values()) {
      if (s.request.toolCallId !== toolCallId) continue;
      const diff = s.request.subject.kind === 'write' ? s.request.subject.diff : undefined;
      if (!diff) return false;
      const query = `request=${encodeURIComponent(s.request.requestId)}`;
      const path = diff.path.startsWith('/') ? diff.path : `/${diff.path}`;
      await vscode.commands.executeCommand(
        'vscode.diff',
        vscode.Uri.from({ scheme: CURRENT_SCHEME, path, query }),
        vscode.Uri.from({ scheme: PROPOSED_SCHEME, path, query }),
        proposedTitle(diff.path, diff.before === null),
        { preview: false },
      );
      return true;
    }
    return false;
  }

  dispose(): void {
    for (const s of [...this.shown.values()]) s.finish(undefined);
    for (const d of this.disposables) d.dispose();
  }

  /** Accept: an allow, with the per-hunk choices made here when some change is left out. */
  private allowAnswer(id: string): PromptAnswer {
    const s = this.shown.get(id);
    const diff = s && s.request.subject.kind === 'write' ? s.request.subject.diff : undefined;
    const choices = diff ? choicesToSend(hunksOf(diff.before, diff.after).length, this.choices.get(id) ?? []) : undefined;
    return { decision: 'allow', ...(choices ? { choices } : {}) };
  }

  /** Sets one hunk's choice of request `id` and shows the proposed side as it would now be written. */
  private choose(id: string, index: number, choice: HunkChoice): void {
    const s = this.shown.get(id);
    const diff = s && s.request.subject.kind === 'write' ? s.request.subject.diff : undefined;
    if (!diff) return;
    const next = [...(this.choices.get(id) ?? [])];
    while (next.length <= index) next.push(undefined);
    next[index] = choice;
    this.choices.set(id, next);
    const query = `request=${encodeURIComponent(id)}`;
    this.docs.set(`${PROPOSED_SCHEME}:${query}`, hunkLayout(diff.before, diff.after, next).content);
    const path = diff.path.startsWith('/') ? diff.path : `/${diff.path}`;
    this.changed.fire(vscode.Uri.from({ scheme: PROPOSED_SCHEME, path, query }));
    this.lensesChanged.fire();
  }

  /** The palette's Apply / Leave Out This Change: the hunk at the cursor of the active proposed side. */
  private chooseAtCursor(choice: HunkChoice): void {
    const editor = vscode.window.activeTextEditor;
    const uri = editor?.document.uri;
    const id = uri && uri.scheme === PROPOSED_SCHEME ? requestIdOfQuery(uri.query) : undefined;
    const layout = id ? this.layoutOf(id) : undefined;
    const hunk = layout && editor ? hunkAtLine(layout, editor.selection.active.line) : undefined;
    if (!id || !hunk) {
      void vscode.window.showInformationMessage('Keel: put the cursor on a proposed change (the right side of the diff).');
      return;
    }
    this.choose(id, hunk.index, choice);
  }

  private layoutOf(id: string) {
    const s = this.shown.get(id);
    const diff = s && s.request.subject.kind === 'write' ? s.request.subject.diff : undefined;
    return diff ? hunkLayout(diff.before, diff.after, this.choices.get(id) ?? []).hunks : undefined;
  }

  /** A lens above each change of the proposed side: what happens to it, and the other choice. */
  private lenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const id = requestIdOfQuery(doc.uri.query);
    const layout = id ? this.layoutOf(id) : undefined;
    if (!id || !layout) return [];
    const n = layout.length;
    return layout.map((h) => {
      const line = Math.max(0, Math.min(h.line, doc.lineCount - 1));
      const applied = h.choice !== 'reject';
      return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
        title: applied ? `Change ${h.index + 1} of ${n}: applied — Leave out` : `Change ${h.index + 1} of ${n}: left out — Apply`,
        command: HUNK_COMMAND,
        arguments: [id, h.index, applied ? 'reject' : 'accept'],
      });
    });
  }

  /** Accept / Reject: the editor-title button passes the editor's resource; the palette passes nothing. */
  private answerFrom(arg: unknown, answerOf: (requestId: string) => PromptAnswer): void {
    const uri = arg instanceof vscode.Uri ? arg : this.activeProposal();
    const id = uri && (uri.scheme === PROPOSED_SCHEME || uri.scheme === CURRENT_SCHEME) ? requestIdOfQuery(uri.query) : undefined;
    const shown = id ? this.shown.get(id) : undefined;
    if (!id || !shown) {
      void vscode.window.showInformationMessage('Keel: this proposed change was already answered.');
      return;
    }
    shown.finish(answerOf(id));
  }

  private activeProposal(): vscode.Uri | undefined {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    return input instanceof vscode.TabInputTextDiff ? input.modified : undefined;
  }

  private async closeTabs(requestId: string): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PROPOSED_SCHEME && requestIdOfQuery(t.input.modified.query) === requestId);
    if (tabs.length === 0) return;
    try {
      await vscode.window.tabGroups.close(tabs, true);
    } catch (e) {
      this.log.warn(`permission ${requestId}: could not close the diff editor: ${String(e)}`);
    }
  }
}
