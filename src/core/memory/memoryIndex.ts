import { watch, type FSWatcher } from 'node:fs';
import { join, resolve } from 'node:path';
import MiniSearch from 'minisearch';
import { INDEX_CACHE_VERSION, readIndexCache, writeIndexCache, type CachedEntry } from './indexCache';
import { isSkipped, type FileVersion, type MemoryStore, type SkippedMemory, type StoredMemory } from './memoryStore';
import { normalizeTerm, terms, tokenize } from './terms';
import { errorMessage } from '../../shared/domain/errors';

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

export interface MemoryIndexOptions {
  /** Where the index is kept between runs (indexCache.ts); absent: built in memory only. */
  cacheFile?: string;
  /** Notes for people: files skipped (too large, not text), a cache that could not be written. */
  log?(level: 'info' | 'warn', message: string): void;
}

/** Skipped files named in one note at most; the rest are counted. */
const SKIPPED_NAMED = 5;

/**
 * A full-text index of one workspace's memories (MiniSearch: BM25+ ranking, prefix matching of
 * longer words, title and tags boosted). It follows the files: `search` first re-reads what
 * changed — a file added, removed or renamed (the folder's mtime changes) or edited in place
 * (seen by a watcher when `watch()` was called; a host that lives long calls it) — so a memory
 * deleted in the editor is never injected again. Cost per search when nothing changed: one stat
 * of the folder plus the query.
 *
 * Incremental: a file is read again only when its version (modification and change time, size,
 * inode) changed. With `cacheFile` the index survives the process (indexCache.ts): a new run
 * checks each file's version with one lstat and reads only the changed ones. Files over the size
 * limit or not text are skipped, each named once per process in a note through `log`.
 */
export class MemoryIndex {
  private mini = newMini();
  private readonly byFile = new Map<string, StoredMemory>();
  private readonly skipped = new Map<string, SkippedMemory>();
  /** In how many memories each term occurs (document frequency). */
  private readonly df = new Map<string, number>();
  private stamp = Number.NaN;
  private dirty = true;
  private watcher: FSWatcher | null = null;
  private wantWatch = false;
  private cacheTried = false;
  /** A kept index was found (so one that becomes empty is written empty, not left stale). */
  private hadCache = false;
  private readonly told = new Set<string>();

  constructor(
    private readonly store: MemoryStore,
    private readonly opts: MemoryIndexOptions = {},
  ) {}

