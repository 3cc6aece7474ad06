// @vitest-environment happy-dom
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FromWebviewMessage } from '../../../src/shared/protocol/fromWebview';
import { boundMemory, type MemoryState } from '../../../src/shared/protocol/memoryMessages';
import { parseToWebview } from '../../../src/shared/protocol/toWebview';
import { createdLabel, MemoryPage, shownMemories } from '../../../webview/pages/MemoryPage';
import { ChatStore } from '../../../webview/store';
import { CONFIG } from '../protocol/fixtures';

/** The Memory page rendered into a real DOM (happy-dom), with the host played by the test. */
const HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">';

const state = (over: Partial<MemoryState> = {}): MemoryState => ({
  available: true,
  dir: '/ws/.keel/memory',
  memories: [
    boundMemory({ file: 'deploy.md', title: 'Deploys go through staging', created: '2026-01-02T10:00:00.000Z', tags: ['deploy', 'ci'], body: 'Push to staging.' }),
    boundMemory({ file: 'hostile.md', title: `Title ${HOSTILE}`, created: 'last week', source: '3f2a9c01-aaaa-bbbb', tags: [HOSTILE], body: `Body ${HOSTILE} <b>bold</b>` }),
    boundMemory({ file: 'unit-tests.md', title: 'Unit tests run with vitest', created: '', tags: [], body: 'npm run test:unit' }),
  ],
  problems: [],
  settings: { enabled: true, autoSave: false },
  ...over,
});

let root: HTMLElement | undefined;
afterEach(() => {
  if (root) render(null, root);
  root?.remove();
  root = undefined;
  vi.useRealTimers();
});

function mount(props: { state: MemoryState | null; search?: { queryId: number; files: string[] } | null }) {
  const posted: FromWebviewMessage[] = [];
  root = document.createElement('div');
  document.body.appendChild(root);
  const el = root;
  const draw = (p: typeof props) => act(() => render(h(MemoryPage, { state: p.state, search: p.search ?? null, post: (m) => posted.push(m) }), el));
  draw(props);
  const rows = () => [...el.querySelectorAll<HTMLElement>('[data-testid="memory"]')].map((r) => r.dataset.file);
  return { el, posted, draw, rows };
}

