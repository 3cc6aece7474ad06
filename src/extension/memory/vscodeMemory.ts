import * as vscode from 'vscode';
import type { MemorySettingName } from '../../shared/protocol/memoryMessages';
import type { MemoryWorkbench } from './memoryRequests';

/** The VS Code side of the Memory page: the open folder, the settings, the modal, the editor and a file watcher. */
export function vscodeMemoryWorkbench(): MemoryWorkbench {
  return {
    workspace() {
      const folder = vscode.workspace.workspaceFolders?.[0];
      return folder && folder.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
    },
    settings() {
      const c = vscode.workspace.getConfiguration('keel.memory');
      return { enabled: c.get<boolean>('enabled', true), autoSave: c.get<boolean>('autoSave', true) };
    },
    async setSetting(name: MemorySettingName, value: boolean) {
      const c = vscode.workspace.getConfiguration('keel.memory');
      // Change the value where it is set, so the new value is the one that applies.
      const i = c.inspect<boolean>(name);
      const target =
        i?.workspaceFolderValue !== undefined
          ? vscode.ConfigurationTarget.WorkspaceFolder
          : i?.workspaceValue !== undefined
            ? vscode.ConfigurationTarget.Workspace
            : vscode.ConfigurationTarget.Global;
      await c.update(name, value, target);
    },
    async confirmDelete(title, file) {
      const choice = await vscode.window.showWarningMessage(
        `Delete the memory "${title.slice(0, 200)}"?`,
        { modal: true, detail: `.keel/memory/${file} will be deleted from disk; runs will no longer use it.` },
        'Delete',
      );
      return choice === 'Delete';
    },
    async openFile(path) {
      await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: false });
    },
    watch(workspace, onChange) {
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(workspace), '.keel/memory/**'));
      const subs = [watcher.onDidCreate(onChange), watcher.onDidChange(onChange), watcher.onDidDelete(onChange), watcher];
      return () => {
        for (const s of subs) s.dispose();
      };
    },
  };
}
