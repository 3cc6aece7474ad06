import * as vscode from 'vscode';
import { ChatController, type ChatWindow } from './chatController';
import type { Logger } from './logger';
import { connectWebview, webviewOptions } from './webviewHost';

/**
 * The chat in an editor tab (`keel.chatPanel`). There is at most one; it is a chat surface of its
 * own (a ChatController of the window): it shows its own task, independent of the sidebar's, and
 * brings it back after a reload (`keel.lastTask.panel`). The serializer restores the tab after a
 * window reload; closing the tab never stops its task.
 */
export class ChatPanels implements vscode.WebviewPanelSerializer, vscode.Disposable {
  static readonly viewType = 'keel.chatPanel';
  private panel: vscode.WebviewPanel | undefined;
  private chat: ChatController | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly window: ChatWindow,
    private readonly log: Logger,
  ) {}

  /** Whether the chat tab exists and is the active editor. */
  get isActive(): boolean {
    return this.panel?.active ?? false;
  }

  /** The tab's chat while the tab is the active editor (what commands act on then). */
  activeChat(): ChatController | undefined {
    return this.isActive ? this.chat : undefined;
  }

  /** The tab's chat, while the tab exists. */
  tabChat(): ChatController | undefined {
    return this.chat;
  }

  /** Whether `chat` is the tab's chat. */
  owns(chat: ChatController): boolean {
    return this.chat !== undefined && this.chat === chat;
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
      // Only one chat tab: a second restored one would be a second copy of it.
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
    const chat = new ChatController(this.window, { id: 'panel', isActive: () => panel.active });
    this.chat = chat;
    const host = connectWebview(panel.webview, 'panel', this.extensionUri, chat, this.log);
    const viewState = panel.onDidChangeViewState(() => {
      host.connection.setVisible(panel.visible);
    });
    panel.onDidDispose(() => {
      viewState.dispose();
      host.dispose();
      chat.dispose();
      if (this.panel === panel) {
        this.panel = undefined;
        this.chat = undefined;
      }
    });
  }
}
