import * as vscode from 'vscode';
import type { ProcessActivity } from '../core/agents/processActivity';
import type { WorkerPool } from '../core/workers/pool';
import type { AppLifetime } from '../core/machines/appSession/appLifetime';
import { hideKeysFromProcEnviron } from '../core/security/hideEnvironment';
import { AgentsTreeProvider } from './agentsView';
import { attentionToTell } from './attention';
import { WindowLoops } from './loops/windowLoops';
import { ChatController, ChatWindow } from './chatController';
import { ChatSurfaces } from './chatSurfaces';
import { ChatPanels } from './chatPanel';
import { ChatViewProvider } from './chatViewProvider';
import { showWorkers } from './showWorkers';
import { registerCommands } from './commands';
import { registerShortcuts } from './shortcuts';
import { readChatConfig, readKeelSettings, readPermissionMode, readProviderConfig } from './providerSettings';
import { notificationAsker } from './permissionDialog';
import { permissionIndicators } from './permissions/indicators';
import { createPermissionPrompts } from './permissions/setup';
import { loadTaskRuntime } from './runtimeHost';
import { vscodeMcpService } from './mcp/vscodeMcp';
import { raiseBudgetPrompt } from './budgetPrompt';
import type { WorkspaceTrust } from '../core/trust/workspaceTrust';
import { WindowTrust } from './trust/windowTrust';
import { vscodeMemoryWorkbench } from './memory/vscodeMemory';
import { vscodeHistoryServices } from './history/vscodeHistory';
import { vscodeWorkbench } from './workbench';
import { windowLifetime } from './windowLifetime';
import { editorMentions } from './mentions/editorMentions';
import { homedir } from 'node:os';
import { chatSlashCommands, type ChatCommands } from './slashChat';

/** This window's lifetime (the appSession machine), from activation to deactivation. */
let lifetime: AppLifetime | undefined;

/**
 * Entry point of the extension host. Activation only wires things up: no network, no file
 * reads, no task; the core is imported on the first prompt (see runtimeHost.ts). The window's
 * lifetime is the appSession machine: init (the settings) → auth (the provider's key, checked
 * after activation) → active (idle, querying, compacting: the tasks this window runs) → saving
 * (deactivation: unsettled tasks recorded as interrupted) → exit.
 */
