import { watch, type FSWatcher } from 'node:fs';
import MiniSearch from 'minisearch';
import type { StoredMemory, MemoryStore } from './memoryStore';
import { normalizeTerm, terms, tokenize } from './terms';

/** A memory the search found, with its BM25 score (MiniSearch's BM25+, title and tags boosted). */
export interface MemoryHit {
  memory: StoredMemory;
  score: number;
}

export interface MemorySearchOptions {
  /** At most this many hits (default 5). */
  limit?: number;
  /**
   * Hits scoring below this are dropped (default 0). BM25 scores are not comparable across
   * corpora: with 3 memories every word is "common" and scores stay low, so the default relevance
   * test is `minTerms`, not a score.
   */
  minScore?: number;
  /**
   * A hit must share at least this many distinct words with the query, or one word with its
   * title or tags (default 2): one common word in a memory's text is not relevance.
   */
  minTerms?: number;
  /** Hits scoring below this fraction of the best hit are dropped (default 0.25). */
  relativeCutoff?: number;
}

export const DEFAULT_SEARCH: Required<MemorySearchOptions> = { limit: 5, minScore: 0, minTerms: 2, relativeCutoff: 0.25 };

/** Query terms taken from one prompt at most: a pasted file must not make every search slow. */
const MAX_QUERY_TERMS = 48;

/**
 * In a large memory (at least COMMON_MIN_DOCS files), a query word found in more than this share
 * of the memories is dropped before searching (the rarest MIN_KEPT_TERMS are always kept): it
 * adds almost nothing to BM25, and matching it makes the search score most of the memories.
 */
const COMMON_SHARE = 0.05;
const COMMON_MIN_DOCS = 400;
const MIN_KEPT_TERMS = 3;

interface Indexed {
  id: string;
  title: string;
  tags: string;
  body: string;
}

/**
 * A full-text index of one workspace's memories (MiniSearch: BM25+ ranking, prefix matching of
 * longer words, title and tags boosted). It follows the files: `search` first re-reads what
 * changed — a file added, removed or renamed (the folder's mtime changes) or edited in place
 * (seen by a watcher when `watch()` was called; a host that lives long calls it) — so a memory
 * deleted in the editor is never injected again. Cost per search when nothing changed: one stat
 * of the folder plus the query.
 */
export class MemoryIndex {
  private mini = newMini();
  private readonly byFile = new Map<string, StoredMemory>();
  /** In how many memories each term occurs (document frequency), and each memory's terms. */
  private readonly df = new Map<string, number>();
  private readonly termsOf = new Map<string, string[]>();
  private stamp = Number.NaN;
  private dirty = true;
  private watcher: FSWatcher | null = null;
  private wantWatch = false;

  constructor(private readonly store: MemoryStore) {}

  /** Re-reads changed files if anything changed since the last call. */
  refresh(): void {
    if (this.wantWatch && !this.watcher) this.startWatcher();
    const stamp = this.store.dirStamp();
    if (!this.dirty && stamp === this.stamp) return;
    this.dirty = false;
    this.stamp = stamp;
    const names = new Set(this.store.fileNames());
    for (const [file, m] of this.byFile) {
      if (names.has(file)) continue;
      this.mini.discard(m.file);
      this.byFile.delete(file);
      this.forget(file);
    }
    for (const file of names) {
      const old = this.byFile.get(file);
      const fresh = this.store.tryRead(file);
      if (old && fresh && old.mtimeMs === fresh.mtimeMs && old.size === fresh.size) continue;
      if (old) {
        this.mini.discard(file);
        this.byFile.delete(file);
        this.forget(file);
      }
      if (fresh) {
        this.mini.add(indexed(fresh));
        this.byFile.set(file, fresh);
        const t = terms(`${fresh.title} ${fresh.tags.join(' ')} ${fresh.body}`);
        this.termsOf.set(file, t);
        for (const x of t) this.df.set(x, (this.df.get(x) ?? 0) + 1);
      }
    }
    // MiniSearch keeps discarded documents' terms until it vacuums; many edits make that worth it.
    if (this.mini.dirtCount > 200) void this.mini.vacuum();
  }