  /** Re-reads changed files if anything changed since the last call. */
  refresh(): void {
    if (this.wantWatch && !this.watcher) this.startWatcher();
    const stamp = this.store.dirStamp();
    if (!this.dirty && stamp === this.stamp) return;
    this.dirty = false;
    this.stamp = stamp;
    let changed = this.loadCache();
    const names = new Set(this.store.fileNames());
    for (const file of [...this.byFile.keys(), ...this.skipped.keys()]) {
      if (names.has(file)) continue;
      this.remove(file);
      changed = true;
    }
    const newlySkipped: SkippedMemory[] = [];
    for (const file of names) {
      const known = this.byFile.get(file) ?? this.skipped.get(file);
      const now = this.store.stamp(file);
      if (known && now && sameVersion(known, now)) continue;
      if (known) {
        this.remove(file);
        changed = true;
      }
      const fresh = now ? this.store.readEntry(file) : null;
      if (!fresh) continue;
      changed = true;
      if (isSkipped(fresh)) this.skipped.set(file, fresh);
      else this.add(fresh);
    }
    for (const [file, s] of this.skipped) {
      if (this.told.has(`${file}\u0000${s.mtimeMs}\u0000${s.size}`)) continue;
      this.told.add(`${file}\u0000${s.mtimeMs}\u0000${s.size}`);
      newlySkipped.push(s);
    }
    if (newlySkipped.length > 0) {
      const named = newlySkipped.slice(0, SKIPPED_NAMED).map((s) => `${s.file} (${s.skipped})`);
      const more = newlySkipped.length - named.length;
      this.opts.log?.('warn', `memory: skipped ${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`);
    }
    // MiniSearch keeps discarded documents' terms until it vacuums; many edits make that worth it.
    if (this.mini.dirtCount > 200) void this.mini.vacuum();
    // A workspace without memories gets no kept index (nothing to save time on).
    if (changed && (this.byFile.size > 0 || this.skipped.size > 0 || this.hadCache)) this.saveCache();
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

  /** The files skipped now (too large, not text), after a refresh. */
  skippedFiles(): SkippedMemory[] {
    this.refresh();
    return [...this.skipped.values()].sort((a, b) => a.file.localeCompare(b.file));
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

  private add(m: StoredMemory): void {
    this.mini.add(indexed(m));
    this.byFile.set(m.file, m);
    for (const x of termsOf(m)) this.df.set(x, (this.df.get(x) ?? 0) + 1);
  }

  private remove(file: string): void {
    this.skipped.delete(file);
    const m = this.byFile.get(file);
    if (!m) return;
    this.mini.discard(file);
    this.byFile.delete(file);
    for (const x of termsOf(m)) {
      const n = (this.df.get(x) ?? 1) - 1;
      if (n <= 0) this.df.delete(x);
      else this.df.set(x, n);
    }
  }

  /** Takes the kept index on the first refresh. Returns true when there was none to take (it is written after this refresh). */
  private loadCache(): boolean {
    if (this.cacheTried) return false;
    this.cacheTried = true;
    const path = this.opts.cacheFile;
    if (!path) return false;
    const cache = readIndexCache(path, this.store.workspace);
    if (!cache) return true;
    this.hadCache = true;
    try {
      const mini = MiniSearch.loadJS<Indexed>(cache.mini, MINI_OPTIONS);
      this.mini = mini;
      for (const e of cache.entries) {
        const path = join(this.store.dir, e.file);
        const version = { mtimeMs: e.mtimeMs, ctimeMs: e.ctimeMs, size: e.size, ino: e.ino };
        if (e.memory) this.byFile.set(e.file, { file: e.file, path, ...version, ...e.memory });
        else this.skipped.set(e.file, { file: e.file, path, ...version, skipped: e.skipped ?? 'not read' });
      }
      for (const [t, n] of cache.df) this.df.set(t, n);
      return false;
    } catch {
      // A cache MiniSearch cannot load: start over from the files.
      this.mini = newMini();
      this.byFile.clear();
      this.skipped.clear();
      this.df.clear();
      return true;
    }
  }

  private saveCache(): void {
    const path = this.opts.cacheFile;
    if (!path) return;
    const entries: CachedEntry[] = [];
    const versionOf = (e: { mtimeMs: number; ctimeMs?: number; size: number; ino?: number }) => ({ mtimeMs: e.mtimeMs, ctimeMs: e.ctimeMs ?? 0, size: e.size, ino: e.ino ?? 0 });
    for (const m of this.byFile.values()) {
      entries.push({ file: m.file, ...versionOf(m), memory: { title: m.title, created: m.created, ...(m.source ? { source: m.source } : {}), tags: m.tags, body: m.body } });
    }
    for (const s of this.skipped.values()) entries.push({ file: s.file, ...versionOf(s), skipped: s.skipped });
    try {
      writeIndexCache(path, { version: INDEX_CACHE_VERSION, workspace: resolve(this.store.workspace), entries, df: [...this.df], mini: this.mini.toJSON() });
    } catch (err) {
      this.opts.log?.('warn', `memory: the index could not be kept in ${path} (${errorMessage(err)}); the next run reads every memory again`);
    }
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

/** A kept version is the file's only when every part matches (a rewrite changes the change time). */
function sameVersion(known: { mtimeMs: number; ctimeMs?: number; size: number; ino?: number }, now: FileVersion): boolean {
  return known.mtimeMs === now.mtimeMs && known.ctimeMs === now.ctimeMs && known.size === now.size && known.ino === now.ino;
}

function termsOf(m: StoredMemory): string[] {
  return terms(`${m.title} ${m.tags.join(' ')} ${m.body}`);
}

const MINI_OPTIONS = {
  fields: ['title', 'tags', 'body'],
  idField: 'id',
  tokenize: (text: string) => tokenize(text),
  processTerm: (term: string) => normalizeTerm(term),
  // Queries arrive as normalized terms already.
  searchOptions: { tokenize: (text: string) => text.split(' '), processTerm: (t: string) => t },
};

function newMini(): MiniSearch<Indexed> {
  return new MiniSearch<Indexed>(MINI_OPTIONS);
}

function indexed(m: StoredMemory): Indexed {
  return { id: m.file, title: m.title, tags: m.tags.join(' '), body: m.body };
}
