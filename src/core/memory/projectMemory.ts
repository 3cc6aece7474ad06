import { indexCacheFile } from './indexCache';
import { MemoryIndex, type MemoryHit } from './memoryIndex';
import { memoryContext, memoryQuery, DEFAULT_MEMORY_TOKEN_CAP, type MemoryContext } from './memoryContext';
import { memoryScreen } from './gatekeeper';
import { MemoryStore, type StoredMemory } from './memoryStore';
import type { LessonCandidate } from './lesson';

/**
 * One workspace's memory as a run uses it: the files (`MemoryStore`) and their search index
 * (`MemoryIndex`), shared by every task of a host so the index is built once, and kept between
 * runs in `storageDir` when given (indexCache.ts). Never throws for a search (a folder that cannot
 * be read is an empty memory); `save` throws on a failed write.
 */
export class ProjectMemory {
  readonly store: MemoryStore;
  readonly index: MemoryIndex;

  constructor(workspace: string, log?: (level: 'info' | 'warn', message: string) => void, storageDir?: string) {
    this.store = new MemoryStore(workspace, log);
    this.index = new MemoryIndex(this.store, { ...(storageDir ? { cacheFile: indexCacheFile(storageDir, workspace) } : {}), ...(log ? { log } : {}) });
  }

  /** Why the workspace's memory folder is not used (a link), or null: nothing is read from it or saved to it then. */
  folderProblem(): string | null {
    return this.store.folderProblem();
  }

  /**
   * The memories to inject for a prompt (the prompt's words and the files it names), within
   * `maxTokens`. `use`: which found memories may be used at all (the person's approval: trust).
   * A memory file never met the gatekeeper when a person or a repository wrote it: one that fails
   * its secret or instruction rules is left out, with a note (`left`).
   */
  recall(
    prompt: string,
    maxTokens = DEFAULT_MEMORY_TOKEN_CAP,
    knownSecrets: Iterable<string> = [],
    use: (m: StoredMemory) => boolean = () => true,
  ): MemoryContext & { left: { file: string; why: string }[] } {
    let hits: MemoryHit[];
    try {
      hits = this.index.search(memoryQuery(prompt)).filter((h) => use(h.memory));
    } catch {
      hits = [];
    }
    const secrets = [...knownSecrets];
    const left: { file: string; why: string }[] = [];
    const kept = hits.filter((h) => {
      const why = memoryScreen(h.memory, secrets);
      if (why) left.push({ file: h.memory.file, why });
      return !why;
    });
    return { ...memoryContext(kept, maxTokens), left };
  }

  /** Saves a kept lesson as a new memory file (atomically); resolves with its file name. */
  save(lesson: LessonCandidate, taskId: string, now = new Date()): Promise<string> {
    return this.store.add({ title: lesson.title, created: now.toISOString(), source: taskId, tags: lesson.tags, body: lesson.body });
  }
}
