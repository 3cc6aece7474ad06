import * as vscode from 'vscode';
import type { StatusBoard } from '../core/agents/board';
import { agentItems, rowsSignature, type AgentItem } from './agentsRows';

/**
 * The "Agents" tree in the Keel container: every task, sub-agent and loop of this window with its
 * status, fed by the status board (never polled; the board says when it changed). Empty until the
 * window's runtime exists (the first prompt). Clicking a task opens its chat (`keel.agents.open`), a loop its loop page (`keel.showLoop`).
 */
export class AgentsTreeProvider implements vscode.TreeDataProvider<AgentItem> {
  static readonly viewId = 'keel.agents';
  private board: StatusBoard | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly changed = new vscode.EventEmitter<AgentItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** Shows `board` from now on. */
  attach(board: StatusBoard): void {
    this.unsubscribe?.();
    this.board = board;
    let shown = rowsSignature(board.rows());
    this.unsubscribe = board.subscribe(() => {
      const now = rowsSignature(board.rows());
      if (now === shown) return;
      shown = now;
      this.changed.fire(undefined);
    });
    this.changed.fire(undefined);
  }

  getTreeItem(item: AgentItem): vscode.TreeItem {
    const t = new vscode.TreeItem(item.label, item.children.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    t.id = item.id;
    t.description = item.description;
    t.tooltip = item.tooltip;
    t.iconPath = new vscode.ThemeIcon(item.icon);
    if (item.taskId) t.command = { command: 'keel.agents.open', title: 'Open Chat', arguments: [item.taskId] };
    if (item.loopName) t.command = { command: 'keel.showLoop', title: 'Show Loop', arguments: [item.loopName] };
    return t;
  }

  getChildren(item?: AgentItem): AgentItem[] {
    if (item) return item.children;
    return this.board ? agentItems(this.board.rows(), Date.now()) : [];
  }

  dispose(): void {
    this.unsubscribe?.();
    this.changed.dispose();
  }
}
