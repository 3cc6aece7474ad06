import { errorMessage } from '../../shared/domain/errors';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryIndex } from '../../core/memory/memoryIndex';
import type { MemoryActionMessage, SearchMemoriesMessage, SetMemorySettingMessage } from '../../shared/protocol/fromWebview';
import { boundMemory, type MemorySettingName, type MemoryState } from '../../shared/protocol/memoryMessages';
import type { ToWebviewPayload } from '../../shared/protocol/toWebview';
import { type Logger } from '../logger';
import type { ViewConnection } from '../viewConnection';
import { memoryFolderProblem, resolveMemoryFile } from './memoryPaths';

/** What the Memory page needs of the workbench (VS Code in the extension, a fake in tests). */
export interface MemoryWorkbench {
  /** The open folder's path, or undefined when none is open (or it is not on disk). */
  workspace(): string | undefined;
  /** `keel.memory.enabled` and `keel.memory.autoSave` as they apply now. */
  settings(): { enabled: boolean; autoSave: boolean };
  setSetting(name: MemorySettingName, value: boolean): Promise<void>;
  /** A modal question; resolves true only when the person chose Delete. */
  confirmDelete(title: string, file: string): Promise<boolean>;
  /** Opens the file in an editor (the person edits it there). */
  openFile(path: string): Promise<void>;
  /** Calls `onChange` whenever a file under `<workspace>/.keel/memory/` changes; returns the function that stops it. */
  watch(workspace: string, onChange: () => void): () => void;
}

type MemoryMessage = { type: 'getMemories' } | SearchMemoriesMessage | MemoryActionMessage | SetMemorySettingMessage;

/** At most this many search results go to the page. */
const SEARCH_LIMIT = 50;

/**
 * The Memory page's requests. `getMemories` answers the asking view and, from then on, every view
 * hears each change of the memory folder (`memories`); `searchMemories` ranks the memories with the
 * index the runs use; `memoryAction` opens or deletes one memory and says how it went (a notice),
 * the new list following. The page's word is never enough: every file name is resolved and checked
 * here (a plain file inside `.keel/memory/` of this workspace, no link), and a delete happens only
 * after the person confirmed in a modal. Never throws.
 */
export class MemoryRequests {
  private stopWatching: (() => void) | undefined;
  private watched: string | undefined;
  private index: { workspace: string; index: MemoryIndex } | undefined;
  private changeTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;

  constructor(
    private readonly workbench: MemoryWorkbench,
    private readonly log: Logger,
    private readonly broadcast: (payload: ToWebviewPayload) => void,
    /** How long a burst of file changes is gathered before the views hear it (default 100 ms). */
    private readonly changeDebounceMs = 100,
  ) {}

  async handle(view: Pick<ViewConnection, 'send'>, m: MemoryMessage): Promise<void> {
    const workspace = this.workbench.workspace();
    if (workspace) this.follow(workspace);
    switch (m.type) {
      case 'getMemories':
        break;
      case 'searchMemories':
        view.send({ type: 'memorySearch', queryId: m.queryId, files: workspace ? await this.search(workspace, m.query) : [] });
        return;
      case 'memoryAction':
        if (!workspace) {
          view.send({ type: 'notice', message: 'Open a folder first: memories belong to a workspace folder.' });
          break;
        }
        if (m.action === 'open') await this.open(view, workspace, m.file);
        else await this.delete(view, workspace, m.file);
        break;
      case 'setMemorySetting':
        try {
          await this.workbench.setSetting(m.setting, m.value);
          this.log.info(`keel.memory.${m.setting} set to ${m.value} from the Memory page`);
        } catch (e) {
          this.log.warn(`setting keel.memory.${m.setting} failed: ${errorMessage(e)}`);
          view.send({ type: 'notice', message: `Could not change keel.memory.${m.setting}: ${errorMessage(e)}` });
        }
        break;
    }
    view.send({ type: 'memories', state: await this.state() });
  }

