import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import type { Logger } from './logger';
import { connectWebview } from './webviewHost';

/** The chat in the Keel sidebar (`keel.chat`). Its page is reloaded each time it is shown again. */
export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewType = 'keel.chat';
  private view: vscode.WebviewView | undefined;
  private badge: vscode.ViewBadge | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly log: Logger,
  ) {}

  /** Whether the sidebar chat is currently visible. */
  get isVisible(): boolean {
    return this.view?.visible ?? false;
  }

  /** The view's badge (e.g. permission prompts waiting); kept until the view exists. */
  setBadge(badge: vscode.ViewBadge | undefined): void {
    this.badge = badge;
    if (this.view) this.view.badge = badge;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.badge = this.badge;
    const host = connectWebview(view.webview, 'sidebar', this.extensionUri, this.controller, this.log);
    const visibility = view.onDidChangeVisibility(() => {
      host.connection.setVisible(view.visible);
    });
    view.onDidDispose(() => {
      visibility.dispose();
      host.dispose();
      if (this.view === view) this.view = undefined;
    });
  }
}
