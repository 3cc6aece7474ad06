import { describe, expect, it } from 'vitest';
import { ChatStore, NOTICE_TIMEOUT_MS } from '../../../webview/store';
import { CONFIG, transcript } from '../protocol/fixtures';

/** A store whose notice timers fire only when the test says so. */
function setup() {
  const timers: Array<{ fire: () => void; ms: number; cancelled: boolean }> = [];
  const store = new ChatStore({
    schedule: (f) => f(),
    setTimer: (fire, ms) => {
      const t = { fire, ms, cancelled: false };
      timers.push(t);
      return () => {
        t.cancelled = true;
      };
    },
  });
  let seq = 0;
  const send = (m: Record<string, unknown>) => store.receive({ ...m, seq: ++seq });
  const notices = () => store.notices.value.map((n) => n.message);
  return { store, send, notices, timers };
}

describe('notices go with the next action, or after a while', () => {
  it('"Exported to …" goes when another task (or none, New Task) is shown', () => {
    const { send, notices } = setup();
    send({ type: 'snapshot', transcript: transcript('t1'), config: CONFIG });
    send({ type: 'notice', message: 'Exported to /tmp/t1.md' });
    expect(notices()).toEqual(['Exported to /tmp/t1.md']);
    // A refresh of the same task (a setting changed) keeps it.
    send({ type: 'snapshot', transcript: transcript('t1'), config: CONFIG });
    expect(notices()).toEqual(['Exported to /tmp/t1.md']);
    send({ type: 'snapshot', transcript: null, config: CONFIG });
    expect(notices()).toEqual([]);
  });

  it('goes when the page changes (a command navigating, or the person: clearNotices)', () => {
    const { store, send, notices } = setup();
    send({ type: 'snapshot', transcript: null, config: CONFIG });
    send({ type: 'navigate', page: 'history' });
    send({ type: 'notice', message: 'Exported to /tmp/a.md' });
    send({ type: 'navigate', page: 'history' });
    expect(notices()).toEqual(['Exported to /tmp/a.md']);
    send({ type: 'navigate', page: 'chat' });
    expect(notices()).toEqual([]);
    send({ type: 'notice', message: 'Exported to /tmp/b.md' });
    store.clearNotices();
    expect(notices()).toEqual([]);
  });

  it('goes by itself after a while; dismissing or clearing cancels its timer', () => {
    const { store, send, notices, timers } = setup();
    send({ type: 'snapshot', transcript: null, config: CONFIG });
    send({ type: 'notice', message: 'one' });
    send({ type: 'notice', message: 'two' });
    expect(timers.map((t) => t.ms)).toEqual([NOTICE_TIMEOUT_MS, NOTICE_TIMEOUT_MS]);
    timers[0]!.fire();
    expect(notices()).toEqual(['two']);
    store.dismissNotice(store.notices.value[0]!.id);
    expect(timers[1]!.cancelled).toBe(true);
    for (let i = 0; i < 7; i++) send({ type: 'notice', message: `n${i}` });
    expect(notices()).toEqual(['n2', 'n3', 'n4', 'n5', 'n6']);
    expect(timers.slice(2, 4).every((t) => t.cancelled)).toBe(true);
    store.clearNotices();
    expect(timers.every((t) => t.cancelled)).toBe(true);
  });
});

describe('the settings page hears how Save went', () => {
  it('keeps the last answer to Save settings until the page clears it', () => {
    const { store, send } = setup();
    send({ type: 'snapshot', transcript: null, config: CONFIG });
    expect(store.settingsResult.value).toBeNull();
    send({ type: 'settingsSaved', ok: false, message: 'Not saved: bad URL' });
    expect(store.settingsResult.value).toEqual({ ok: false, message: 'Not saved: bad URL' });
    send({ type: 'settingsSaved', ok: true, message: 'Saved.' });
    expect(store.settingsResult.value).toEqual({ ok: true, message: 'Saved.' });
  });
});
