import { MemoryIndex, type MemoryHit } from './memoryIndex';
import { memoryContext, memoryQuery, DEFAULT_MEMORY_TOKEN_CAP, type MemoryContext } from './memoryContext';
import { MemoryStore, type StoredMemory } from './memoryStore';
import type { LessonCandidate } from './lesson';

/**
 * One workspace's memory as a run uses it: the files (`MemoryStore`) and their search index
 * (`MemoryIndex`), shared by every task of a host so the index is built once. Never throws for a
 * search (a folder that cannot be read is an empty memory); `save` throws on a failed write.
 */
export class ProjectMemory {
  readonly store: MemoryStore;
  readonly index: MemoryIndex;

  constructor(workspace: string, log?: (level: 'info' | 'warn', message: string) => void) {
    this.store = new MemoryStore(workspace, log);
    this.index = new MemoryIndex(this.store);
  }

  /**
   * The memories to inject for a prompt (the prompt's words and the files it names), within
   * `maxTokens`. `use`: which found memories may be used at all (the person's approval: trust).
   */
  recall(prompt: string, maxTokens = DEFAULT_MEMORY_TOKEN_CAP, use: (m: StoredMemory) => boolean = () => true): MemoryContext {
    let hits: MemoryHit[];
    try {
      hits = this.index.search(memoryQuery(prompt)).filter((h) => use(h.memory));
    } catch {
      hits = [];
    }
    return memoryContext(hits, maxTokens);
  }

  /** Saves a kept lesson as a new memory file (atomically); resolves with its file name. */
  save(lesson: LessonCandidate, taskId: string, now = new Date()): Promise<string> {
    return this.store.add({ title: lesson.title, created: now.toISOString(), source: taskId, tags: lesson.tags, body: lesson.body });
  }
}
