import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { ActivityFeed } from '../../../src/core/events/activityFeed';
import { ChatController, ChatWindow } from '../../../src/extension/chatController';
import { memoryHistoryServices } from '../../../src/extension/history/taskHistory';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { fakeHost, recordingPort } from './fakes';
import { eventually } from '../helpers/changes';

/**
 * Two chat surfaces of one window (the sidebar and an editor tab), each a ChatController with its
 * own task, over a real TaskRuntime whose provider is the fake model server (real SSE over
 * loopback). The server holds each answer after its first words until the test releases it, so
 * both tasks are streaming at the same time.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const of = <T extends ToWebviewMessage['type']>(ms: ToWebviewMessage[], type: T) => ms.filter((m): m is Extract<ToWebviewMessage, { type: T }> => m.type === type);
/** The task ids of the events a view was sent. */
const eventTasks = (ms: ToWebviewMessage[]) => new Set(of(ms, 'event').map((m) => m.event.taskId));
const textOf = (ms: ToWebviewMessage[], taskId: string) =>
  of(ms, 'event')
    .map((m) => m.event)
    .filter((e) => e.taskId === taskId && e.type === 'text')
    .map((e) => (e.type === 'text' ? e.delta : ''))
    .join('');

/** No deadline: the test's timeout bounds it. */
const until = (cond: () => boolean, what: string) => eventually(cond, () => what);

function release(): { promise: Promise<void>; go(): void } {
  let go!: () => void;
  const promise = new Promise<void>((r) => (go = r));
  return { promise, go };
}

async function windowWithTwoChats(opts: { mode?: 'default' | 'acceptEdits'; bus?: boolean } = {}) {
  const server: FakeModelServer = await startFakeModelServer();
  const storage = mkdtempSync(join(tmpdir(), 'keel-chats-'));
  const workspace = mkdtempSync(join(tmpdir(), 'keel-chats-ws-'));
  const h = fakeHost({ provider: { provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'k', baseUrl: server.url } });
  // Deleting from History asks first: the person says yes.
  const services = { ...memoryHistoryServices(), confirm: async () => true };
  const window = new ChatWindow({ ...h.host, loadRuntime: async (asker) => new TaskRuntime({ workspace, storageDir: storage, ownerLabel: 'VS Code window test', asker, ...(opts.bus ? { feed: new ActivityFeed() } : {}) }), history: services, permissionMode: () => opts.mode ?? 'acceptEdits' });
  let tabActive = false;
  const sidebar = new ChatController(window, { id: 'sidebar' });
  const tab = new ChatController(window, { id: 'panel', isActive: () => tabActive });
  cleanups.push(
    () => server.close(),
    () => rmSync(storage, { recursive: true, force: true }),
    () => rmSync(workspace, { recursive: true, force: true }),
    () => window.dispose(),
  );
  const view = async (chat: ChatController, id: string) => {
    const port = recordingPort();
    const conn = new ViewConnection(id, chat.id === 'sidebar' ? 'sidebar' : 'panel', port.post, h.log);
    chat.attach(conn);
    const fromPage = async (data: unknown) => {
      const m = conn.receive(data);
      if (m) await chat.handle(conn, m);
    };
    await fromPage({ type: 'ready' });
    return { port, conn, fromPage };
  };
  return { server, window, sidebar, tab, services, h, view, workspace, setTabActive: (v: boolean) => void (tabActive = v) };
}

