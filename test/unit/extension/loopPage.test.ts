import { describe, expect, it } from 'vitest';
import type { LoopView } from '../../../src/shared/domain/loop';
import { ChatController } from '../../../src/extension/chatController';
import type { LoopChat } from '../../../src/extension/loops/loopRequests';
import { ViewConnection } from '../../../src/extension/viewConnection';
import { boundLoop, loopsStateSchema, MAX_PROGRESS_CHARS, type LoopAction, type LoopsState } from '../../../src/shared/protocol/loopMessages';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { loopActions, loopStatusLabel } from '../../../webview/pages/LoopPage';
import { ChatStore } from '../../../webview/store';
import { CONFIG } from '../protocol/fixtures';
import { fakeHost, recordingPort } from './fakes';

/** The loop page's messages between the chat webview and the host, with a fake LoopChat behind the interface. */
const view: LoopView = {
  name: 'fix-tests',
  goal: 'make every test pass',
  status: 'active',
  iteration: 1,
  settings: { maxIterations: 50, stopWord: 'DONE', checkpoints: true },
  reasons: [],
  initialProgress: '',
  iterations: [
    { n: 1, taskId: 't1', startedAt: 1, endedAt: 2, status: 'completed', verdict: 'continue', reasons: ['the stop word "DONE" is not in progress.md'], progress: 'step 1\n', checkpoint: { ref: 'refs/keel/loop/fix-tests/1', commit: 'a'.repeat(40) } },
    { n: 2, taskId: 't2', startedAt: 3, reasons: [] },
  ],
  currentTaskId: 't2',
};

