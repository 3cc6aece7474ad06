import { describe, expect, it } from 'vitest';
import { ChatStore } from '../../../webview/store';
import { CONFIG, transcript } from './fixtures';

/** A store whose frames run only when the test says so. */
function setup() {
  const frames: Array<() => void> = [];
  const logs: string[] = [];
  const seqs: number[] = [];
  const store = new ChatStore({ schedule: (f) => frames.push(f), log: (m) => logs.push(m), onSeq: (s) => seqs.push(s) });
  const runFrames = () => frames.splice(0).forEach((f) => f());
  return { store, frames, logs, seqs, runFrames };
}

const text = (seq: number, delta: string, taskId = 't1') => ({ type: 'event', seq, event: { type: 'text', taskId, delta } });
const start = (seq: number) => ({ type: 'event', seq, event: { type: 'assistant_start', taskId: 't1', messageId: 'm1', model: 'demo model' } });

describe('ChatStore (webview side of the protocol)', () => {
  it('renders a snapshot at once and marks the page ready', () => {
    const { store, frames } = setup();
    expect(store.ready.value).toBe(false);
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG });
    expect(frames).toHaveLength(0);
    expect(store.ready.value).toBe(true);
    expect(store.transcript.value?.taskId).toBe('t1');
    expect(store.config.value).toEqual(CONFIG);
  });

  it('coalesces streaming events into one render per frame', () => {
    const { store, frames, runFrames } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG });
    store.receive(start(2));
    store.receive(text(3, 'Hel'));
    store.receive(text(4, 'lo'));
    expect(frames).toHaveLength(1);
    expect(store.transcript.value?.items).toEqual([]);
    runFrames();
    expect(store.transcript.value?.items).toEqual([
      { kind: 'assistant', id: 'm1', model: 'demo model', text: 'Hello', thinking: '', streaming: true },
    ]);
  });

  it('drops duplicate and out-of-order messages, so text is never doubled', () => {
    const { store, runFrames, logs, seqs } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG });
    store.receive(start(2));
    store.receive(text(3, 'a'));
    store.receive(text(3, 'a'));
    store.receive(text(5, 'c'));
    store.receive(text(4, 'b'));
    runFrames();
    const item = store.transcript.value?.items[0];
    expect(item?.kind === 'assistant' && item.text).toBe('ac');
    expect(store.lastSeq).toBe(5);
    expect(seqs).toEqual([1, 2, 3, 5]);
    expect(logs.filter((l) => l.includes('duplicate'))).toHaveLength(2);
  });

  it('a new snapshot replaces the transcript; null shows no task', () => {
    const { store, runFrames } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript(), config: CONFIG });
    store.receive(start(2));
    store.receive({ type: 'snapshot', seq: 3, transcript: null, config: CONFIG });
    runFrames();
    expect(store.transcript.value).toBeNull();
  });

  it('ignores events of another task and invalid messages without throwing', () => {
    const { store, runFrames, logs } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: transcript('t1'), config: CONFIG });
    store.receive(start(2));
    store.receive(text(3, 'other', 't2'));
    expect(() => store.receive({ type: 'event', seq: 4, event: { type: 'nope' } })).not.toThrow();
    expect(() => store.receive('garbage')).not.toThrow();
    runFrames();
    const item = store.transcript.value?.items[0];
    expect(item?.kind === 'assistant' && item.text).toBe('');
    expect(logs.filter((l) => l.startsWith('dropped an invalid message'))).toHaveLength(2);
  });

  it('shows host errors until the next snapshot', () => {
    const { store } = setup();
    store.receive({ type: 'snapshot', seq: 1, transcript: null, config: CONFIG });
    store.receive({ type: 'error', seq: 2, message: 'Open a folder' });
    expect(store.hostErrors.value.map((e) => e.message)).toEqual(['Open a folder']);
    store.receive({ type: 'snapshot', seq: 3, transcript: null, config: CONFIG });
    expect(store.hostErrors.value).toEqual([]);
  });
});