describe('chat surfaces: each chat shows its own task', () => {
  // Directly from the tasks, and through the window's event bus (each chat a queued subscriber of its own task).
  it.each([{ bus: false }, { bus: true }])('A in the sidebar and B in the tab stream at the same time, each only in its own chat; B completing leaves A streaming (bus: $bus)', async ({ bus }) => {
    const w = await windowWithTwoChats({ bus });
    const holdA = release();
    const holdB = release();
    w.server.enqueue(
      { when: 'alpha', blocks: [{ type: 'text', text: 'Alpha speaking, first words. Alpha goes on after the hold.' }], chunkSize: 6, fault: { kind: 'stall', afterEvents: 4, until: holdA.promise } },
      { when: 'beta', blocks: [{ type: 'text', text: 'Beta speaking, first words. Beta goes on after the hold.' }], chunkSize: 6, fault: { kind: 'stall', afterEvents: 4, until: holdB.promise } },
    );
    const side = await w.view(w.sidebar, 'sidebar-1');
    const tab = await w.view(w.tab, 'panel-1');

    await side.fromPage({ type: 'prompt', text: 'task alpha' });
    const a = w.sidebar.shownTask()!;
    await until(() => textOf(side.port.posted, a.id).length > 0, 'A streaming in the sidebar');
    await tab.fromPage({ type: 'prompt', text: 'task beta' });
    const b = w.tab.shownTask()!;
    expect(b.id).not.toBe(a.id);
    await until(() => textOf(tab.port.posted, b.id).length > 0, 'B streaming in the tab');

    // Starting B in the tab did not switch the sidebar: it still shows A, and each chat got only its task's events.
    expect(w.sidebar.shownTask()?.id).toBe(a.id);
    expect(eventTasks(side.port.posted)).toEqual(new Set([a.id]));
    expect(eventTasks(tab.port.posted)).toEqual(new Set([b.id]));
    expect(of(tab.port.posted, 'snapshot').every((s) => s.transcript === null || s.transcript.taskId === b.id)).toBe(true);
    // Both model streams are open at once.
    expect(w.server.maxConcurrent()).toBe(2);
    expect(a.transcript().done).toBe(false);
    expect(b.transcript().done).toBe(false);

    holdB.go();
    await b.settled();
    await until(() => of(tab.port.posted, 'event').some((m) => m.event.type === 'done'), 'B done in the tab');
    expect(textOf(tab.port.posted, b.id)).toBe('Beta speaking, first words. Beta goes on after the hold.');
    // A is still held, still shown in the sidebar, and nothing of B reached it.
    expect(a.transcript().done).toBe(false);
    expect(eventTasks(side.port.posted)).toEqual(new Set([a.id]));

    holdA.go();
    await a.settled();
    await until(() => textOf(side.port.posted, a.id) === 'Alpha speaking, first words. Alpha goes on after the hold.', 'A complete in the sidebar');
    expect(eventTasks(tab.port.posted)).toEqual(new Set([b.id]));
    // Each chat keeps its own last task (a reload brings each back).
    expect(w.services.lastTask.get()).toBe(a.id);
    expect(w.services.lastTaskOf!('panel').get()).toBe(b.id);
  });

  it('opening a task from History in one chat leaves the other; New Task in one leaves the other streaming', async () => {
    const w = await windowWithTwoChats();
    const holdA = release();
    w.server.enqueue({ when: 'alpha', blocks: [{ type: 'text', text: 'Alpha speaking, and more.' }], fault: { kind: 'stall', afterEvents: 3, until: holdA.promise } });
    const side = await w.view(w.sidebar, 'sidebar-1');
    const tab = await w.view(w.tab, 'panel-1');
    await side.fromPage({ type: 'prompt', text: 'task alpha' });
    const a = w.sidebar.shownTask()!;
    await tab.fromPage({ type: 'prompt', text: 'task beta' });
    const b = w.tab.shownTask()!;
    await b.settled();

    // The tab opens A from its History: both chats now follow A; New Task in the sidebar leaves the tab on A.
    await tab.fromPage({ type: 'openTask', taskId: a.id });
    expect(w.tab.shownTask()?.id).toBe(a.id);
    await side.fromPage({ type: 'newTask' });
    expect(w.sidebar.shownTask()).toBeUndefined();
    expect(w.tab.shownTask()?.id).toBe(a.id);
    const before = of(side.port.posted, 'event').length;
    holdA.go();
    await a.settled();
    await until(() => of(tab.port.posted, 'event').some((m) => m.event.type === 'done' && m.event.taskId === a.id), 'A done in the tab');
    expect(of(side.port.posted, 'event').length).toBe(before);
  });

  it('a task deleted from one chat\'s History leaves every chat that showed it, and every chat\'s History list', async () => {
    const w = await windowWithTwoChats();
    const side = await w.view(w.sidebar, 'sidebar-1');
    const tab = await w.view(w.tab, 'panel-1');
    await side.fromPage({ type: 'prompt', text: 'task gamma' });
    const g = w.sidebar.shownTask()!;
    await g.settled();
    // The sidebar's History page is open and lists the task.
    await side.fromPage({ type: 'listTasks' });
    expect(of(side.port.posted, 'taskList').at(-1)!.tasks.map((r) => r.taskId)).toContain(g.id);
    await tab.fromPage({ type: 'openTask', taskId: g.id });
    expect(w.tab.shownTask()?.id).toBe(g.id);
    await tab.fromPage({ type: 'deleteTask', taskId: g.id });
    expect(w.tab.shownTask()).toBeUndefined();
    expect(w.sidebar.shownTask()).toBeUndefined();
    expect(of(side.port.posted, 'snapshot').at(-1)!.transcript).toBeNull();
    // Deleted from the tab: the sidebar's open History no longer offers it.
    expect(of(side.port.posted, 'taskList').at(-1)!.tasks.map((r) => r.taskId)).not.toContain(g.id);
    expect(of(tab.port.posted, 'taskList').at(-1)!.tasks.map((r) => r.taskId)).not.toContain(g.id);
  });

  it('a permission card shows in the chat that shows its task; hiding that chat makes it a notification, not the other chat hiding', async () => {
    const w = await windowWithTwoChats({ mode: 'default' });
    w.server.enqueue(
      { when: 'alpha', blocks: [{ type: 'tool_use', id: 'call-a', name: 'Bash', input: { command: 'touch made-by-alpha.txt' } }] },
      { when: 'beta', blocks: [{ type: 'tool_use', id: 'call-b', name: 'Bash', input: { command: 'touch made-by-beta.txt' } }] },
    );
    const side = await w.view(w.sidebar, 'sidebar-1');
    const tab = await w.view(w.tab, 'panel-1');
    await side.fromPage({ type: 'prompt', text: 'task alpha' });
    const a = w.sidebar.shownTask()!;
    await tab.fromPage({ type: 'prompt', text: 'task beta' });
    const b = w.tab.shownTask()!;
    await until(() => w.window.permissions.list().length === 2, 'both prompts pending');

    const cards = (ms: ToWebviewMessage[]) => new Set(of(ms, 'permissionRequest').map((m) => m.request.taskId));
    expect(cards(side.port.posted)).toEqual(new Set([a.id]));
    expect(cards(tab.port.posted)).toEqual(new Set([b.id]));
    expect(w.h.notifications.shown).toEqual([]);
    expect(w.window.visibleTaskIds()).toEqual(new Set([a.id, b.id]));

    // The tab is hidden: B's prompt has no visible chat any more and becomes a notification; A's does not.
    tab.conn.setVisible(false);
    expect(w.h.notifications.shown.map((r) => r.taskId)).toEqual([b.id]);
    expect(w.window.visibleTaskIds()).toEqual(new Set([a.id]));

    // A new page of the sidebar lists only A's prompt in its snapshot.
    const late = await w.view(w.sidebar, 'sidebar-2');
    expect(of(late.port.posted, 'snapshot').at(-1)!.permissions?.map((p) => p.taskId)).toEqual([a.id]);

    // The sidebar moves to a new task: A's prompt is shown by no chat, so it goes to every chat;
    // the sidebar is visible, so no notification yet. Once the sidebar is hidden too, it is one.
    await side.fromPage({ type: 'newTask' });
    expect(w.window.cardsFor(w.tab).map((p) => p.taskId).sort()).toEqual([a.id, b.id].sort());
    expect(w.window.cardsFor(w.sidebar).map((p) => p.taskId)).toEqual([a.id]);
    expect(w.h.notifications.shown.map((r) => r.taskId)).toEqual([b.id]);
    side.conn.setVisible(false);
    late.conn.setVisible(false);
    expect(w.h.notifications.shown.map((r) => r.taskId)).toEqual([b.id, a.id]);
    await side.fromPage({ type: 'permissionAnswer', requestId: w.window.permissions.list(a.id)[0]!.requestId, decision: 'deny' });
    await side.fromPage({ type: 'permissionAnswer', requestId: w.window.permissions.list(b.id)[0]!.requestId, decision: 'deny' });
    await Promise.all([a.settled(), b.settled()]);
  });

  it('commands act on the active editor-tab chat, else the sidebar', async () => {
    const w = await windowWithTwoChats();
    expect(w.window.target()).toBe(w.sidebar);
    w.setTabActive(true);
    expect(w.window.target()).toBe(w.tab);
    w.tab.dispose();
    expect(w.window.target()).toBe(w.sidebar);
  });
});
