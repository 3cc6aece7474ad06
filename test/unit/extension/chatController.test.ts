import { describe, expect, it } from 'vitest';
import { ChatController, ChatWindow } from '../../../src/extension/chatController';
import { chatConfigOf, resolveProviderConfig } from '../../../src/extension/providerConfig';
import { ViewConnection } from '../../../src/extension/viewConnection';
import { CLAUDE_FAMILIES } from '../../../src/shared/domain/models';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { fakeHost, recordingPort } from './fakes';

function view(controller: ChatController, host: ReturnType<typeof fakeHost>, id = 'v1') {
  const port = recordingPort();
  const conn = new ViewConnection(id, 'sidebar', port.post, host.log);
  const detach = controller.attach(conn);
  /** Simulates the webview posting raw data, as the vscode host does. */
  const fromPage = async (data: unknown) => {
    const m = conn.receive(data);
    if (m) await controller.handle(conn, m);
  };
  return { conn, port, detach, fromPage };
}

/** Lets a task's first events (on the microtasks after startTask) happen. */
const settled = () => new Promise((r) => setTimeout(r, 0));
const kinds = (ms: ToWebviewMessage[]) => ms.map((m) => `${m.seq}:${m.type === 'event' ? m.event.type : m.type}`);

describe('ChatController', () => {
  it('answers ready with an empty snapshot and creates no runtime', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    expect(v.port.posted).toEqual([
      // The mode shown is the one the next task uses (here the host's permission mode).
      { type: 'snapshot', seq: 1, transcript: null, config: { ...h.host.chatConfig('acceptEdits'), mode: 'acceptEdits' }, permissions: [] },
    ]);
    expect(h.loads()).toBe(0);
  });

  it('a prompt starts a task with the provider config and mode; views get its snapshot, then its events', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'prompt', text: 'list files' });
    const task = h.runtime.tasks[0]!;
    expect(task.options).toMatchObject({ prompt: 'list files', provider: { provider: 'demo', model: 'demo' }, mode: 'acceptEdits' });
    expect(await task.options.refreshProvider?.()).toEqual({ provider: 'demo', model: 'demo' });
    await settled();
    task.emit({ type: 'assistant_start', taskId: task.id, messageId: 'm1', model: 'demo model' });
    task.emit({ type: 'text', taskId: task.id, delta: 'Hi' });
    // As with the runtime's tasks, the run starts after startTask: the snapshot shows the task
    // before its first event, and the user message arrives as an event like every other.
    expect(kinds(v.port.posted)).toEqual(['1:snapshot', '2:snapshot', '3:user_message', '4:task', '5:task', '6:assistant_start', '7:text']);
    const snap = v.port.posted[1]!;
    expect(snap.type === 'snapshot' && snap.transcript?.items).toEqual([]);
  });

  it('a second prompt goes to the open task, not a new one: queued while it runs (cancellable), sent when the run ends', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await Promise.all([v.fromPage({ type: 'prompt', text: 'one' }), v.fromPage({ type: 'prompt', text: 'two' })]);
    await settled();
    expect(h.runtime.tasks).toHaveLength(1);
    const task = h.runtime.tasks[0]!;
    const events = () => v.port.posted.flatMap((m) => (m.type === 'event' ? [m.event] : []));
    expect(events().some((e) => e.type === 'error')).toBe(false);
    expect(task.transcript().queued?.map((q) => q.text)).toEqual(['two']);
    await v.fromPage({ type: 'prompt', text: 'two and a half' });
    // The person cancels one of them: it is never sent.
    await v.fromPage({ type: 'withdrawQueued', id: task.transcript().queued![1]!.id });
    expect(events().filter((e) => e.type === 'unqueued').map((e) => e.type === 'unqueued' && e.outcome)).toEqual(['withdrawn']);
    task.answer('done');
    expect(events().filter((e) => e.type === 'user_message').map((e) => e.type === 'user_message' && e.text)).toEqual(['one', 'two']);
    await settled();
    task.answer('done too');
    await v.fromPage({ type: 'prompt', text: 'three' });
    expect(task.followUps).toEqual(['two', 'two and a half', 'three']);
    expect(events().filter((e) => e.type === 'user_message').map((e) => e.type === 'user_message' && e.text)).toEqual(['one', 'two', 'three']);
    expect(h.runtime.tasks).toHaveLength(1);
  });

  it('two views watch the same task, each with its own numbering', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const a = view(c, h, 'a');
    const b = view(c, h, 'b');
    await a.fromPage({ type: 'ready' });
    await a.fromPage({ type: 'prompt', text: 'go' });
    const task = h.runtime.tasks[0]!;
    await settled();
    task.emit({ type: 'assistant_start', taskId: task.id, messageId: 'm1', model: 'demo model' });
    await b.fromPage({ type: 'ready' });
    task.emit({ type: 'text', taskId: task.id, delta: 'x' });
    expect(kinds(a.port.posted)).toEqual(['1:snapshot', '2:snapshot', '3:user_message', '4:task', '5:task', '6:assistant_start', '7:text']);
    expect(kinds(b.port.posted)).toEqual(['1:snapshot', '2:text']);
    const bSnap = b.port.posted[0]!;
    expect(bSnap.type === 'snapshot' && bSnap.transcript?.items.map((i) => i.kind)).toEqual(['user', 'assistant']);
    expect([a.conn.state, b.conn.state]).toEqual(['active', 'active']);
    task.answer(' done');
    expect([a.conn.state, b.conn.state]).toEqual(['completed', 'completed']);
  });

  it('a hidden view misses nothing: on its next ready the snapshot holds what happened meanwhile', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'prompt', text: 'go' });
    v.conn.setVisible(false);
    const task = h.runtime.tasks[0]!;
    task.emit({ type: 'assistant_start', taskId: task.id, messageId: 'm1', model: 'demo model' });
    task.emit({ type: 'text', taskId: task.id, delta: 'while hidden' });
    const before = v.port.posted.length;
    await v.fromPage({ type: 'ready', lastSeq: 2 });
    const after = v.port.posted.slice(before);
    expect(kinds(after)).toEqual(['1:snapshot']);
    const s = after[0]!;
    const last = s.type === 'snapshot' ? s.transcript?.items.at(-1) : undefined;
    expect(last?.kind === 'assistant' && last.text).toBe('while hidden');
  });

  it('new task shows the empty state and stops forwarding the old task (which keeps running)', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'prompt', text: 'go' });
    const task = h.runtime.tasks[0]!;
    await v.fromPage({ type: 'newTask' });
    task.emit({ type: 'text', taskId: task.id, delta: 'late' });
    const last = v.port.posted.at(-1)!;
    expect(last).toMatchObject({ type: 'snapshot', transcript: null });
    // From the title bar's New Task on the history page too: the chat page shows the empty state.
    expect(v.port.posted.at(-2)).toMatchObject({ type: 'navigate', page: 'chat' });
    // Only the task book still listens (history times, thinking times); the views get nothing.
    expect(task.listenerCount).toBe(1);
    expect(task.cancels).toBe(0);
    await v.fromPage({ type: 'prompt', text: 'another' });
    expect(h.runtime.tasks).toHaveLength(2);
    expect(c.showTask(task.id)).toBe(true);
    expect(v.port.posted.at(-1)).toMatchObject({ type: 'snapshot', transcript: { taskId: task.id } });
    expect(c.showTask('nope')).toBe(false);
  });

  it('cancel and retry go to the shown task', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'cancel' });
    await v.fromPage({ type: 'prompt', text: 'go' });
    await v.fromPage({ type: 'cancel' });
    await v.fromPage({ type: 'retry' });
    expect(h.runtime.tasks[0]!.cancels).toBe(1);
    expect(h.runtime.tasks[0]!.retries).toBe(1);
  });

  it('a runtime that cannot load becomes a host error in the views, and is tried again next time', async () => {
    const h = fakeHost({ runtimeError: 'open a folder first' });
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'prompt', text: 'go' });
    expect(v.port.posted.at(-1)).toEqual({ type: 'error', seq: 2, message: 'Keel could not start the task: open a folder first' });
    await v.fromPage({ type: 'prompt', text: 'go' });
    expect(h.loads()).toBe(2);
  });

  it('opens http(s) links, refuses script links, asks before anything else', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'openLink', href: 'https://example.com/x' });
    await v.fromPage({ type: 'openLink', href: 'command:workbench.action.terminal.new' });
    await v.fromPage({ type: 'openLink', href: 'javascript:alert(1)' });
    await v.fromPage({ type: 'openLink', href: 'file:///etc/passwd' });
    expect(h.opened).toEqual(['https://example.com/x']);
    expect(h.warnings).toHaveLength(2);
    expect(h.confirms).toHaveLength(1);
    expect(h.confirms[0]).toContain('file:///etc/passwd');
  });

  it('drops invalid messages from a view with a log line', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'prompt' });
    await v.fromPage({ type: 'deleteEverything' });
    expect(h.runtime.tasks).toHaveLength(0);
    expect(h.log.lines.filter((l) => l.includes('dropped an invalid message'))).toHaveLength(2);
  });

  it('a detached view gets nothing more; dispose disposes the runtime', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    await v.fromPage({ type: 'prompt', text: 'go' });
    v.detach();
    const n = v.port.posted.length;
    h.runtime.tasks[0]!.emit({ type: 'text', taskId: 'task-1', delta: 'x' });
    expect(v.port.posted).toHaveLength(n);
    c.dispose();
    expect(h.runtime.disposed).toBe(true);
  });

  it('the model follows the chat\'s mode: Plan mode runs and shows keel.planModel, the other modes keel.model', async () => {
    const h = fakeHost();
    // The host's settings as the extension reads them: a plan model set, the key in SecretStorage.
    const s = { provider: 'anthropic', model: 'haiku', planModel: 'opus', anthropicBaseUrl: '', openaiBaseUrl: '', defaultMode: 'default' };
    const c = new ChatController({ ...h.host, providerConfig: async (mode) => resolveProviderConfig(s, 'sk-test', {}, mode), chatConfig: (mode) => chatConfigOf(s, {}, mode) });
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    const header = () => {
      const snaps = v.port.posted.filter((m) => m.type === 'snapshot');
      const last = snaps.at(-1);
      return last?.type === 'snapshot' ? `${last.config.mode}: ${last.config.model}` : '';
    };
    expect(header()).toBe(`acceptEdits: ${CLAUDE_FAMILIES.haiku}`);
    await v.fromPage({ type: 'setMode', mode: 'plan' });
    expect(header()).toBe(`plan: ${CLAUDE_FAMILIES.opus}`);
    await v.fromPage({ type: 'prompt', text: 'plan the refactor' });
    const task = h.runtime.tasks[0]!;
    expect(task.options).toMatchObject({ mode: 'plan', provider: { model: CLAUDE_FAMILIES.opus } });
    // The next run of the same task reads the choice again: out of Plan mode it is keel.model.
    await v.fromPage({ type: 'setMode', mode: 'default' });
    expect(header()).toBe(`default: ${CLAUDE_FAMILIES.haiku}`);
    expect((await task.options.refreshProvider?.())?.model).toBe(CLAUDE_FAMILIES.haiku);
  });

  it('a chat tab closed while its first prompt waits for the provider settings starts nothing; the sidebar is left as it was', async () => {
    const h = fakeHost();
    let release: (() => void) | undefined;
    const window = new ChatWindow({
      ...h.host,
      providerConfig: () =>
        new Promise((resolve) => {
          release = () => resolve({ provider: 'demo', model: 'demo' });
        }),
    });
    const sidebar = new ChatController(window, { id: 'sidebar' });
    const tab = new ChatController(window, { id: 'panel' });
    const v = view(tab, h);
    await v.fromPage({ type: 'ready' });
    const sent = v.fromPage({ type: 'prompt', text: 'start something' });
    while (!release) await settled();
    tab.dispose();
    release();
    await sent;
    expect(h.runtime.tasks).toHaveLength(0);
    expect(sidebar.shownTask()).toBeUndefined();
    expect(h.log.lines.join('\n')).not.toMatch(/started in the/);
  });
});
