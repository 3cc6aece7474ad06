import { homedir } from 'node:os';
import * as vscode from 'vscode';
import type { ExportFormat } from '../../shared/protocol/chatMessages';
import type { HistoryServices, LastTask } from './taskHistory';

const LAST_TASK_KEY = 'keel.lastTask';

/**
 * History's VS Code services: a save dialog for exports (in the workspace folder by default), a
 * modal confirmation, and the last task shown, kept in this workspace's state so a reloaded
 * window shows it again.
 */
export function vscodeHistoryServices(context: vscode.ExtensionContext): HistoryServices {
  const folder = () => vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return {
    workspace: () => folder()?.uri.fsPath,
    async saveFile(suggestedName: string, content: string, format: ExportFormat) {
      const base = folder()?.uri ?? vscode.Uri.file(homedir());
      const target = await vscode.window.showSaveDialog({
        title: `Keel: Export task as ${format === 'markdown' ? 'Markdown' : 'JSON'}`,
        defaultUri: vscode.Uri.joinPath(base, suggestedName),
        filters: format === 'markdown' ? { Markdown: ['md'] } : { JSON: ['json'] },
        saveLabel: 'Export',
      });
      if (!target) return undefined;
      await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(content));
      return target.scheme === 'file' ? target.fsPath : target.toString();
    },
    async confirm(message: string, detail: string, action: string) {
      return (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action;
    },
    lastTask: lastTaskIn(context, LAST_TASK_KEY),
    // Each chat surface brings back its own task after a reload (the editor tab: `keel.lastTask.panel`).
    lastTaskOf: (surface) => lastTaskIn(context, surface === 'sidebar' ? LAST_TASK_KEY : `${LAST_TASK_KEY}.${surface}`),
  };
}

function lastTaskIn(context: vscode.ExtensionContext, key: string): LastTask {
  return {
    get: () => context.workspaceState.get<string>(key),
    set: (id) => void context.workspaceState.update(key, id),
  };
}
