import { errorMessage } from '../shared/domain/errors';
import type { TranscriptItem } from '../shared/domain/transcript';
import type { PendingPermission, SettingsState } from '../shared/protocol/chatMessages';
import type { FromWebviewMessage, SaveSettingsMessage } from '../shared/protocol/fromWebview';
import type { SlashCommand } from '../shared/protocol/toWebview';
import { DEFAULT_MODELS, DEMO_MODEL_LABEL, type UserProviderId } from '../shared/domain/models';
import { isExternalHttpLink, isRefusedLink } from './links';
import { type Logger } from './logger';
import type { ViewConnection } from './viewConnection';
import { mentionItems } from './mentions/mentionItems';

/** What the chat asks of the workbench (VS Code in the extension, fakes in tests). */
export interface WorkbenchServices {
  /** Workspace-relative paths of files whose path contains `query` (at most `max`). */
  findFiles(query: string, max: number): Promise<string[]>;
  /** Workspace-relative paths of folders whose name contains `query` (at most `max`). */
  findFolders?(query: string, max: number): Promise<string[]>;
  /** Resources of ready MCP servers as `server:uri`, matching `query` (for `@` mentions). */
  findResources?(query: string, max: number): Promise<string[]>;
  /** The active editor's file, workspace-relative; undefined when none (or outside the workspace). */
  activeFile?(): string | undefined;
  /** Opens a diff editor: `before` (null: a new file) on the left, `after` on the right. `toolCallId`: the call it belongs to. */
  openDiff(change: { path: string; before: string | null; after: string; title: string; toolCallId?: string }): Promise<void>;
  copy(text: string): Promise<void>;
  readSettings(): Promise<SettingsState>;
  saveSettings(settings: Omit<SaveSettingsMessage, 'type'>): Promise<void>;
  /** Stores a key in SecretStorage (empty: removes it). Never logs or returns it. */
  storeApiKey(provider: 'anthropic' | 'openai-compatible', key: string): Promise<void>;
  /** Slash commands whose name contains `query` (at most `max`); none when absent. */
  findCommands?(query: string, max: number): Promise<SlashCommand[]>;
}

type ProposedDiff = NonNullable<PendingPermission['diff']>;
type ToolItem = Extract<TranscriptItem, { kind: 'tool' }>;

export interface ViewRequestsOptions {
  log: Logger;
  workbench: WorkbenchServices;
  openExternal(href: string): Promise<unknown>;
  confirm(message: string, detail: string): Promise<boolean>;
  warn(message: string): void;
  /** The full proposed change of a tool call (from its permission prompt), else its transcript item. */
  diffSource(toolCallId: string): ProposedDiff | ToolItem | undefined;
  /** Settings or a key changed: views need a fresh snapshot. */
  settingsChanged(): void;
  /** How long to wait for typing to pause before searching files (default 120 ms). */
  mentionDebounceMs?: number;
}

const PROVIDER_NAMES: Record<UserProviderId, string> = { anthropic: 'Anthropic', 'openai-compatible': 'the OpenAI-compatible server', demo: 'the demo' };

/** Why `url` cannot be a provider's base URL, or undefined when it can (empty means the default). */
export function baseUrlProblem(url: string): string | undefined {
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `“${url.slice(0, 200)}” is not a URL (e.g. http://localhost:11434/v1).`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `the base URL must start with http:// or https:// (got ${parsed.protocol}).`;
  return undefined;
}

/** The change a tool call makes, as far as its input tells (Edit: the replaced text; Write: the new file). */
export function diffOfToolInput(item: ToolItem): ProposedDiff | undefined {
  const path = typeof item.input.file_path === 'string' ? item.input.file_path : '';
  if (!path) return undefined;
  if (item.name === 'Write' && typeof item.input.content === 'string') return { path, before: null, after: item.input.content };
  if (item.name === 'Edit' && typeof item.input.old_string === 'string' && typeof item.input.new_string === 'string') {
    return { path, before: item.input.old_string, after: item.input.new_string };
  }
  return undefined;
}

/**
 * The chat's requests that touch the workbench rather than a task: links, `@` file search,
 * diffs, the clipboard and the settings page. Never throws; failures are logged and told to the
 * view that asked.
 */
export class ViewRequests {
  private readonly mentionTimers = new Map<ViewConnection, ReturnType<typeof setTimeout>>();

  constructor(private readonly o: ViewRequestsOptions) {}

