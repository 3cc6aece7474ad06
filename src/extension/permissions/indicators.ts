import * as vscode from 'vscode';
import type { PermissionBroker } from '../permissionBroker';
import { waitingIndicator } from './waiting';

/**
 * While a task waits for a permission answer: a status bar item ("Keel: waiting for permission",
 * click to show the chat) and a badge on the chat view (through `setBadge`). Both follow the
 * broker's pending prompts and clear when the last one is answered.
 */
export function permissionIndicators(broker: PermissionBroker, setBadge: (badge: vscode.ViewBadge | undefined) => void, focusCommand: string): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('keel.permissionWaiting', vscode.StatusBarAlignment.Left, 1000);
  item.name = 'Keel: waiting for permission';
  item.command = focusCommand;
  item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
  const update = () => {
    const w = waitingIndicator(broker.list());
    if (!w) {
      item.hide();
      setBadge(undefined);
      return;
    }
    item.text = w.text;
    item.tooltip = w.tooltip;
    item.show();
    setBadge({ value: w.count, tooltip: w.count === 1 ? 'Keel is waiting for permission' : `Keel is waiting for ${w.count} permission answers` });
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
