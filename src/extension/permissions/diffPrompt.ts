import * as vscode from 'vscode';
import type { PermissionRequest } from '../../core/permissions/gate';
import type { Logger } from '../logger';
import type { PromptAnswer, PromptSurface } from '../permissionBroker';
import { proposedTitle, requestIdOfQuery } from './proposal';
import { hunksOf, type HunkChoice } from '../../shared/diff/lineDiff';
import { choicesFromText } from '../../shared/domain/review';
import { choicesToSend, hunkAtLine, hunkLayout, showsLayout } from './hunkLayout';

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
 *
 * The proposed side is editable, as in other agents' diff views: it is a file of this surface's
 * own file system (`keel-proposed`, in memory), so the person may type into it before accepting.
 * Accept then writes what that side shows: the text is read back into per-hunk choices
 * (`choicesFromText`: each change applied, left out, or replaced by the person's lines), which the
 * broker turns into the review the model is told, as for the card's edits. An edit of the lines
 * around the changes cannot be told that way: Accept then says so and answers nothing (the person
 * undoes it, or rejects). Once edited, the lenses are gone (their places no longer hold), and
 * Apply / Leave Out say to edit the text itself. An answered request's edited side is saved into
 * this file system before its tab closes, so closing asks nothing.
 */
export class DiffPrompt implements PromptSurface, vscode.TextDocumentContentProvider, vscode.FileSystemProvider, vscode.Disposable {
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
  /** The proposed side's file system: its files change when a hunk's choice does. */
  private readonly filesChanged = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.filesChanged.event;
  /** Each proposed file's version, as its mtime: VS Code reads a file again when it moves. */
  private readonly versions = new Map<string, number>();

  constructor(private readonly log: Logger) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(CURRENT_SCHEME, this),
      vscode.commands.registerCommand(ACCEPT_COMMAND, (uri?: unknown) => this.answerFrom(uri, (id) => this.allowAnswer(id))),
      vscode.commands.registerCommand(REJECT_COMMAND, (uri?: unknown) => this.answerFrom(uri, () => ({ decision: 'deny', feedback: 'The user rejected the proposed change in the diff editor.' }))),
      vscode.commands.registerCommand(HUNK_COMMAND, (id: unknown, index: unknown, kind: unknown) => {
        if (typeof id === 'string' && typeof index === 'number' && (kind === 'accept' || kind === 'reject')) this.choose(id, index, { kind });
      }),
      vscode.commands.registerCommand(APPLY_CHANGE_COMMAND, () => this.chooseAtCursor({ kind: 'accept' })),
      vscode.commands.registerCommand(LEAVE_OUT_CHANGE_COMMAND, () => this.chooseAtCursor({ kind: 'reject' })),
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSED_SCHEME }, { provideCodeLenses: (doc) => this.lenses(doc), onDidChangeCodeLenses: this.lensesChanged.event }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === PROPOSED_SCHEME) this.lensesChanged.fire();
      }),
      this.changed,
      this.lensesChanged,
      this.filesChanged,
    );
  }

  applies(request: PermissionRequest): boolean {
    return request.subject.kind === 'write' && request.subject.diff !== undefined;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(`${uri.scheme}:${uri.query}`) ?? '';
  }

  // The proposed side's file system: one file per shown request, named by its query.
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const text = this.proposedText(uri);
    const version = this.versions.get(uri.query) ?? 1;
    return { type: vscode.FileType.File, ctime: 1, mtime: version, size: Buffer.byteLength(text) };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    return Buffer.from(this.proposedText(uri), 'utf8');
  }

  /** The person saved the proposed side: it holds their text from now on (Accept reads it back). */
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    this.proposedText(uri);
    this.docs.set(`${PROPOSED_SCHEME}:${uri.query}`, Buffer.from(content).toString('utf8'));
    this.versions.set(uri.query, (this.versions.get(uri.query) ?? 1) + 1);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  /** A shown request's proposed text; a file of no request (answered, or never shown) does not exist. */
  private proposedText(uri: vscode.Uri): string {
    const text = this.docs.get(`${PROPOSED_SCHEME}:${uri.query}`);
    if (text === undefined) throw vscode.FileSystemError.FileNotFound(uri);
    return text;
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
          this.versions.delete(query);
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

  /**
   * Accept: an allow of what the proposed side shows — the per-hunk choices made here, or, when
   * the person typed into it, the choices read back from their text. Undefined (no answer) when
   * their edit reaches outside the changes.
   */
  private allowAnswer(id: string): PromptAnswer | undefined {
    const s = this.shown.get(id);
    const diff = s && s.request.subject.kind === 'write' ? s.request.subject.diff : undefined;
    if (!diff) return { decision: 'allow' };
    const count = hunksOf(diff.before, diff.after).length;
    const chosen = this.choices.get(id) ?? [];
    const shown = this.shownText(id);
    if (shown === undefined || showsLayout(shown, hunkLayout(diff.before, diff.after, chosen).content)) {
      const choices = choicesToSend(count, chosen);
      return { decision: 'allow', ...(choices ? { choices } : {}) };
    }
    const edited = choicesFromText(diff.before, diff.after, shown);
    if (!edited) {
      void vscode.window.showWarningMessage(
        'Keel: only the proposed changes can be edited here — the lines around them must stay as they are in the file. Undo that edit and Accept, or Reject.',
      );
      return undefined;
    }
    const choices = choicesToSend(count, edited);
    return { decision: 'allow', ...(choices ? { choices } : {}) };
  }

  /** What request `id`'s proposed side shows now: its open document's text (saved or not), else its file. */
  private shownText(id: string): string | undefined {
    const query = `request=${encodeURIComponent(id)}`;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === PROPOSED_SCHEME && d.uri.query === query);
    return doc ? doc.getText() : this.docs.get(`${PROPOSED_SCHEME}:${query}`);
  }

  /** The person typed into request `id`'s proposed side: it no longer shows the layout of its choices. */
  private edited(id: string): boolean {
    const s = this.shown.get(id);
    const diff = s && s.request.subject.kind === 'write' ? s.request.subject.diff : undefined;
    const shown = this.shownText(id);
    return !!diff && shown !== undefined && !showsLayout(shown, hunkLayout(diff.before, diff.after, this.choices.get(id) ?? []).content);
  }

  /** Sets one hunk's choice of request `id` and shows the proposed side as it would now be written. */
  private choose(id: string, index: number, choice: HunkChoice): void {
    const s = this.shown.get(id);
    const diff = s && s.request.subject.kind === 'write' ? s.request.subject.diff : undefined;
    if (!diff) return;
    if (this.edited(id)) {
      void vscode.window.showInformationMessage('Keel: you edited this proposal — change its text directly; Accept writes what it shows.');
      return;
    }
    const next = [...(this.choices.get(id) ?? [])];
    while (next.length <= index) next.push(undefined);
    next[index] = choice;
    this.choices.set(id, next);
    const query = `request=${encodeURIComponent(id)}`;
    this.docs.set(`${PROPOSED_SCHEME}:${query}`, hunkLayout(diff.before, diff.after, next).content);
    this.versions.set(query, (this.versions.get(query) ?? 1) + 1);
    const path = diff.path.startsWith('/') ? diff.path : `/${diff.path}`;
    this.filesChanged.fire([{ type: vscode.FileChangeType.Changed, uri: vscode.Uri.from({ scheme: PROPOSED_SCHEME, path, query }) }]);
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
    const layout = id && !this.edited(id) ? this.layoutOf(id) : undefined;
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
  private answerFrom(arg: unknown, answerOf: (requestId: string) => PromptAnswer | undefined): void {
    const uri = arg instanceof vscode.Uri ? arg : this.activeProposal();
    const id = uri && (uri.scheme === PROPOSED_SCHEME || uri.scheme === CURRENT_SCHEME) ? requestIdOfQuery(uri.query) : undefined;
    const shown = id ? this.shown.get(id) : undefined;
    if (!id || !shown) {
      void vscode.window.showInformationMessage('Keel: this proposed change was already answered.');
      return;
    }
    const answer = answerOf(id);
    if (answer) shown.finish(answer);
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
    // An edited side is saved into this surface's file system first: closing then asks nothing.
    const query = `request=${encodeURIComponent(requestId)}`;
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === PROPOSED_SCHEME && doc.uri.query === query && doc.isDirty) await doc.save().then(undefined, () => false);
    }
    try {
      await vscode.window.tabGroups.close(tabs, true);
    } catch (e) {
      this.log.warn(`permission ${requestId}: could not close the diff editor: ${String(e)}`);
    }
  }
}
