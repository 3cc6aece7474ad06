import type { Page } from '../src/shared/protocol/chatMessages';
import type { FromWebviewMessage } from '../src/shared/protocol/fromWebview';

/**
 * What the page persists across reloads of a hidden view (no retainContextWhenHidden): the last
 * seq, the page shown and the unsent draft. Nothing sensitive (never a key).
 */
export interface PersistedState {
  lastSeq: number;
  page?: Page;
  draft?: string;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** The host channel of the page. `acquireVsCodeApi` may be called once per page, so this is a singleton. */
export interface HostChannel {
  post(message: FromWebviewMessage): void;
  persisted(): PersistedState | undefined;
  /** Merges `state` into what is persisted. */
  persist(state: Partial<PersistedState>): void;
}

let channel: HostChannel | undefined;

const PAGES: readonly string[] = ['chat', 'history', 'settings'];

export function hostChannel(): HostChannel {
  if (channel) return channel;
  const api = acquireVsCodeApi();
  let current: PersistedState | undefined;
  const read = (): PersistedState | undefined => {
    const s = api.getState();
    if (!s || typeof s !== 'object' || !('lastSeq' in s) || typeof s.lastSeq !== 'number') return undefined;
    const out: PersistedState = { lastSeq: s.lastSeq };
    if ('page' in s && typeof s.page === 'string' && PAGES.includes(s.page)) out.page = s.page as Page;
    if ('draft' in s && typeof s.draft === 'string') out.draft = s.draft;
    return out;
  };
  current = read();
  channel = {
    post: (message) => api.postMessage(message),
    persisted: () => current,
    persist(state) {
      current = { lastSeq: 0, ...current, ...state };
      api.setState(current);
    },
  };
  return channel;
}
