import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import type { Logger } from './logger';
import { connectWebview, webviewOptions } from './webviewHost';

/**
 * The chat in an editor tab (`keel.chatPanel`). There is at most one; it shows the same task as
 * the sidebar. The serializer brings it back after a window reload.
 */
export class ChatPanels implements vscode.WebviewPanelSerializer, vscode.Disposable {
  static readonly viewType = 'keel.chatPanel';
  private panel: vscode.WebviewPanel | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly log: Logger,
  ) {}

  /** Whether the chat tab exists and is the active editor. */
  get isActive(): boolean {
    return this.panel?.active ?? false;
  }

  /** Reveals the chat tab, creating it in the active column if needed. */
  open(): void {
    if (this.panel) {
      this.panel.reveal(vscode.ViewColumn.Active);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      ChatPanels.viewType,
      'Keel',
      vscode.ViewColumn.Active,
      webviewOptions(this.extensionUri),
    );
    this.adopt(panel);
  }

  /** Reveals the tab if it exists; returns whether it did. */
  reveal(): boolean {
    this.panel?.reveal();
    return this.panel !== undefined;
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, _state: unknown): Promise<void> {
    if (this.panel) {
      // Only one chat tab: a second restored one would show the same thing.
      panel.dispose();
      return;
    }
    this.adopt(panel);
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'keel.svg');
    const host = connectWebview(panel.webview, 'panel', this.extensionUri, this.controller, this.log);
    const viewState = panel.onDidChangeViewState(() => {
      host.connection.setVisible(panel.visible);
    });
    panel.onDidDispose(() => {
      viewState.dispose();
      host.dispose();
      if (this.panel === panel) this.panel = undefined;
    });
  }
}
