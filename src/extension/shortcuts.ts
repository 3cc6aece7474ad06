import * as vscode from 'vscode';
import type { ChatSurfaces } from './chatSurfaces';
import type { Logger } from './logger';
import type { PermissionBroker } from './permissionBroker';
import { NOTHING_PENDING, pendingFor } from './shortcutTargets';

/** The context key the permission shortcuts' default keybindings are bound under (package.json). */
export const PERMISSION_PENDING_CONTEXT = 'keel.permissionPending';

export interface ShortcutDeps {
  context: vscode.ExtensionContext;
  chats: ChatSurfaces;
  broker: PermissionBroker;
  /** Reveals the diff editor of the pending edit of `toolCallId`; false when it has none. */
  revealDiff(toolCallId: string): Promise<boolean>;
  log: Logger;
}

/**
 * The keyboard's commands (README, "Keyboard shortcuts"): focus the chat's message box, allow or
 * deny the pending permission request, open the diff of the pending edit. New task and cancel are
 * `keel.newTask` and `keel.cancelTask`. Each says so when it has nothing to act on.
 */
export function registerShortcuts(d: ShortcutDeps): void {
  const reg = (id: string, fn: () => unknown) => d.context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  reg('keel.focusChat', async () => (await d.chats.showTarget()).focusComposer());
  const answer = (decision: 'allow' | 'deny') => {
    const p = pendingFor(d.broker.list(), d.chats.target().shownTaskId());
    if (!p) return void vscode.window.showInformationMessage(NOTHING_PENDING);
    const r = d.broker.answer(p.requestId, decision, decision === 'deny' ? 'The user denied it (keyboard shortcut).' : undefined);
    if (r !== true) void vscode.window.showWarningMessage(`Keel: ${r.message}`);
    else d.log.info(`permission ${p.requestId} (${p.summary}) ${decision === 'allow' ? 'allowed' : 'denied'} from the keyboard`);
  };
  reg('keel.permission.allow', () => answer('allow'));
  reg('keel.permission.deny', () => answer('deny'));
  reg('keel.openDiff', async () => {
    const p = pendingFor(
      d.broker.list().filter((x) => x.diff !== undefined),
      d.chats.target().shownTaskId(),
    );
    if (!p) return void vscode.window.showInformationMessage('Keel: no proposed change is waiting for review.');
    if (!(await d.revealDiff(p.toolCallId))) void vscode.window.showInformationMessage(`Keel: the diff of ${p.summary} is no longer open for review.`);
  });
  // The permission keybindings apply only while a request waits: elsewhere the keys stay the editor's.
  const update = () => void vscode.commands.executeCommand('setContext', PERMISSION_PENDING_CONTEXT, d.broker.list().length > 0);
  const stop = d.broker.listen({ requested: update, resolved: update });
  d.context.subscriptions.push({ dispose: stop });
  update();
}
