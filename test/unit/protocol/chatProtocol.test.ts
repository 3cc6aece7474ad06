import { describe, expect, it } from 'vitest';
import { parseFromWebview } from '../../../src/shared/protocol/fromWebview';
import { parseToWebview } from '../../../src/shared/protocol/toWebview';
import { ChatStore } from '../../../webview/store';
import { CONFIG, transcript } from './fixtures';

const pending = { requestId: 'r1', taskId: 't1', toolCallId: 'c1', tool: 'Write', input: { file_path: 'a' }, summary: 'Create a', reason: 'editing a file' };

function setup() {
  const frames: Array<() => void> = [];
  const logs: string[] = [];
  let now = 0;
  const store = new ChatStore({ schedule: (f) => frames.push(f), log: (m) => logs.push(m), now: () => now });
  return { store, logs, runFrames: () => frames.splice(0).forEach((f) => f()), tick: (ms: number) => (now += ms) };
}

describe('chat protocol: new messages', () => {
  it('validates every webview->host message and rejects malformed ones', () => {
    const good = [
      { type: 'permissionAnswer', requestId: 'r1', decision: 'allowAlways' },
      { type: 'permissionAnswer', requestId: 'r1', decision: 'deny', feedback: 'no' },
      { type: 'resume' },
      { type: 'setMode', mode: 'acceptEdits' },
      { type: 'mentionQuery', queryId: 3, query: 'src' },
      { type: 'openDiff', toolCallId: 'c1' },
      { type: 'openSubtask', toolCallId: 'c1' },
      { type: 'copy', text: 'x' },
      { type: 'listTasks' },
      { type: 'openTask', taskId: 't' },
      { type: 'deleteTask', taskId: 't' },
      { type: 'getSettings' },
      { type: 'saveSettings', provider: 'demo', model: '', baseUrl: '' },
      { type: 'setApiKey', provider: 'anthropic', key: 'k' },
    ];
    for (const m of good) expect(parseFromWebview(m).ok, JSON.stringify(m)).toBe(true);
    const bad = [
      { type: 'permissionAnswer', requestId: '', decision: 'allow' },
      { type: 'permissionAnswer', requestId: 'r1', decision: 'maybe' },
      { type: 'setMode', mode: 'yolo' },
      { type: 'setApiKey', provider: 'demo', key: 'k' },
      { type: 'mentionQuery', queryId: -1, query: 'x' },
      { type: 'saveSettings', provider: 'other', model: '', baseUrl: '' },
    ];
    for (const m of bad) expect(parseFromWebview(m).ok, JSON.stringify(m)).toBe(false);
  });

  it('validates host->webview messages: a settings message cannot carry a key field through', () => {
    const settings = { provider: 'anthropic', model: '', anthropicBaseUrl: '', openaiBaseUrl: '', hasKey: { anthropic: true, 'openai-compatible': false } };
    const parsed = parseToWebview({ type: 'settings', seq: 2, settings: { ...settings, apiKey: 'sk-leak' } });
    expect(parsed.ok && JSON.stringify(parsed.message)).not.toContain('sk-leak');
    expect(parseToWebview({ type: 'permissionRequest', seq: 2, request: { ...pending, requestId: '' } }).ok).toBe(false);
    expect(parseToWebview({ type: 'mentionResults', seq: 2, queryId: 1, files: 'nope' }).ok).toBe(false);
  });

  it('the store shows permission cards from the snapshot and deltas, and drops them when resolved', () => {
    const { store } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG, permissions: [pending] });
    expect(store.permissions.value.map((p) => p.requestId)).toEqual(['r1']);
    store.receive({ type: 'permissionRequest', seq: 2, request: { ...pending, requestId: 'r2' } });
    store.receive({ type: 'permissionRequest', seq: 3, request: { ...pending, requestId: 'r2' } });
    expect(store.permissions.value.map((p) => p.requestId)).toEqual(['r1', 'r2']);
    store.receive({ type: 'permissionResolved', seq: 4, requestId: 'r1', decision: 'allow', source: 'notification' });
    expect(store.permissions.value.map((p) => p.requestId)).toEqual(['r2']);
    // A duplicate of an old request (same seq) cannot bring a card back.
    store.receive({ type: 'permissionRequest', seq: 2, request: pending });
    expect(store.permissions.value.map((p) => p.requestId)).toEqual(['r2']);
  });

  it('thinking time: measured live while it streams, then the host\'s measurement wins', () => {
    const { store, runFrames, tick } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG });
    store.receive({ type: 'event', seq: 2, event: { type: 'assistant_start', taskId: 't1', messageId: 'm1', model: 'm' } });
    store.receive({ type: 'event', seq: 3, event: { type: 'thinking', taskId: 't1', delta: 'hmm' } });
    runFrames();
    tick(3000);
    expect(store.thoughtMs('m1')).toBe(3000);
    store.receive({ type: 'thinkingTime', seq: 4, messageId: 'm1', ms: 2500 });
    expect(store.thoughtMs('m1')).toBe(2500);
    store.receive({ type: 'snapshot', seq: 5, transcript: transcript(), config: CONFIG, meta: { thinkingMs: { m1: 2600 }, contextWindow: 200_000, contextTokens: 5000 } });
    expect(store.thoughtMs('m1')).toBe(2600);
    expect(store.contextTokens.value).toBe(5000);
  });

  it('usage events move the context meter; navigate, taskList, settings and notices land in their signals', () => {
    const { store } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG });
    store.receive({ type: 'event', seq: 2, event: { type: 'usage', taskId: 't1', inputTokens: 1000, outputTokens: 200, cacheReadTokens: 300, cacheWriteTokens: 0, costUsd: 0, totalCostUsd: 0 } });
    expect(store.contextTokens.value).toBe(1500);
    store.receive({ type: 'navigate', seq: 3, page: 'history' });
    expect(store.page.value).toBe('history');
    store.receive({ type: 'taskList', seq: 4, tasks: [] });
    expect(store.tasks.value).toEqual([]);
    store.receive({ type: 'notice', seq: 5, message: 'hello' });
    expect(store.notices.value.map((n) => n.message)).toEqual(['hello']);
    store.receive({ type: 'navigate', seq: 6, page: 'nowhere' });
    expect(store.page.value).toBe('history');
  });
});
