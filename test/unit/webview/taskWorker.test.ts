import { describe, expect, it } from 'vitest';
import type { TranscriptItem } from '../../../src/shared/domain/transcript';
import { taskWorkerTooltip } from '../../../src/shared/words/workers';
import { retryableIndex } from '../../../webview/format';
import { ChatStore } from '../../../webview/store';
import { CONFIG, transcript } from '../protocol/fixtures';

describe('the chat header’s worker and a lost worker’s error', () => {
  it('the store takes the worker of the snapshot, follows taskWorker messages of the shown task only, and clears it on another snapshot', () => {
    const store = new ChatStore({ schedule: (f) => f() });
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG, worker: { id: 'w1', state: 'busy', pid: 4242 } });
    expect(store.worker.value).toEqual({ id: 'w1', state: 'busy', pid: 4242 });
    store.receive({ type: 'taskWorker', seq: 2, taskId: 'other-task', worker: { id: 'w2', state: 'busy', pid: 7 } });
    expect(store.worker.value?.id).toBe('w1');
    store.receive({ type: 'taskWorker', seq: 3, taskId: 't1', worker: { id: 'w1', state: 'ready', pid: 4242 } });
    expect(store.worker.value?.state).toBe('ready');
    store.receive({ type: 'taskWorker', seq: 4, taskId: 't1', worker: null });
    expect(store.worker.value).toBeNull();
    store.receive({ type: 'taskWorker', seq: 5, taskId: 't1', worker: { id: 'w3', state: 'busy', pid: 9 } });
    store.receive({ type: 'snapshot', seq: 6, transcript: transcript(), config: CONFIG });
    expect(store.worker.value).toBeNull();
  });

  it('a malformed taskWorker message is dropped, not applied', () => {
    const logs: string[] = [];
    const store = new ChatStore({ schedule: (f) => f(), log: (m) => logs.push(m) });
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG });
    store.receive({ type: 'taskWorker', seq: 2, taskId: 't1', worker: { id: 'w1', state: 'busy', pid: 'not a pid' } });
    expect(store.worker.value).toBeNull();
    expect(logs.length).toBeGreaterThan(0);
  });

  it('the header’s worker tooltip says which process and what it does, in words', () => {
    expect(taskWorkerTooltip({ id: 'w2', state: 'busy', pid: 4242 })).toBe('Runs in worker w2 (pid 4242), running this task. Keel: Show Workers lists every worker.');
    expect(taskWorkerTooltip({ id: 'w1', state: 'ready', pid: 9 })).toContain(', idle.');
    expect(taskWorkerTooltip({ id: 'w1', state: 'starting', pid: null })).toBe('Runs in worker w1 (starting), starting. Keel: Show Workers lists every worker.');
  });

  it('Retry belongs to the last retryable error, but not to a lost worker’s (Resume continues that task)', () => {
    const err = (code: string, retryable = true): TranscriptItem => ({ kind: 'error', id: `e-${code}`, code, message: 'm', retryable }) as TranscriptItem;
    const user: TranscriptItem = { kind: 'user', id: 'u', text: 'hi' };
    expect(retryableIndex([user, err('overloaded')])).toBe(1);
    expect(retryableIndex([user, err('worker_lost')])).toBe(-1);
    expect(retryableIndex([user, err('overloaded', false)])).toBe(-1);
    expect(retryableIndex([err('overloaded'), user])).toBe(-1);
  });
});