  /** The page's whole state now. Never throws: an unreadable folder is a problem line. */
  async state(): Promise<MemoryState> {
    const settings = this.workbench.settings();
    const workspace = this.workbench.workspace();
    if (!workspace) return { available: false, dir: '', memories: [], problems: [], settings };
    const dir = join(workspace, '.keel', 'memory');
    const outside = memoryFolderProblem(workspace);
    if (outside) return { available: true, dir, memories: [], problems: [outside], settings };
    const problems: string[] = [];
    const { MemoryStore } = await import('../../core/memory/memoryStore');
    const store = new MemoryStore(workspace, (_level, message) => problems.length < 50 && problems.push(message.slice(0, 1000)));
    const memories = store.list().slice(0, 10_000).map(boundMemory);
    return { available: true, dir, memories, problems, settings };
  }

  dispose(): void {
    this.disposed = true;
    if (this.changeTimer) clearTimeout(this.changeTimer);
    this.stopWatching?.();
    this.stopWatching = undefined;
  }

  /** The memories' file names for a search box query, best first: the runs' index and query words, with a looser cut (any shared word, up to 50). */
  private async search(workspace: string, query: string): Promise<string[]> {
    if (!query.trim() || memoryFolderProblem(workspace)) return [];
    try {
      if (this.index?.workspace !== workspace) {
        const [{ MemoryIndex }, { MemoryStore }] = await Promise.all([import('../../core/memory/memoryIndex'), import('../../core/memory/memoryStore')]);
        this.index = { workspace, index: new MemoryIndex(new MemoryStore(workspace)) };
      }
      const { memoryQuery } = await import('../../core/memory/memoryContext');
      return this.index.index.search(memoryQuery(query), { limit: SEARCH_LIMIT, minTerms: 1, relativeCutoff: 0 }).map((h) => h.memory.file);
    } catch (e) {
      this.log.warn(`memory search failed: ${errorMessage(e)}`);
      return [];
    }
  }

  private async open(view: Pick<ViewConnection, 'send'>, workspace: string, file: string): Promise<void> {
    const r = resolveMemoryFile(workspace, file);
    if (!r.ok) {
      this.log.warn(`Memory page: refused to open ${JSON.stringify(file.slice(0, 200))}: ${r.reason}`);
      view.send({ type: 'notice', message: `Not opened: ${r.reason}.` });
      return;
    }
    try {
      await this.workbench.openFile(r.path);
    } catch (e) {
      view.send({ type: 'notice', message: `Could not open ${file}: ${errorMessage(e)}` });
    }
  }

  private async delete(view: Pick<ViewConnection, 'send'>, workspace: string, file: string): Promise<void> {
    const r = resolveMemoryFile(workspace, file);
    if (!r.ok) {
      this.log.warn(`Memory page: refused to delete ${JSON.stringify(file.slice(0, 200))}: ${r.reason}`);
      view.send({ type: 'notice', message: `Not deleted: ${r.reason}.` });
      return;
    }
    const { MemoryStore } = await import('../../core/memory/memoryStore');
    const title = new MemoryStore(workspace).tryRead(file)?.title ?? file;
    if (!(await this.workbench.confirmDelete(title, file))) return;
    // The folder may have changed while the modal was open: check again what is deleted.
    const again = resolveMemoryFile(workspace, file);
    if (!again.ok) {
      view.send({ type: 'notice', message: `Not deleted: ${again.reason}.` });
      return;
    }
    try {
      unlinkSync(again.path);
    } catch (e) {
      this.log.warn(`deleting memory ${file} failed: ${errorMessage(e)}`);
      view.send({ type: 'notice', message: `Could not delete ${file}: ${errorMessage(e)}` });
      return;
    }
    this.log.info(`memory ${file} deleted from the Memory page`);
    view.send({ type: 'notice', message: `Deleted the memory "${title}" (${file}).` });
  }

  /** Watches the workspace's memory folder once a page asked; every view hears each change. */
  private follow(workspace: string): void {
    if (this.disposed || this.watched === workspace) return;
    this.stopWatching?.();
    this.watched = workspace;
    this.stopWatching = this.workbench.watch(workspace, () => {
      if (this.changeTimer) clearTimeout(this.changeTimer);
      this.changeTimer = setTimeout(() => {
        this.changeTimer = undefined;
        if (this.disposed) return;
        void this.state().then(
          (state) => this.broadcast({ type: 'memories', state }),
          (e: unknown) => this.log.warn(`listing memories failed: ${errorMessage(e)}`),
        );
      }, this.changeDebounceMs);
    });
  }
}