describe('the Memory page', () => {
  it('asks the host for the memories once, and lists each with title, created, source, tags and preview', () => {
    const { el, posted, rows } = mount({ state: state() });
    expect(posted.filter((m) => m.type === 'getMemories')).toHaveLength(1);
    expect(rows()).toEqual(['deploy.md', 'hostile.md', 'unit-tests.md']);
    const deploy = el.querySelector('[data-file="deploy.md"]')!;
    expect(deploy.querySelector('[data-testid="memory-title"]')!.textContent).toBe('Deploys go through staging');
    expect(deploy.querySelector('[data-testid="memory-about"]')!.textContent).toContain('written by a person');
    expect([...deploy.querySelectorAll('[data-testid="memory-tags"] .keel-badge')].map((t) => t.textContent)).toEqual(['deploy', 'ci']);
    expect(deploy.querySelector('[data-testid="memory-preview"]')!.textContent).toBe('Push to staging.');
    expect(el.querySelector('[data-file="hostile.md"] [data-testid="memory-about"]')!.textContent).toContain('from task 3f2a9c01');
    expect(el.querySelector('[data-testid="memory-count"]')!.textContent).toBe('3 memories in /ws/.keel/memory');
  });

  it('renders a memory\'s HTML as text: no element is made of it, nothing runs', () => {
    const { el } = mount({ state: state() });
    const row = el.querySelector('[data-file="hostile.md"]')!;
    expect(row.querySelector('[data-testid="memory-title"]')!.textContent).toBe(`Title ${HOSTILE}`);
    expect(row.querySelector('[data-testid="memory-preview"]')!.textContent).toBe(`Body ${HOSTILE} <b>bold</b>`);
    expect(row.querySelector('[data-testid="memory-tags"]')!.textContent).toBe(HOSTILE);
    expect(el.querySelectorAll('img, b')).toHaveLength(0);
    expect(document.body.dataset.pwned).toBeUndefined();
  });

  it('Open and Delete post intents naming the file; the page deletes nothing itself', () => {
    const { el, posted, rows } = mount({ state: state() });
    act(() => el.querySelector<HTMLButtonElement>('[data-file="deploy.md"] [data-testid="memory-delete"]')!.click());
    act(() => el.querySelector<HTMLButtonElement>('[data-file="unit-tests.md"] [data-testid="memory-open"]')!.click());
    expect(posted.filter((m) => m.type === 'memoryAction')).toEqual([
      { type: 'memoryAction', action: 'delete', file: 'deploy.md' },
      { type: 'memoryAction', action: 'open', file: 'unit-tests.md' },
    ]);
    // Still listed until the host says it is gone.
    expect(rows()).toContain('deploy.md');
  });

  it('the list follows the host: a memory the host no longer lists disappears', () => {
    const { draw, rows } = mount({ state: state() });
    const s = state();
    draw({ state: { ...s, memories: s.memories.filter((m) => m.file !== 'deploy.md') } });
    expect(rows()).toEqual(['hostile.md', 'unit-tests.md']);
  });

  it('the search box asks the host once typing pauses, and shows its hits best first', () => {
    vi.useFakeTimers();
    const { el, posted, draw, rows } = mount({ state: state() });
    const box = el.querySelector<HTMLInputElement>('[data-testid="memory-search"]')!;
    act(() => {
      box.value = 'vit';
      box.dispatchEvent(new Event('input', { bubbles: true }));
    });
    act(() => {
      box.value = 'vitest staging';
      box.dispatchEvent(new Event('input', { bubbles: true }));
    });
    expect(el.querySelector('[data-testid="memory-count"]')!.textContent).toBe('Searching…');
    act(() => {
      vi.advanceTimersByTime(250);
    });
    const searches = posted.filter((m) => m.type === 'searchMemories');
    expect(searches).toEqual([{ type: 'searchMemories', queryId: 2, query: 'vitest staging' }]);
    // An answer to an older query is not shown.
    draw({ state: state(), search: { queryId: 1, files: ['hostile.md'] } });
    expect(rows()).toEqual([]);
    draw({ state: state(), search: { queryId: 2, files: ['unit-tests.md', 'deploy.md'] } });
    expect(rows()).toEqual(['unit-tests.md', 'deploy.md']);
    expect(el.querySelector('[data-testid="memory-count"]')!.textContent).toBe('2 of 3 memories match');
  });

  it('the two settings show as they apply and a change is an intent to the host', () => {
    const { el, posted } = mount({ state: state() });
    const enabled = el.querySelector<HTMLInputElement>('[data-testid="memory-enabled"]')!;
    const autoSave = el.querySelector<HTMLInputElement>('[data-testid="memory-autosave"]')!;
    expect([enabled.checked, autoSave.checked]).toEqual([true, false]);
    act(() => autoSave.click());
    expect(posted.filter((m) => m.type === 'setMemorySetting')).toEqual([{ type: 'setMemorySetting', setting: 'autoSave', value: true }]);
  });

  it('says what it is waiting for, and when no folder is open', () => {
    expect(mount({ state: null }).el.textContent).toContain('Loading');
    render(null, root!);
    expect(mount({ state: { ...state(), available: false } }).el.textContent).toContain('Open a folder');
  });
});

describe('the Memory page, pure parts and the store', () => {
  it('shownMemories: all for an empty query, null while the latest answer is missing, hits in rank order', () => {
    const all = state().memories;
    expect(shownMemories(all, ' ', null, 0)).toBe(all);
    expect(shownMemories(all, 'x', null, 1)).toBeNull();
    expect(shownMemories(all, 'x', { queryId: 1, files: ['unit-tests.md', 'gone.md', 'deploy.md'] }, 1)?.map((m) => m.file)).toEqual(['unit-tests.md', 'deploy.md']);
  });

  it('createdLabel: a time for an ISO date, the text otherwise', () => {
    expect(createdLabel('not a date')).toBe('not a date');
    expect(createdLabel('')).toBe('');
    expect(createdLabel('2026-01-02T10:00:00.000Z', Date.parse('2026-05-01T00:00:00Z'))).toMatch(/Jan/);
  });

  it('the store keeps the latest memories the host sent; a malformed message is refused', () => {
    const store = new ChatStore({ schedule: (f) => f(), setTimer: () => () => {} });
    store.receive({ type: 'snapshot', transcript: null, config: CONFIG, seq: 1 });
    store.receive({ type: 'memories', state: state(), seq: 2 });
    expect(store.memories.value?.memories).toHaveLength(3);
    store.receive({ type: 'memories', state: { ...state(), memories: [{ file: 'x.md' }] }, seq: 3 });
    expect(store.memories.value?.memories).toHaveLength(3);
    store.receive({ type: 'memorySearch', queryId: 4, files: ['deploy.md'], seq: 4 });
    expect(store.memorySearch.value).toEqual({ queryId: 4, files: ['deploy.md'] });
    expect(parseToWebview({ type: 'memories', seq: 5, state: { ...state(), memories: [{ ...state().memories[0], title: 'x'.repeat(301) }] } }).ok).toBe(false);
  });
});
