import * as vscode from 'vscode';
import type { ChatController, ChatWindow } from './chatController';
import type { ChatPanels } from './chatPanel';
import { ChatViewProvider } from './chatViewProvider';

/**
 * Which chat a command acts on, and bringing it into view. The window's chat surfaces are the
 * sidebar and the editor tab, each with its own task (chatController.ts).
 *
 * Decisions (docs/architecture.md, "Chat surfaces"):
 * - A palette command (New Task, Show History, Show Memory, Cancel, Show Loop, a loop's next
 *   iteration) acts on the editor-tab chat while that tab is the active editor, else on the
 *   sidebar.
 * - Opening a task from outside a chat (a notification's Show, the Agents view, Show Workers)
 *   reveals the chat that already shows it; when none does, it opens in the chat commands act on.
 *   A task is never switched away from in a surface that shows it, and not shown twice this way
 *   (a chat's own History may still open a task the other chat shows: both then follow it live).
 */
export class ChatSurfaces {
  constructor(
    readonly window: ChatWindow,
    readonly sidebar: ChatController,
    private readonly panels: ChatPanels,
  ) {}

  /** Every chat of the window: the sidebar's, then the tab's. */
  all(): ChatController[] {
    const tab = this.panels.tabChat();
    return tab ? [this.sidebar, tab] : [this.sidebar];
  }

  /** The chat a command acts on: the editor tab's while it is active, else the sidebar's. */
  target(): ChatController {
    return this.panels.activeChat() ?? this.sidebar;
  }

  /** Brings `chat` into view (focuses the sidebar view, or reveals the tab). */
  async reveal(chat: ChatController): Promise<void> {
    if (this.panels.owns(chat)) this.panels.reveal();
    else await vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
  }

  /** The chat a command acts on, brought into view. */
  async showTarget(): Promise<ChatController> {
    const chat = this.target();
    await this.reveal(chat);
    return chat;
  }

  /**
   * Shows task `id`: reveals the chat that shows it already, else opens it (live, or stored with
   * Resume) in the chat commands act on. Resolves false when this window cannot show it.
   */
  async openTask(id: string): Promise<boolean> {
    const showing = this.all().filter((c) => c.shownTaskId() === id);
    const chat = showing.find((c) => c.isVisible()) ?? showing[0];
    if (chat) {
      await this.reveal(chat);
      return true;
    }
    return (await this.showTarget()).openTask(id);
  }
}