  async handle(view: ViewConnection, m: FromWebviewMessage): Promise<void> {
    switch (m.type) {
      case 'openLink':
        await this.openLink(m.href);
        return;
      case 'mentionQuery':
        this.mention(view, m.queryId, m.query);
        return;
      case 'commandQuery': {
        const commands = (await this.o.workbench.findCommands?.(m.query, 50).catch((e: unknown) => {
          this.o.log.warn(`slash command search failed: ${String(e)}`);
          return [];
        })) ?? [];
        view.send({ type: 'commandResults', queryId: m.queryId, commands: commands.slice(0, 100) });
        return;
      }
      case 'openDiff':
        await this.openDiff(view, m.toolCallId);
        return;
      case 'copy':
        await this.o.workbench.copy(m.text);
        return;
      case 'getSettings':
        view.send({ type: 'settings', settings: await this.o.workbench.readSettings() });
        return;
      case 'saveSettings':
        await this.saveSettings(view, m);
        return;
      case 'setApiKey':
        await this.o.workbench.storeApiKey(m.provider, m.key.trim());
        this.o.log.info(`API key for ${m.provider} ${m.key.trim() ? 'stored' : 'removed'} from the chat`);
        view.send({ type: 'settings', settings: await this.o.workbench.readSettings() });
        view.send({ type: 'notice', message: m.key.trim() ? 'API key saved in VS Code Secret Storage.' : 'API key removed.' });
        this.o.settingsChanged();
        return;
      default:
        this.o.log.warn(`no handler for ${m.type}`);
    }
  }

  /**
   * Saves the settings page's values and tells the page how it went: what now applies, or why
   * nothing was saved (an invalid base URL is refused before anything is written).
   */
  private async saveSettings(view: ViewConnection, m: SaveSettingsMessage): Promise<void> {
    const s = { provider: m.provider, model: m.model.trim(), baseUrl: m.baseUrl.trim() };
    const problem = s.provider === 'demo' ? undefined : baseUrlProblem(s.baseUrl);
    if (problem) {
      view.send({ type: 'settingsSaved', ok: false, message: `Not saved: ${problem}` });
      return;
    }
    try {
      await this.o.workbench.saveSettings(s);
    } catch (e) {
      this.o.log.warn(`saving the settings failed: ${errorMessage(e)}`);
      view.send({ type: 'settingsSaved', ok: false, message: `Not saved: ${errorMessage(e)}` });
      return;
    }
    this.o.log.info(`settings saved from the chat (provider ${m.provider})`);
    view.send({ type: 'settings', settings: await this.o.workbench.readSettings() });
    this.o.settingsChanged();
    const model = s.provider === 'demo' ? DEMO_MODEL_LABEL : s.model || `${DEFAULT_MODELS[s.provider]} (the default)`;
    view.send({ type: 'settingsSaved', ok: true, message: `Saved. New tasks use ${PROVIDER_NAMES[s.provider]}, model ${model}.` });
  }

  dispose(): void {
    for (const t of this.mentionTimers.values()) clearTimeout(t);
    this.mentionTimers.clear();
  }

  /** Only the last query of a burst of typing is searched; its answer carries its id. */
  private mention(view: ViewConnection, queryId: number, query: string): void {
    const previous = this.mentionTimers.get(view);
    if (previous) clearTimeout(previous);
    const w = this.o.workbench;
    const timer = setTimeout(() => {
      this.mentionTimers.delete(view);
      const sources = {
        files: (q: string, max: number) => w.findFiles(q, max),
        ...(w.findFolders ? { folders: (q: string, max: number) => w.findFolders!(q, max) } : {}),
        ...(w.findResources ? { resources: (q: string, max: number) => w.findResources!(q, max) } : {}),
        ...(w.activeFile ? { activeFile: () => w.activeFile!() } : {}),
      };
      mentionItems(query, sources, 50).then(
        (items) => view.send({ type: 'mentionResults', queryId, items }),
        (e: unknown) => this.o.log.warn(`the search for a mention failed: ${String(e)}`),
      );
    }, this.o.mentionDebounceMs ?? 120);
    this.mentionTimers.set(view, timer);
  }

  private async openDiff(view: ViewConnection, toolCallId: string): Promise<void> {
    const source = this.o.diffSource(toolCallId);
    const diff = source && 'kind' in source ? diffOfToolInput(source) : source;
    if (!diff) {
      view.send({ type: 'notice', message: 'There is no change to show for that tool call.' });
      return;
    }
    const name = diff.path.split(/[\\/]/).pop() ?? diff.path;
    await this.o.workbench.openDiff({ ...diff, title: `${name} (proposed by Keel)`, toolCallId });
  }

  /**
   * http(s) links open in the browser. Script-like schemes (javascript:, data:, vbscript:,
   * command:) are refused. Anything else (mailto:, file:, vscode:) is opened only if the user
   * confirms in a modal.
   */
  private async openLink(href: string): Promise<void> {
    if (isExternalHttpLink(href)) {
      await this.o.openExternal(href);
      return;
    }
    if (isRefusedLink(href)) {
      this.o.log.warn(`refused to open a link: ${href.slice(0, 200)}`);
      this.o.warn('Keel does not open script, data or command links.');
      return;
    }
    if (await this.o.confirm('Open a link that is not a web page?', `The chat wants to open:\n${href.slice(0, 500)}`)) {
      await this.o.openExternal(href);
    }
  }
}
