import { existsSync } from 'node:fs';
import { ignoredSettingsNotices } from '../core/hooks/ignoredSettings';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { TaskRuntimeLike } from './chatController';
import type { Logger } from './logger';
import type { ProcessActivity } from '../core/agents/processActivity';
import type { WorkspaceTrust } from '../core/trust/workspaceTrust';
import type { WindowTrust } from './trust/windowTrust';
import type { PermissionAsker } from '../core/permissions/gate';
import type { McpToolSource } from '../core/mcp/toolSource';
import type { McpStatusSource } from '../core/mcp/events';
import type { EvictionStrategy } from '../core/workers/eviction';
import type { WorkerPool } from '../core/workers/pool';
import { workerCommandBeside } from '../core/workers/spawnWorker';
import { sandboxSettings } from './permissions/setup';
import { extensionAdvice, SECRET_KEYS } from './providerConfig';
import { passEnvOf, toolSecrets } from './toolSecrets';

/**
 * Where VS Code keeps its bundled ripgrep (desktop and code-server lay it out the same way);
 * undefined if not found, and the core falls back to its own search.
 */
function findRipgrep(): string | undefined {
  const exe = process.platform === 'win32' ? 'rg.exe' : 'rg';
  for (const dir of ['node_modules', 'node_modules.asar.unpacked']) {
    const p = join(vscode.env.appRoot, dir, '@vscode', 'ripgrep', 'bin', exe);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/**
 * Creates the core's TaskRuntime for this window. Called on the first prompt, the first history
 * request or when a view shows the last task again, never at activation: the core (and the
 * provider SDKs it pulls in) is imported here, lazily. Tasks are stored under the extension's
 * global storage, locked as "VS Code window <pid>".
 * Rejects when no folder is open: a task needs a workspace to work in. Permission prompts go to
 * `asker` (the chat's PermissionBroker: a card in the chat, and the notification of
 * permissionDialog.ts when no chat is visible). `mcp`: the window's MCP hub (owned by the
 * extension's McpService, shared by every task), when there is one. `onActivity` gets the
 * window's activity (the Agents view shows its board).
 */
export async function loadTaskRuntime(
  context: vscode.ExtensionContext,
  log: Logger,
  windowTrust: WindowTrust,
  asker: PermissionAsker,
  mcp?: McpToolSource & McpStatusSource,
  onActivity?: (activity: ProcessActivity) => void,
  onPool?: (pool: WorkerPool | null) => void,
): Promise<TaskRuntimeLike> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') throw new Error('open a folder first: a task works inside a workspace folder.');
  const started = performance.now();
  const { TaskRuntime } = await import('../core/runtime/taskRuntime');
  const ripgrepPath = findRipgrep();
  // One store for every window and folder (docs/persistence.md): history lists tasks of other
  // folders too, and two windows on one task meet at its lock file.
  const storageDir = context.globalStorageUri.fsPath;
  // Tool processes get the window's environment without the keys it holds (read at window start,
  // like the sandbox setting), unless the person passes a variable through in user settings.
  const passEnv = passEnvOf(vscode.workspace.getConfiguration('keel').inspect('tools.passEnv'));
  for (const p of passEnv.problems) log.warn(p);
  const secrets = await toolSecrets(passEnv.names, Object.values(SECRET_KEYS).map((k) => Promise.resolve(context.secrets.get(k))));
  // What the workspace provides is used only as the person approved it (docs/permissions.md, "Trust").
  const trust = await windowTrust.get();
  if (!trust) throw new Error('open a folder first: a task works inside a workspace folder.');
  // Claude Code settings Keel does not use (`model`, `statusLine`): said once in Keel's log.
  for (const n of ignoredSettingsNotices(folder.uri.fsPath)) log.warn(n);
  const activity = await startActivity(context, log, folder.uri.fsPath, storageDir, () => secrets.environment(), trust);
  onActivity?.(activity);
  // keel.workers.max > 0: each task's turn loop runs in a worker process (docs/workers.md), on the
  // extension host's own binary acting as Node (ELECTRON_RUN_AS_NODE), from the lean dist/worker.js.
  const config = vscode.workspace.getConfiguration('keel');
  const maxWorkers = Math.max(0, Math.min(16, Math.floor(config.get<number>('workers.max', 4))));
  const eviction = config.get<string>('workers.eviction', 'lru');
  const strategy: EvictionStrategy = eviction === 'oldest' || eviction === 'least_used' ? eviction : 'lru';
  const workers =
    maxWorkers > 0
      ? {
          command: { ...workerCommandBeside(join(context.extensionPath, 'dist'), join), electronRunAsNode: true },
          max: maxWorkers,
          strategy,
        }
      : undefined;
  const runtime = new TaskRuntime({
    workspace: folder.uri.fsPath,
    trust,
    // The workspace's own skills are offered as the person approved them (Review Workspace Trust).
    contentGate: trust,
    hooks: activity.hooks,
    feed: activity.feed,
    ...(workers ? { workers } : {}),
    ...(ripgrepPath ? { ripgrepPath } : {}),
    storageDir,
    ownerLabel: `VS Code window ${process.pid}`,
    asker,
    secrets,
    ...(mcp ? { mcp } : {}),
    sandbox: await sandboxSettings(log, folder.uri.fsPath),
    advise: extensionAdvice,
    // keel.maxBudgetUsd: the person's own (user settings only: a workspace never sets what a task may spend), read when a task starts.
    maxBudgetUsd: () => budgetSetting(vscode.workspace.getConfiguration('keel').inspect<number | null>('maxBudgetUsd')?.globalValue),
    // keel.memory.* are read at the start of every run (docs/memory.md).
    memory: () => {
      const c = vscode.workspace.getConfiguration('keel.memory');
      return { enabled: c.get<boolean>('enabled', true), autoSave: c.get<boolean>('autoSave', true) };
    },
    log: (level: string, message: string) => {
      if (level === 'error') log.error(message);
      else if (level === 'warn') log.warn(message);
      else if (level === 'info') log.info(message);
      else log.debug(message);
    },
  });
  // keel.workers.max > 0: the pool is on the status socket (keel workers) and behind Keel: Show
  // Workers; its workers' and the MCP servers' state changes are on the bus (keel events --follow).
  const pool = runtime.workerPool();
  if (pool) activity.publishPool(pool);
  if (mcp) activity.publishMcp(mcp);
  onPool?.(pool);
  log.info(`task runtime ready in ${(performance.now() - started).toFixed(1)} ms (workspace ${folder.uri.fsPath})`);
  return runtime;
}

/**
 * The window's activity (docs/hooks.md): the hook runner, the status board and the status socket
 * (`keel status` sees this window's tasks). Approvals are Keel's, shared with the CLI
 * (`$KEEL_HOME` or `~/.keel`). A workspace's own hooks run only as the person approved the
 * workspace: one that did not run is reported to the window's trust, whose notification offers
 * the review (trust/windowTrust.ts). The status bar says "2 working · 1 needs you" while
 * something works or waits for the person.
 */
async function startActivity(context: vscode.ExtensionContext, log: Logger, workspace: string, storage: string, environment: () => NodeJS.ProcessEnv, trust: WorkspaceTrust) {
  const { ProcessActivity } = await import('../core/agents/processActivity');
  const { statusSummary } = await import('../shared/domain/agents');
  const { tightenTree } = await import('../core/store/privateFiles');
  const keelHome = process.env.KEEL_HOME || join(homedir(), '.keel');
  // Keel's home (approvals, settings, the CLI's tasks) is this user's alone: an older Keel left it 0755.
  for (const problem of tightenTree(keelHome)) log.warn(`could not make Keel's files private: ${problem}`);
  const activity = new ProcessActivity({
    trust,
    workspace,
    keelHome,
    // `keel events --follow --storage <the extension's global storage>` reads this window's bus.
    storage,
    label: `VS Code window ${process.pid}`,
    environment,
    log: (level, message) => (level === 'error' ? log.error(message) : level === 'warn' ? log.warn(message) : log.info(message)),
    onUnapproved: (_hooks, items) => trust.reportHeld(items),
  });
  await activity.start();
  const bar = vscode.window.createStatusBarItem('keel.agents', vscode.StatusBarAlignment.Left, 50);
  bar.name = 'Keel agents';
  const update = () => {
    const text = statusSummary(activity.board.rows());
    bar.text = text ? `$(hubot) ${text}` : '';
    if (text) bar.show();
    else bar.hide();
  };
  const unsubscribe = activity.board.subscribe(update);
  context.subscriptions.push(bar, { dispose: () => (unsubscribe(), void activity.dispose('window closed')) });
  return activity;
}

/** `keel.maxBudgetUsd` as the person set it: a positive number, else no budget. */
function budgetSetting(value: number | null | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}