export function activate(context: vscode.ExtensionContext): void {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Keel', { log: true });
  context.subscriptions.push(output);
  const log = output;
  // A provider key VS Code was started with leaves this process's exec-time environment, which
  // every process of the user can read (docs/permissions.md, "Secrets": what VS Code's own
  // processes still show). process.env keeps it.
  const hiding = hideKeysFromProcEnviron();
  if (hiding.problem) log.warn(`could not hide the provider keys from /proc/${process.pid}/environ: ${hiding.problem}`);
  const windowLife = windowLifetime({
    settings: readKeelSettings,
    secret: (key) => context.secrets.get(key),
    env: process.env,
    // Deactivation (a reload, closing the window): what runs is recorded as interrupted.
    close: () => chatWindow.dispose(),
    log,
  });
  const app = windowLife.app;
  lifetime = app;

  const agents = new AgentsTreeProvider();
  let activity: ProcessActivity | undefined;
  let pool: WorkerPool | null | undefined;
  context.subscriptions.push(agents, vscode.window.registerTreeDataProvider(AgentsTreeProvider.viewId, agents));
  // The window's trust in its workspace: the one approval of what it provides (docs/permissions.md, "Trust").
  const windowTrust = new WindowTrust(log);
  context.subscriptions.push(windowTrust, vscode.commands.registerCommand('keel.reviewTrust', () => windowTrust.review('you asked to review it', true)));
  const prompts = createPermissionPrompts(context, log, () => windowTrust.get());
  const workbench = vscodeWorkbench(context, log);
  let approvedNow: WorkspaceTrust | undefined;
  void windowTrust.get().then((t) => (approvedNow = t));
  // Slash commands of this window's folder and of the person (docs/commands.md); a workspace's own wait for approval.
  const commands: ChatCommands = {
    workspace: () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    home: homedir(),
    // The window's trust, once it is open: until then (and in Restricted Mode) nothing is approved.
    gate: { approves: (item) => approvedNow?.approves(item) ?? false },
    approveHint: 'review and approve it with Keel: Review Workspace Trust',
    trust: () => windowTrust.get(),
  };
  // One MCP hub per window, owned here and shared by every task; its servers end with the window.
  const mcp = vscodeMcpService(context, log, windowTrust);
  // `@problems` and `@terminal` read the editor; files, folders, git and URLs resolve in the core.
  const folder = vscode.workspace.workspaceFolders?.[0];
  const mentions = folder ? editorMentions(folder.uri.fsPath, log) : undefined;
  if (mentions) context.subscriptions.push(mentions);
  context.subscriptions.push({ dispose: () => void mcp.dispose() });
  const loops: WindowLoops = new WindowLoops({
    log,
    taskHost: (): ReturnType<ChatWindow['loopHost']> => chatWindow.loopHost(),
    loopModeProblem: () => chatWindow.loopModeProblem(),
    feed: () => activity?.feed,
    showPage: (name) => showLoopPage(name),
    trust: () => windowTrust.get(),
  });
  context.subscriptions.push(loops);
  // One window part shared by the chats (runtime, prompts, history, pages); one ChatController per
  // chat surface (the sidebar's here, the editor tab's in ChatPanels), each with its own task.
  const chatWindow: ChatWindow = new ChatWindow({
    log,
    loadRuntime: async (asker) => {
      const hub = await mcp.hub();
      return loadTaskRuntime(context, log, windowTrust, asker, hub && !hub.empty ? hub : undefined, (a) => {
        activity = a;
        agents.attach(a.board);
        // A task or sub-agent waiting for an answer that no visible chat shows gets one notification.
        const told = new Map<string, number>();
        const off = a.board.subscribe(() => {
          for (const r of attentionToTell(a.board.rows(), told, chatWindow.visibleTaskIds())) {
            void vscode.window.showInformationMessage(`Keel: "${r.title}" needs your answer.`, 'Show').then((choice) => {
              if (choice === 'Show') void vscode.commands.executeCommand('keel.agents.open', r.id);
            });
          }
        });
        context.subscriptions.push({ dispose: off });
      }, (p) => (pool = p));
    },
    mcp,
    loops,
    memory: vscodeMemoryWorkbench(),
    ...(mentions ? { mentions } : {}),
    commands,
    selectModel: () => void vscode.commands.executeCommand('keel.selectModel'),
    providerConfig: (mode) => readProviderConfig(context.secrets, mode),
    chatConfig: readChatConfig,
    permissionMode: readPermissionMode,
    openExternal: (href) => Promise.resolve(vscode.env.openExternal(vscode.Uri.parse(href, true))),
    confirm: async (message, detail) => (await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Open')) === 'Open',
    warn: (message) => void vscode.window.showWarningMessage(message),
    raiseBudget: (budget) => raiseBudgetPrompt(budget),
    notifyPermission: (request, signal) => notificationAsker(log).ask(request, signal),
    history: vscodeHistoryServices(context),
    watchTask: (task) => app.watch(task),
    permissionSurfaces: prompts.surfaces,
    saveRules: prompts.saveRules,
    checkRule: prompts.checkRule,
    // "Open diff" on a pending edit shows its Accept / Reject diff editor again.
    workbench: {
      ...workbench,
      // `@` mentions list the resources of ready MCP servers (`server:uri`) before folders and files.
      findResources: (query, max) => mcp.mentions(query, max),
      // `/` at the start of a message suggests the built-ins, the `.claude`/`.keel` commands and the prompts of ready MCP servers.
      findCommands: async (query, max) => [...chatSlashCommands(commands, query, max), ...(await mcp.slashCommands(query, max))].slice(0, max),
      openDiff: async (change) => {
        if (!change.toolCallId || !(await prompts.diff.reveal(change.toolCallId))) await workbench.openDiff(change);
      },
    },
  });
  // However the window ends (deactivate, or the subscriptions disposed first), it ends through the lifetime.
  context.subscriptions.push({ dispose: () => void app.exit() });
  context.subscriptions.push(context.secrets.onDidChange((e) => windowLife.keyChanged(e.key)));

  // The sidebar's chat is registered first: the window's default surface (ChatWindow.target).
  const sidebarChat = new ChatController(chatWindow, { id: 'sidebar' });
  const sidebar = new ChatViewProvider(context.extensionUri, sidebarChat, log);
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(ChatViewProvider.viewType, sidebar));
  // The status bar item reveals the chat that shows the oldest waiting prompt's task (else the sidebar).
  context.subscriptions.push(permissionIndicators(chatWindow.permissions, (badge) => sidebar.setBadge(badge), 'keel.permission.showWaiting'));

  const panels = new ChatPanels(context.extensionUri, chatWindow, log);
  context.subscriptions.push(panels, vscode.window.registerWebviewPanelSerializer(ChatPanels.viewType, panels));
  const chats = new ChatSurfaces(chatWindow, sidebarChat, panels);
  context.subscriptions.push(
    vscode.commands.registerCommand('keel.permission.showWaiting', async () => {
      const oldest = chatWindow.permissions.list()[0];
      await chats.reveal(chats.all().find((c) => oldest !== undefined && c.shownTaskId() === oldest.taskId) ?? sidebarChat);
    }),
  );

  registerCommands({ context, chats, panels, output, log });
  registerShortcuts({ context, chats, broker: chatWindow.permissions, revealDiff: (id) => prompts.diff.reveal(id), log });
  // The loop page shows in the chat the person sees: the editor tab when it is active, else the side bar.
  const showLoopPage = async (name?: string) => (await chats.showTarget()).navigate('loop', name);
  context.subscriptions.push(
    vscode.commands.registerCommand('keel.startLoop', () => loops.start()),
    vscode.commands.registerCommand('keel.showLoop', (name: unknown) => loops.show(typeof name === 'string' ? name : undefined)),
    vscode.commands.registerCommand('keel.showWorkers', () =>
      showWorkers(
        pool,
        (taskId) => vscode.commands.executeCommand('keel.agents.open', taskId),
        // Tasks by the titles a person knows them by.
        (taskId) => chatWindow.loadedRuntime?.get(taskId)?.transcript().title,
      ),
    ),
    vscode.commands.registerCommand('keel.agents.open', async (taskId: unknown) => {
      if (typeof taskId !== 'string') return;
      // The chat that shows it already is revealed; else it opens in the chat commands act on.
      if (!(await chats.openTask(taskId))) void vscode.window.showInformationMessage('That task is no longer in this window; find it in History.');
    }),
  );

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('keel.provider')) windowLife.settingsChanged();
      if (e.affectsConfiguration('keel')) chatWindow.refresh();
    }),
  );

  app.start();
  // After activation (which reads no files): loops a reload cut off are offered to continue.
  setTimeout(() => void loops.offerInterrupted(), 0);

  log.info(`activate() took ${(performance.now() - started).toFixed(1)} ms`);
}

/**
 * Ends the window's lifetime: tasks that had not settled are recorded as interrupted (so a reload
 * shows them interrupted, with Resume), logs are closed and locks released. Resolves when done.
 */
export function deactivate(): Promise<void> | undefined {
  const app = lifetime;
  lifetime = undefined;
  return app?.exit();
}
