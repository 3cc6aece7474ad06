import * as vscode from 'vscode';
import type { ChatPanels } from './chatPanel';
import type { ChatSurfaces } from './chatSurfaces';
import type { Logger } from './logger';
import { type ModelPickItem, modelPicker } from './models';
import { type KeyedProviderId, MODEL_ENV, PROVIDER_LABELS, providerOf } from './providerConfig';
import { readKeelSettings, readProviderConfig, storeApiKey } from './providerSettings';

export interface CommandDeps {
  context: vscode.ExtensionContext;
  /** The window's chats; a command acts on `chats.target()` (the active editor tab's, else the sidebar's). */
  chats: ChatSurfaces;
  panels: ChatPanels;
  output: vscode.LogOutputChannel;
  log: Logger;
}

/** Registers every `keel.*` command of the manifest; all disposables go to the context. */
export function registerCommands(d: CommandDeps): void {
  const reg = (id: string, fn: () => unknown) => d.context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('keel.newTask', async () => (await d.chats.showTarget()).newTask());
  // The sidebar view's title-bar buttons act on the sidebar's chat, even while the tab is the active editor.
  reg('keel.sidebar.newTask', () => d.chats.sidebar.newTask());
  reg('keel.sidebar.showHistory', () => d.chats.sidebar.navigate('history'));
  reg('keel.openInTab', () => d.panels.open());
  reg('keel.showHistory', () => showPage(d, 'history'));
  reg('keel.showMemory', () => showPage(d, 'memory'));
  reg('keel.cancelTask', () => d.chats.target().cancel());
  reg('keel.setApiKey', () => setApiKey(d));
  reg('keel.selectModel', () => selectModel(d));
  reg('keel.showLogs', () => d.output.show(true));
}

/** Shows a page of the chat (in the tab if it is active, else in the sidebar). */
async function showPage(d: CommandDeps, page: 'history' | 'settings' | 'memory'): Promise<void> {
  (await d.chats.showTarget()).navigate(page);
}

async function setApiKey(d: CommandDeps): Promise<void> {
  const providers: KeyedProviderId[] = ['anthropic', 'openai-compatible'];
  const pick = await vscode.window.showQuickPick(
    providers.map((p) => ({ label: PROVIDER_LABELS[p], provider: p })),
    { title: 'Keel: Set API Key', placeHolder: 'Which provider is the key for?', ignoreFocusOut: true },
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

/**
 * "Keel: Select Model": the models of the configured provider (one table; an OpenAI-compatible
 * server's own list when it answers, else an input box), written to `keel.model`.
 */
async function selectModel(d: CommandDeps): Promise<void> {
  const settings = readKeelSettings();
  const provider = providerOf(settings);
  const setting = typeof settings.model === 'string' ? settings.model : '';
  const title = `Keel: Select Model (${PROVIDER_LABELS[provider]})`;
  const qp = vscode.window.createQuickPick<ModelPickItem>();
  qp.title = title;
  qp.ignoreFocusOut = true;
  try {
    let server;
    if (provider === 'openai-compatible') {
      qp.busy = true;
      qp.placeholder = 'Asking the server for its models…';
      qp.show();
      const config = await readProviderConfig(d.context.secrets);
      const { listServerModels } = await import('../core/providers/serverModels');
      server = await listServerModels({ ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}), ...(config.apiKey ? { apiKey: config.apiKey } : {}) });
      if (!server.ok) d.log.info(`Select Model: no model list from the server: ${server.reason}`);
    }
    const plan = modelPicker(provider, setting, server);
    let model: string | undefined;
    if (plan.kind === 'type') {
      qp.hide();
      model = await typeModel(title, plan.prompt, plan.value, plan.placeHolder);
    } else {
      qp.items = plan.items;
      qp.placeholder = plan.placeHolder;
      qp.busy = false;
      qp.activeItems = plan.items.filter((i) => i.description.includes('current')).slice(0, 1);
      qp.show();
      const pick = await new Promise<ModelPickItem | undefined>((resolve) => {
        qp.onDidAccept(() => resolve(qp.selectedItems[0]));
        qp.onDidHide(() => resolve(undefined));
      });
      qp.hide();
      if (pick?.action === 'provider') await showPage(d, 'settings');
      if (pick?.action === 'custom') model = await typeModel(title, 'Any model id the provider accepts', setting, 'e.g. a model name');
      // The demo ignores keel.model: picking its one model changes nothing.
      if (pick?.action === 'set' && provider !== 'demo') model = pick.id;
    }
    if (model !== undefined) {
      await vscode.workspace.getConfiguration('keel').update('model', model, vscode.ConfigurationTarget.Global);
      // The model-selection machine puts the environment first: say so rather than seem to ignore the pick.
      const override = process.env[MODEL_ENV.model]?.trim();
      if (override && provider !== 'demo') void vscode.window.showWarningMessage(`Keel: ${MODEL_ENV.model}=${override} is set in VS Code's environment and is used instead of keel.model.`);
    }
  } finally {
    qp.dispose();
  }
}

async function typeModel(title: string, prompt: string, value: string, placeHolder: string): Promise<string | undefined> {
  const typed = await vscode.window.showInputBox({ title, prompt, value, placeHolder, ignoreFocusOut: true });
  return typed === undefined ? undefined : typed.trim();
}
