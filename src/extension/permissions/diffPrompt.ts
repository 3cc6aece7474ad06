import * as vscode from 'vscode';
import type { PermissionRequest } from '../../core/permissions/gate';
import type { Logger } from '../logger';
import type { PromptAnswer, PromptSurface } from '../permissionBroker';
import { proposedTitle, requestIdOfQuery } from './proposal';

/** Scheme of the proposed (right) side; the Accept / Reject editor-title buttons show for it. */
export const PROPOSED_SCHEME = 'keel-proposed';
/** Scheme of the current (left) side. */
export const CURRENT_SCHEME = 'keel-current';
export const ACCEPT_COMMAND = 'keel.permission.accept';
export const REJECT_COMMAND = 'keel.permission.reject';

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
 */
export class DiffPrompt implements PromptSurface, vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly source = 'editor' as const;
  readonly when = 'atOnce' as const;
  private readonly docs = new Map<string, string>();
  private readonly shown = new Map<string, Shown>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly log: Logger) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this),
      vscode.workspace.registerTextDocumentContentProvider(CURRENT_SCHEME, this),
      vscode.commands.registerCommand(ACCEPT_COMMAND, (uri?: unknown) => this.answerFrom(uri, { decision: 'allow' })),
      vscode.commands.registerCommand(REJECT_COMMAND, (uri?: unknown) => this.answerFrom(uri, { decision: 'deny', feedback: 'The user rejected the proposed change in the diff editor.' })),
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

  /** Accept / Reject: the editor-title button passes the editor's resource; the palette passes nothing. */
  private answerFrom(arg: unknown, answer: PromptAnswer): void {
    const uri = arg instanceof vscode.Uri ? arg : this.activeProposal();
    const id = uri && (uri.scheme === PROPOSED_SCHEME || uri.scheme === CURRENT_SCHEME) ? requestIdOfQuery(uri.query) : undefined;
    const shown = id ? this.shown.get(id) : undefined;
    if (!shown) {
      void vscode.window.showInformationMessage('Keel: this proposed change was already answered.');
      return;
    }
    shown.finish(answer);
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