  /** Watches the folder so edits in place are seen too. Returns a stop function; never throws. */
  watch(): () => void {
    this.wantWatch = true;
    this.startWatcher();
    return () => {
      this.wantWatch = false;
      this.unwatch();
    };
  }

  private startWatcher(): void {
    if (this.watcher) return;
    try {
      this.watcher = watch(this.store.dir, { persistent: false }, () => {
        this.dirty = true;
      });
      this.watcher.on('error', () => this.unwatch());
      // Whatever changed before the watcher started is read on the next refresh.
      this.dirty = true;
    } catch {
      // No folder yet: it is tried again on the next refresh.
    }
  }

  /** Every memory indexed now (after a refresh), sorted by file name. */
  all(): StoredMemory[] {
    this.refresh();
    return [...this.byFile.values()].sort((a, b) => a.file.localeCompare(b.file));
  }

  get size(): number {
    return this.byFile.size;
  }

  /** The best memories for `query`, best first (see MemorySearchOptions). */
  search(query: string, options: MemorySearchOptions = {}): MemoryHit[] {
    const o = { ...DEFAULT_SEARCH, ...options };
    this.refresh();
    const q = this.selective(terms(query).slice(0, MAX_QUERY_TERMS));
    if (q.length === 0 || this.byFile.size === 0) return [];
    const results = this.mini.search(q.join(' '), {
      boost: { title: 2, tags: 1.5 },
      prefix: (term) => term.length >= 5,
      combineWith: 'OR',
    });
    const relevant = results.filter((r) => new Set(r.queryTerms).size >= o.minTerms || Object.values(r.match).some((fields) => fields.includes('title') || fields.includes('tags')));
    const best = relevant[0]?.score ?? 0;
    const out: MemoryHit[] = [];
    for (const r of relevant) {
      if (out.length >= o.limit) break;
      if (r.score < o.minScore || r.score < best * o.relativeCutoff) break;
      const memory = this.byFile.get(String(r.id));
      if (memory) out.push({ memory, score: r.score });
    }
    return out;
  }

  /** The indexed memories most like `text` by words (candidates for duplicate detection). */
  similarCandidates(text: string, limit = 5): StoredMemory[] {
    this.refresh();
    const q = terms(text).slice(0, MAX_QUERY_TERMS);
    if (q.length === 0) return [];
    return this.mini
      .search(q.join(' '), { combineWith: 'OR' })
      .slice(0, limit)
      .map((r) => this.byFile.get(String(r.id)))
      .filter((m): m is StoredMemory => Boolean(m));
  }

  private forget(file: string): void {
    for (const x of this.termsOf.get(file) ?? []) {
      const n = (this.df.get(x) ?? 1) - 1;
      if (n <= 0) this.df.delete(x);
      else this.df.set(x, n);
    }
    this.termsOf.delete(file);
  }

  /** The query's terms without the very common ones (see COMMON_SHARE); unchanged for a small memory. */
  private selective(q: string[]): string[] {
    const n = this.byFile.size;
    if (n < COMMON_MIN_DOCS) return q;
    const byRarity = [...q].sort((a, b) => (this.df.get(a) ?? 0) - (this.df.get(b) ?? 0));
    return byRarity.filter((t, i) => i < MIN_KEPT_TERMS || (this.df.get(t) ?? 0) <= n * COMMON_SHARE);
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = null;
  }
}

function newMini(): MiniSearch<Indexed> {
  return new MiniSearch<Indexed>({
    fields: ['title', 'tags', 'body'],
    idField: 'id',
    tokenize: (text) => tokenize(text),
    processTerm: (term) => normalizeTerm(term),
    // Queries arrive as normalized terms already.
    searchOptions: { tokenize: (text) => text.split(' '), processTerm: (t) => t },
  });
}

function indexed(m: StoredMemory): Indexed {
  return { id: m.file, title: m.title, tags: m.tags.join(' '), body: m.body };
}