class FakeLoops implements LoopChat {
  acts: Array<[LoopAction, string, string | undefined]> = [];
  fail: string | undefined;
  current: LoopsState = { loops: [boundLoop(view, 'here')], problems: [], available: true };
  private listeners = new Set<() => void>();
  state = () => this.current;
  onChange(l: () => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  async act(action: LoopAction, name: string, commit?: string) {
    this.acts.push([action, name, commit]);
    if (this.fail) throw new Error(this.fail);
    return `did ${action}`;
  }
  change(next: LoopsState) {
    this.current = next;
    for (const l of this.listeners) l();
  }
}

function setup(loops?: LoopChat) {
  const h = fakeHost();
  const c = new ChatController({ ...h.host, ...(loops ? { loops } : {}) });
  const views = ['v1', 'v2'].map((id) => {
    const port = recordingPort();
    const conn = new ViewConnection(id, 'sidebar', port.post, h.log);
    c.attach(conn);
    return { port, send: async (data: unknown) => { const m = conn.receive(data); if (m) await c.handle(conn, m); } };
  });
  return { c, h, views };
}
const of = <T extends ToWebviewMessage['type']>(ms: ToWebviewMessage[], type: T) => ms.filter((m): m is Extract<ToWebviewMessage, { type: T }> => m.type === type);

describe('the loop page, host side', () => {
  it('getLoops answers with the loops; every change then reaches every view', async () => {
    const loops = new FakeLoops();
    const { views } = setup(loops);
    for (const v of views) await v.send({ type: 'ready' });
    await views[0]!.send({ type: 'getLoops' });
    expect(of(views[0]!.port.posted, 'loops').at(-1)?.state.loops[0]).toMatchObject({ name: 'fix-tests', driver: 'here' });
    loops.change({ loops: [boundLoop({ ...view, status: 'complete' }, 'none')], problems: [], available: true });
    for (const v of views) expect(of(v.port.posted, 'loops').at(-1)?.state.loops[0]?.status).toBe('complete');
  });

  it('an action is done and told as a notice; a refusal says why; the state follows', async () => {
    const loops = new FakeLoops();
    const { views } = setup(loops);
    const v = views[0]!;
    await v.send({ type: 'ready' });
    await v.send({ type: 'loopAction', action: 'restore', name: 'fix-tests', commit: 'a'.repeat(40) });
    expect(loops.acts).toEqual([['restore', 'fix-tests', 'a'.repeat(40)]]);
    expect(of(v.port.posted, 'notice').at(-1)?.message).toBe('did restore');
    loops.fail = 'loop "fix-tests" is running an iteration';
    await v.send({ type: 'loopAction', action: 'continue', name: 'fix-tests' });
    expect(of(v.port.posted, 'notice').at(-1)?.message).toBe('Could not continue loop "fix-tests": loop "fix-tests" is running an iteration');
    expect(of(v.port.posted, 'loops').length).toBe(2);
  });

  it('malformed actions from the page never reach the loops', async () => {
    const loops = new FakeLoops();
    const { views, h } = setup(loops);
    const v = views[0]!;
    await v.send({ type: 'ready' });
    await v.send({ type: 'loopAction', action: 'cancel', name: '../../etc' });
    await v.send({ type: 'loopAction', action: 'restore', name: 'fix-tests', commit: 'HEAD; rm -rf /' });
    await v.send({ type: 'loopAction', action: 'delete', name: 'fix-tests' });
    expect(loops.acts).toEqual([]);
    expect(h.log.lines.filter((l) => l.includes('dropped an invalid message')).length).toBe(3);
  });

  it('without a folder the page says loops need one; navigate selects a loop', async () => {
    const { c, views } = setup();
    const v = views[0]!;
    await v.send({ type: 'ready' });
    await v.send({ type: 'getLoops' });
    expect(of(v.port.posted, 'loops').at(-1)?.state.available).toBe(false);
    c.navigate('loop', 'fix-tests');
    expect(of(v.port.posted, 'navigate').at(-1)).toMatchObject({ page: 'loop', loop: 'fix-tests' });
  });

  it('what is sent is cut to the schema: a huge progress file or reason does not break the page', () => {
    const huge = 'x'.repeat(MAX_PROGRESS_CHARS * 3);
    const bounded = boundLoop({ ...view, initialProgress: huge, reasons: [huge], iterations: [{ ...view.iterations[0]!, progress: huge, stopReason: huge }] }, 'none');
    expect(loopsStateSchema.safeParse({ loops: [bounded], problems: [], available: true }).success).toBe(true);
    expect(bounded.iterations[0]!.progress).toContain('more characters not shown');
  });
});

describe('the loop page, webview side', () => {
  it('the store keeps the latest loops; a malformed message is refused; navigate selects the loop', () => {
    const store = new ChatStore({ schedule: (f) => f(), setTimer: () => () => {} });
    let seq = 0;
    store.receive({ type: 'snapshot', transcript: null, config: CONFIG, seq: ++seq });
    const state = { loops: [boundLoop(view, 'here')], problems: [], available: true };
    store.receive({ type: 'loops', state, seq: ++seq });
    expect(store.loops.value).toEqual(state);
    store.receive({ type: 'loops', state: { loops: [{ name: '<script>' }], problems: [], available: true }, seq: ++seq });
    expect(store.loops.value).toEqual(state);
    store.receive({ type: 'navigate', page: 'loop', loop: 'fix-tests', seq: ++seq });
    expect(store.page.value).toBe('loop');
    expect(store.loopSelected.value).toBe('fix-tests');
  });

  it('offers Continue for a stalled or interrupted loop, Cancel while it can stop, nothing for one driven elsewhere or ended', () => {
    expect(loopActions({ status: 'active', driver: 'here' })).toEqual({ continue: false, cancel: true });
    expect(loopActions({ status: 'stalled', driver: 'here' })).toEqual({ continue: true, cancel: true });
    expect(loopActions({ status: 'active', driver: 'none' })).toEqual({ continue: true, cancel: true });
    expect(loopActions({ status: 'active', driver: 'elsewhere' })).toEqual({ continue: false, cancel: false });
    expect(loopActions({ status: 'complete', driver: 'none' })).toEqual({ continue: false, cancel: false });
    expect(loopStatusLabel({ status: 'active', driver: 'none' })).toBe('interrupted');
    expect(loopStatusLabel({ status: 'continuing', driver: 'elsewhere', heldBy: 'keel loop' })).toBe('running in keel loop');
    expect(loopStatusLabel({ status: 'stalled', driver: 'here' })).toBe('stalled');
    // A loop that ran out of iterations did not reach its goal: it says so, and offers nothing to continue.
    expect(loopStatusLabel({ status: 'stopped', driver: 'none' })).toBe('stopped: iteration limit reached');
    expect(loopActions({ status: 'stopped', driver: 'none' })).toEqual({ continue: false, cancel: false });
  });
});
