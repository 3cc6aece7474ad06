import * as vscode from 'vscode';
import type { ProcessActivity } from '../core/agents/processActivity';
import { AgentsTreeProvider } from './agentsView';
import { startLoop } from './loopCommand';
import { ChatController } from './chatController';
import { ChatPanels } from './chatPanel';
import { ChatViewProvider } from './chatViewProvider';
import { registerCommands } from './commands';
import { readChatConfig, readPermissionMode, readProviderConfig } from './providerSettings';
import { notificationAsker } from './permissionDialog';
import { permissionIndicators } from './permissions/indicators';
import { createPermissionPrompts } from './permissions/setup';
import { loadTaskRuntime } from './runtimeHost';
import { vscodeHistoryServices } from './history/vscodeHistory';
import { vscodeWorkbench } from './workbench';

/**
 * Entry point of the extension host. Activation only wires things up: no network, no file
 * reads, no task; the core is imported on the first prompt (see runtimeHost.ts).
 */
export function activate(context: vscode.ExtensionContext): void {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Keel', { log: true });
  context.subscriptions.push(output);
  const log = output;

  const agents = new AgentsTreeProvider();
  let activity: ProcessActivity | undefined;
  context.subscriptions.push(agents, vscode.window.registerTreeDataProvider(AgentsTreeProvider.viewId, agents));
  const prompts = createPermissionPrompts(context, log);
  const workbench = vscodeWorkbench(context, log);
  const controller = new ChatController({
    log,
    loadRuntime: (asker) =>
      loadTaskRuntime(context, log, asker, (a) => {
        activity = a;
        agents.attach(a.board);
      }),
    providerConfig: () => readProviderConfig(context.secrets),
    chatConfig: readChatConfig,
    permissionMode: readPermissionMode,
    openExternal: (href) => Promise.resolve(vscode.env.openExternal(vscode.Uri.parse(href, true))),
    confirm: async (message, detail) => (await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Open')) === 'Open',
    warn: (message) => void vscode.window.showWarningMessage(message),
    notifyPermission: (request, signal) => notificationAsker(log).ask(request, signal),
    history: vscodeHistoryServices(context),
    permissionSurfaces: prompts.surfaces,
    saveRules: prompts.saveRules,
    checkRule: prompts.checkRule,
    // "Open diff" on a pending edit shows its Accept / Reject diff editor again.
    workbench: {
      ...workbench,
      openDiff: async (change) => {
        if (!change.toolCallId || !(await prompts.diff.reveal(change.toolCallId))) await workbench.openDiff(change);
      },
    },
  });
  context.subscriptions.push({ dispose: () => controller.dispose() });

  const sidebar = new ChatViewProvider(context.extensionUri, controller, log);
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(ChatViewProvider.viewType, sidebar));
  context.subscriptions.push(permissionIndicators(controller.permissions, (badge) => sidebar.setBadge(badge), `${ChatViewProvider.viewType}.focus`));

  const panels = new ChatPanels(context.extensionUri, controller, log);
  context.subscriptions.push(panels, vscode.window.registerWebviewPanelSerializer(ChatPanels.viewType, panels));

  registerCommands({ context, controller, panels, output, log });
  context.subscriptions.push(
    vscode.commands.registerCommand('keel.startLoop', () => startLoop(controller, () => activity, log)),
    vscode.commands.registerCommand('keel.agents.open', async (taskId: unknown) => {
      if (typeof taskId !== 'string') return;
      await vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
      if (!controller.showTask(taskId)) void vscode.window.showInformationMessage('That task is no longer in this window; find it in History.');
    }),
  );

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('keel')) controller.refresh();
    }),
  );

  log.info(`activate() took ${(performance.now() - started).toFixed(1)} ms`);
}

/** Everything is disposed through the context's subscriptions (the runtime cancels its tasks). */
export function deactivate(): void {}
