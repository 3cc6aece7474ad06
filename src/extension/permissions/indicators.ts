import * as vscode from 'vscode';
import type { PermissionBroker } from '../permissionBroker';
import { badgeFor, waitingIndicator } from './waiting';

/**
 * While a task waits for a permission answer: a status bar item ("Keel: waiting for permission",
 * click to show the chat) and a badge on the chat view (through `setBadge`). Both follow the
 * broker's pending prompts and clear when the last one is answered or withdrawn (its task
 * cancelled, interrupted, its worker gone).
 */
export function permissionIndicators(broker: PermissionBroker, setBadge: (badge: vscode.ViewBadge | undefined) => void, focusCommand: string): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('keel.permissionWaiting', vscode.StatusBarAlignment.Left, 1000);
  item.name = 'Keel: waiting for permission';
  item.command = focusCommand;
  item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
  const update = () => {
    const pending = broker.list();
    // Never undefined: a badge of 0 is what clears it (badgeFor says why).
    setBadge(badgeFor(pending));
    const w = waitingIndicator(pending);
    if (!w) {
      item.hide();
      return;
    }
    item.text = w.text;
    item.tooltip = w.tooltip;
    item.show();
  };
  const stop = broker.listen({ requested: update, resolved: update });
  update();
  return {
    dispose: () => {
      stop();
      item.dispose();
    },
  };
}
