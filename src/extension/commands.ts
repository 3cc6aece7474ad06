import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import type { ChatPanels } from './chatPanel';
import { ChatViewProvider } from './chatViewProvider';
import type { Logger } from './logger';
import { KNOWN_MODELS } from './models';
import { type KeyedProviderId, PROVIDER_LABELS } from './providerConfig';
import { storeApiKey } from './providerSettings';

export interface CommandDeps {
  context: vscode.ExtensionContext;
  controller: ChatController;
  panels: ChatPanels;
  output: vscode.LogOutputChannel;
  log: Logger;
}

/** Registers every `keel.*` command of the manifest; all disposables go to the context. */
export function registerCommands(d: CommandDeps): void {
  const reg = (id: string, fn: () => unknown) => d.context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('keel.newTask', async () => {
    d.controller.newTask();
    if (!d.panels.isActive) await vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
  });
  reg('keel.openInTab', () => d.panels.open());
  reg('keel.showHistory', () => showHistory(d));
  reg('keel.cancelTask', () => d.controller.cancel());
  reg('keel.setApiKey', () => setApiKey(d));
  reg('keel.selectModel', () => selectModel());
  reg('keel.showLogs', () => d.output.show(true));
}

/** Shows the history page of the chat (the tab if it is active, else the sidebar). */
async function showHistory(d: CommandDeps): Promise<void> {
  if (!d.panels.isActive) await vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
  d.controller.navigate('history');
}

async function setApiKey(d: CommandDeps): Promise<void> {
  const providers: KeyedProviderId[] = ['anthropic', 'openai-compatible'];
  const pick = await vscode.window.showQuickPick(
    providers.map((p) => ({ label: PROVIDER_LABELS[p], provider: p })),
    { title: 'Keel: Set API Key', placeHolder: 'Which provider is the key for?' },
  );
  if (!pick) return;
  const key = await vscode.window.showInputBox({
    title: `Keel: ${pick.label} API key`,
    prompt: 'Stored in VS Code Secret Storage. Leave empty to remove the stored key.',
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  await storeApiKey(d.context.secrets, pick.provider, key.trim());
  d.log.info(`API key for ${pick.provider} ${key.trim() ? 'stored' : 'removed'}`);
  void vscode.window.showInformationMessage(`Keel: ${pick.label} API key ${key.trim() ? 'saved' : 'removed'}.`);
}

async function selectModel(): Promise<void> {
  const config = vscode.workspace.getConfiguration('keel');
  const current = config.get<string>('model') ?? '';
  const custom = { label: 'Custom…', description: 'Type a model id', id: '' };
  const items = [
    ...KNOWN_MODELS.map((m) => ({ label: m.id, description: m.description + (m.id === current ? ' · current' : ''), id: m.id })),
    custom,
  ];
  const pick = await vscode.window.showQuickPick(items, { title: 'Keel: Select Model' });
  if (!pick) return;
  let model = pick.id;
  if (pick === custom) {
    const typed = await vscode.window.showInputBox({ title: 'Keel: Model id', value: current, prompt: 'e.g. claude-sonnet-5-5, or a local model name' });
    if (typed === undefined) return;
    model = typed.trim();
  }
  await config.update('model', model, vscode.ConfigurationTarget.Global);
}
