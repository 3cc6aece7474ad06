import { useEffect, useRef, useState } from 'preact/hooks';
import type { FromWebviewMessage } from '../../src/shared/protocol/fromWebview';
import type { MemorySettingName, MemoryState, MemoryView } from '../../src/shared/protocol/memoryMessages';
import { formatTime } from '../format';

export interface MemoryPageProps {
  state: MemoryState | null;
  /** The latest search answer (file names, best first). */
  search: { queryId: number; files: string[] } | null;
  post(message: FromWebviewMessage): void;
}

/** How long typing must pause before the host searches. */
const SEARCH_DEBOUNCE_MS = 200;

/**
 * The memories the page lists: every one when the search box is empty; the search's hits, best
 * first, once the host answered the latest query (`null` while it has not). Pure.
 */
export function shownMemories(memories: MemoryView[], query: string, search: { queryId: number; files: string[] } | null, queryId: number): MemoryView[] | null {
  if (!query.trim()) return memories;
  if (!search || search.queryId !== queryId) return null;
  const byFile = new Map(memories.map((m) => [m.file, m]));
  return search.files.map((f) => byFile.get(f)).filter((m): m is MemoryView => m !== undefined);
}

/** "Nov 26, 10:00" for an ISO time; the text as written when it is not one; empty when absent. Pure. */
export function createdLabel(created: string, now = Date.now()): string {
  const t = Date.parse(created);
  return Number.isNaN(t) ? created : formatTime(t, now);
}

/**
 * The Memory page (docs/memory.md, "In VS Code"): the workspace's memories (`.keel/memory/*.md`)
 * with title, creation time, the task that taught each one, tags and the start of its text; a
 * search box (the host ranks with the runs' index); Open (an editor, to edit it there) and Delete
 * (the host asks to confirm in a modal); and the two memory settings. It asks for the list once;
 * the host sends every change of the folder after that. Memory files come from the repository:
 * everything is rendered as text, never as HTML or Markdown.
 */
export function MemoryPage({ state, search, post }: MemoryPageProps) {
  const [query, setQuery] = useState('');
  const [queryId, setQueryId] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    post({ type: 'getMemories' });
    return () => clearTimeout(timer.current);
  }, []);
  // A search whose answer may have changed with the list (a memory deleted or edited) is asked again.
  useEffect(() => {
    if (query.trim()) post({ type: 'searchMemories', queryId, query });
  }, [state]);

  if (!state) return <section class="keel-page" data-testid="memory-page"><p class="keel-note">Loading…</p></section>;
  if (!state.available) return <section class="keel-page" data-testid="memory-page"><p class="keel-note">Open a folder: memories belong to a workspace folder.</p></section>;
  const onQuery = (q: string) => {
    setQuery(q);
    const id = queryId + 1;
    setQueryId(id);
    clearTimeout(timer.current);
    if (q.trim()) timer.current = setTimeout(() => post({ type: 'searchMemories', queryId: id, query: q }), SEARCH_DEBOUNCE_MS);
  };
  const setting = (name: MemorySettingName, value: boolean) => post({ type: 'setMemorySetting', setting: name, value });
  const shown = shownMemories(state.memories, query, search, queryId);
  const count = state.memories.length;
  const summary = shown === null ? 'Searching…' : query.trim() ? `${shown.length} of ${count} memories match` : `${count} ${count === 1 ? 'memory' : 'memories'} in ${state.dir}`;
  return (
    <section class="keel-page keel-memory-page" data-testid="memory-page" aria-label="Memory">
      <fieldset class="keel-field">
        <legend>Settings</legend>
        <label class="keel-checkbox">
          <input type="checkbox" data-testid="memory-enabled" checked={state.settings.enabled} onChange={(e) => setting('enabled', e.currentTarget.checked)} />
          <span>Use memories in runs (keel.memory.enabled)</span>
        </label>
        <label class="keel-checkbox">
          <input type="checkbox" data-testid="memory-autosave" checked={state.settings.autoSave} onChange={(e) => setting('autoSave', e.currentTarget.checked)} />
          <span>Save what a run learned (keel.memory.autoSave)</span>
        </label>
      </fieldset>
      <input
        class="keel-text-input"
        type="search"
        data-testid="memory-search"
        aria-label="Search memories"
        placeholder="Search memories"
        value={query}
        onInput={(e) => onQuery(e.currentTarget.value)}
      />
      <p class="keel-note" data-testid="memory-count">
        {summary}
      </p>
      {state.memories.length === 0 && (
        <p class="keel-note" data-testid="memory-empty">
          No memories yet. Keel saves what a completed run learned here, and you can add a Markdown file to .keel/memory/ yourself.
        </p>
      )}
      <ul class="keel-memory-list" aria-label="Memories">
        {(shown ?? []).map((m) => (
          <MemoryRow key={m.file} memory={m} post={post} />
        ))}
      </ul>
      {state.problems.map((p, i) => (
        <p key={i} class="keel-settings-status keel-settings-status-error" data-testid="memory-problem">
          {p}
        </p>
      ))}
    </section>
  );
}

function MemoryRow({ memory: m, post }: { memory: MemoryView; post(message: FromWebviewMessage): void }) {
  const act = (action: 'open' | 'delete') => post({ type: 'memoryAction', action, file: m.file });
  const about = [createdLabel(m.created), m.source ? `from task ${m.source.slice(0, 8)}` : 'written by a person', m.file].filter(Boolean).join(' · ');
  return (
    <li class="keel-memory" data-testid="memory" data-file={m.file}>
      <div class="keel-memory-head">
        <strong class="keel-memory-title" data-testid="memory-title">{m.title}</strong>
        <button type="button" class="keel-button keel-button-secondary" data-testid="memory-open" title={`Open .keel/memory/${m.file} in an editor`} onClick={() => act('open')}>
          Open
        </button>
        <button type="button" class="keel-button keel-button-secondary" data-testid="memory-delete" title="Delete this memory (asks first)" onClick={() => act('delete')}>
          Delete
        </button>
      </div>
      <p class="keel-note" data-testid="memory-about" title={m.source ? `task ${m.source}` : undefined}>{about}</p>
      {m.tags.length > 0 && (
        <p class="keel-memory-tags" data-testid="memory-tags">
          {m.tags.map((t, i) => (
            <span key={i} class="keel-badge">{t}</span>
          ))}
        </p>
      )}
      {m.preview && <p class="keel-memory-preview" data-testid="memory-preview">{m.preview}</p>}
    </li>
  );
}
