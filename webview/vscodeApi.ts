import type { FromWebviewMessage } from '../src/shared/protocol/fromWebview';

/** What the page persists across reloads of a hidden view: nothing sensitive, only the last seq. */
export interface PersistedState {
  lastSeq: number;
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
  persist(state: PersistedState): void;
}

let channel: HostChannel | undefined;

export function hostChannel(): HostChannel {
  if (channel) return channel;
  const api = acquireVsCodeApi();
  channel = {
    post: (message) => api.postMessage(message),
    persisted() {
      const s = api.getState();
      if (s && typeof s === 'object' && 'lastSeq' in s && typeof s.lastSeq === 'number') return { lastSeq: s.lastSeq };
      return undefined;
    },
    persist: (state) => api.setState(state),
  };
  return channel;
}
