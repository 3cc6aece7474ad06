import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { NOTHING_APPROVED, type TrustItem, type TrustView } from '../../core/trust/items';
import type { WorkspaceTrust } from '../../core/trust/workspaceTrust';
import type { Logger } from '../logger';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The window's trust in its workspace (docs/permissions.md, "Trust"): one `WorkspaceTrust` for
 * the first folder, shared by the task runtime, the hooks, the MCP hub and the settings, and the
 * one approval page. VS Code's Workspace Trust comes first: in Restricted Mode nothing the
 * workspace provides loosens permissions or runs (the approvals are not even consulted), and
 * granting trust makes Keel offer its own review. A review shows every item — each rule, each
 * hook's and server's command with its env and the files it runs, each instructions file, memory
 * and loop — and is offered again whenever any of it changes (a consumer holding something back
 * says so). Declining ("Not now") is remembered for exactly that set. The core is imported on
 * first use, never at activation.
 */
/** The window's approvals once loaded (the settings' starting mode reads them); nothing before. */
let loadedView: TrustView | undefined;
export function windowTrustView(): TrustView {
  return loadedView ?? NOTHING_APPROVED;
}

export class WindowTrust implements vscode.Disposable {
  private trust: Promise<WorkspaceTrust | undefined> | undefined;
  private reviewing: Promise<void> | null = null;
  private readonly notified = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly approvedListeners = new Set<() => void>();

  constructor(private readonly log: Logger) {
    this.disposables.push(
      vscode.workspace.onDidGrantWorkspaceTrust(async () => {
        const t = await this.get();
        t?.hostTrustChanged();
        void this.review('you trusted this folder');
      }),
    );
  }

  /** The first folder's trust (created on first use); undefined without a folder on disk. */
  get(): Promise<WorkspaceTrust | undefined> {
    this.trust ??= (async () => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder || folder.uri.scheme !== 'file') return undefined;
      const { WorkspaceTrust } = await import('../../core/trust/workspaceTrust');
      const trust = new WorkspaceTrust({
        workspace: folder.uri.fsPath,
        keelHome: resolve(process.env.KEEL_HOME || join(homedir(), '.keel')),
        restricted: () => !vscode.workspace.isTrusted,
      });
      trust.onHeld((items) => this.held(items));
      trust.subscribe(() => this.emitApproved());
      loadedView = trust;
      this.log.info(vscode.workspace.isTrusted ? 'workspace trust: the folder is trusted in VS Code' : "workspace trust: VS Code's Restricted Mode (nothing the folder provides is used)");
      return trust;
    })();
    return this.trust;
  }

  /** Calls `listener` after the approvals changed (this window's or another process's). */
  onApprovalsChanged(listener: () => void): vscode.Disposable {
    this.approvedListeners.add(listener);
    return { dispose: () => this.approvedListeners.delete(listener) };
  }

  /**
   * Shows the person everything the workspace provides and records their answer. `force`: also
   * when they declined exactly this set before (the "Review Workspace Trust" command). Resolves
   * once they answered; one review at a time.
   */
  review(reason: string, force = false): Promise<void> {
    this.reviewing ??= this.show(reason, force).finally(() => (this.reviewing = null));
    return this.reviewing;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    void this.trust?.then((t) => t?.dispose());
  }

  private emitApproved(): void {
    for (const l of [...this.approvedListeners]) {
      try {
        l();
      } catch (err) {
        this.log.warn(`a trust listener failed: ${errorMessage(err)}`);
      }
    }
  }

  /** Something was held back: a notification offering the review (once per set of items). */
  private held(items: TrustItem[]): void {
    for (const i of items) this.log.warn(`held back until you approve this workspace: ${i.summary} (${i.source})`);
    // Restricted Mode says so once on its own; a review already on screen needs no notification.
    if (!vscode.workspace.isTrusted || this.reviewing) return;
    void this.get().then((trust) => {
      if (!trust) return;
      const status = trust.status();
      if (status.pending.length === 0 || status.declined || this.notified.has(status.manifest.fingerprint)) return;
      this.notified.add(status.manifest.fingerprint);
      const n = status.pending.length;
      const what = n === 1 ? 'something that loosens permissions or runs code' : `${n} things that loosen permissions or run code`;
      const text = `Keel: this workspace provides ${what} (settings, hooks, MCP servers, instructions, memories). Keel holds ${n === 1 ? 'it' : 'them'} back until you approve.`;
      void vscode.window.showWarningMessage(text, 'Review…').then((choice) => {
        if (choice === 'Review…') void this.review('you asked to review it', true);
      });
    });
  }

  private async show(reason: string, force: boolean): Promise<void> {
    const trust = await this.get();
    if (!trust) return;
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showInformationMessage(
        "Keel: this folder is in Restricted Mode. Nothing it provides (settings that allow more, hooks, MCP servers, instructions, memories) is used until you trust it (Manage Workspace Trust).",
      );
      return;
    }
    const { statusLines, itemLines } = await import('../../core/trust/describe');
    for (;;) {
      const status = trust.status();
      if (status.pending.length === 0) {
        const none = status.blocked.length ? 'Keel: nothing here waits for approval (some items cannot be approved; see Show everything).' : 'Keel: everything this workspace provides is approved.';
        if (force) void vscode.window.showInformationMessage(none);
        return;
      }
      if (status.declined && !force) return;
      // Short enough for the dialog's buttons to stay in view (each item: what it is, and how many
      // files it runs); "Show everything…" has every detail, each file with its digest.
      const lines = status.pending.slice(0, 12).flatMap((i) => itemLines(status, i, '', 0).slice(0, 3));
      const shown = status.pending.length > 12 ? [...lines, `… and ${status.pending.length - 12} more (Show everything…)`] : lines;
      const approve = 'Approve all';
      const everything = 'Show everything…';
      const notNow = 'Not now';
      const answer = await vscode.window.showWarningMessage(
        'Approve what this workspace provides?',
        {
          modal: true,
          detail:
            `Keel holds these back until you approve them (asked now because ${reason}). They can loosen permissions or run code on this computer; ` +
            `approve only if you trust this repository. A change to any of them is asked about again.\n\n${shown.join('\n')}`,
        },
        approve,
        everything,
        notNow,
      );
      if (answer === everything) {
        const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: `${statusLines(status, 'Keel: Review Workspace Trust').join('\n')}\n` });
        await vscode.window.showTextDocument(doc, { preview: true });
        continue;
      }
      try {
        if (answer === approve) {
          // Exactly what was shown: a change since then is asked about again.
          const done = await trust.approve(status.manifest, trust.manifest().fingerprint);
          if (done === null) {
            void vscode.window.showWarningMessage('Keel: the workspace changed while you looked; review it again.');
            continue;
          }
          this.log.info(`approved ${done.length} item(s) of this workspace`);
        } else if (answer === notNow) await trust.decline(status);
      } catch (err) {
        void vscode.window.showErrorMessage(`Keel could not record your answer: ${errorMessage(err)}`);
      }
      return;
    }
  }
}
