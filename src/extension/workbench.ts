import * as vscode from 'vscode';
import type { SettingsState } from '../shared/protocol/chatMessages';
import type { Logger } from './logger';
import { readKeelSettings, storeApiKey } from './providerSettings';
import { SECRET_KEYS, providerOf } from './providerConfig';
import type { WorkbenchServices } from './viewRequests';

/** Read-only documents holding the two sides of a proposed change, for `vscode.diff`. */
class ProposedChanges implements vscode.TextDocumentContentProvider {
  static readonly scheme = 'keel-diff';
  private readonly docs = new Map<string, string>();
  private next = 1;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.query) ?? '';
  }

  /** A URI whose document is `text`; the path keeps the file name so the language is detected. */
  add(path: string, text: string): vscode.Uri {
    const id = String(this.next++);
    this.docs.set(id, text);
    if (this.docs.size > 200) this.docs.delete(this.docs.keys().next().value ?? '');
    return vscode.Uri.from({ scheme: ProposedChanges.scheme, path: path.startsWith('/') ? path : `/${path}`, query: id });
  }
}

const EXCLUDE = '{**/node_modules/**,**/.git/**,**/dist/**,**/out/**}';

/** The VS Code implementation of what the chat asks of the workbench. */
export function vscodeWorkbench(context: vscode.ExtensionContext, log: Logger): WorkbenchServices {
  const changes = new ProposedChanges();
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(ProposedChanges.scheme, changes));
  return {
    async findFiles(query, max) {
      const q = query.replace(/[{}[\]*?\\]/g, '');
      const pattern = q ? `**/*${q}*` : '**/*';
      const found = await vscode.workspace.findFiles(pattern, EXCLUDE, max * 4);
      const rel = found.map((u) => vscode.workspace.asRelativePath(u, false));
      // Prefer paths whose file name contains the query, then shorter paths.
      const lower = q.toLowerCase();
      const score = (p: string) => ((p.split('/').pop() ?? p).toLowerCase().includes(lower) ? 0 : 1) * 1000 + p.length;
      return rel.sort((a, b) => score(a) - score(b)).slice(0, max);
    },
    async findFolders(query, max) {
      const q = query.replace(/[{}[\]*?\\/]/g, '');
      if (!q) return [];
      // Files inside a folder whose name contains the query; the folder is the deepest such segment.
      const found = await vscode.workspace.findFiles(`**/*${q}*/**`, EXCLUDE, 400);
      const lower = q.toLowerCase();
      const folders = new Set<string>();
      for (const u of found) {
        const parts = vscode.workspace.asRelativePath(u, false).split('/').slice(0, -1);
        for (let i = parts.length; i > 0; i--) {
          if (parts[i - 1]!.toLowerCase().includes(lower)) {
            folders.add(parts.slice(0, i).join('/'));
            break;
          }
        }
      }
      return [...folders].sort((a, b) => a.length - b.length || a.localeCompare(b)).slice(0, max);
    },
    activeFile() {
      const uri = vscode.window.activeTextEditor?.document.uri;
      if (!uri || uri.scheme !== 'file') return undefined;
      const rel = vscode.workspace.asRelativePath(uri, false);
      return rel === uri.fsPath ? undefined : rel;
    },
    async openDiff(change) {
      const left = changes.add(change.path, change.before ?? '');
      const right = changes.add(change.path, change.after);
      await vscode.commands.executeCommand('vscode.diff', left, right, change.title, { preview: true });
    },
    async copy(text) {
      await vscode.env.clipboard.writeText(text);
    },
    async readSettings(): Promise<SettingsState> {
      const s = readKeelSettings();
      const str = (v: unknown) => (typeof v === 'string' ? v : '');
      return {
        provider: providerOf(s),
        model: str(s.model),
        anthropicBaseUrl: str(s.anthropicBaseUrl),
        openaiBaseUrl: str(s.openaiBaseUrl),
        hasKey: {
          anthropic: Boolean(await context.secrets.get(SECRET_KEYS.anthropic)),
          'openai-compatible': Boolean(await context.secrets.get(SECRET_KEYS['openai-compatible'])),
        },
      };
    },
    async saveSettings(s) {
      const c = vscode.workspace.getConfiguration('keel');
      const target = vscode.ConfigurationTarget.Global;
      await c.update('provider', s.provider, target);
      await c.update('model', s.model, target);
      if (s.provider === 'anthropic') await c.update('anthropic.baseUrl', s.baseUrl, target);
      if (s.provider === 'openai-compatible') await c.update('openai.baseUrl', s.baseUrl, target);
      log.debug(`settings updated: provider ${s.provider}`);
    },
    async storeApiKey(provider, key) {
      await storeApiKey(context.secrets, provider, key);
    },
  };
}
