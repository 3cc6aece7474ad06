import { describe, expect, it } from 'vitest';
import type { PermissionRequest } from '../../../src/core/permissions/gate';
import { ChatController } from '../../../src/extension/chatController';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { fakeHost, recordingPort } from './fakes';

function view(controller: ChatController, h: ReturnType<typeof fakeHost>, id = 'v1') {
  const port = recordingPort();
  const conn = new ViewConnection(id, 'sidebar', port.post, h.log);
  const detach = controller.attach(conn);
  const fromPage = async (data: unknown) => {
    const m = conn.receive(data);
    if (m) await controller.handle(conn, m);
  };
  return { conn, port, detach, fromPage };
}

function request(id: string, over: Partial<PermissionRequest> = {}): PermissionRequest {
  return {
    requestId: id,
    taskId: 'task-1',
    toolCallId: `call-${id}`,
    tool: 'Write',
    input: { file_path: 'a.ts', content: 'x' },
    subject: { kind: 'write', tool: 'Write', paths: ['/w/a.ts'], summary: 'Create a.ts', diff: { path: '/w/a.ts', before: null, after: 'x\n' } },
    reason: 'editing a file',
    ...over,
  };
}

const of = <T extends ToWebviewMessage['type']>(ms: ToWebviewMessage[], type: T) => ms.filter((m): m is Extract<ToWebviewMessage, { type: T }> => m.type === type);

describe('permission prompts: one id for card and notification, first answer wins', () => {
  it('a ready view gets a card (no notification); its answer resolves the ask and closes the card in every view', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const a = view(c, h, 'a');
    const b = view(c, h, 'b');
    await a.fromPage({ type: 'ready' });
    await b.fromPage({ type: 'ready' });
    const answer = c.permissions.ask(request('r1'), new AbortController().signal);
    expect(of(a.port.posted, 'permissionRequest').map((m) => m.request.requestId)).toEqual(['r1']);
    expect(of(a.port.posted, 'permissionRequest')[0]?.request.diff).toEqual({ path: '/w/a.ts', before: null, after: 'x\n' });
    expect(h.notifications.shown).toHaveLength(0);
    await a.fromPage({ type: 'permissionAnswer', requestId: 'r1', decision: 'allow' });
    expect(await answer).toEqual({ decision: 'allow' });
    for (const v of [a, b]) expect(of(v.port.posted, 'permissionResolved')).toMatchObject([{ requestId: 'r1', decision: 'allow', source: 'card' }]);
    // A second answer (the other view, a stale card) is refused and changes nothing.
    await b.fromPage({ type: 'permissionAnswer', requestId: 'r1', decision: 'deny' });
    expect(of(b.port.posted, 'notice').at(-1)?.message).toMatch(/already answered/);
    expect(h.log.lines.some((l) => l.includes('refused: not pending'))).toBe(true);
  });

  it('with no visible view the notification asks with the same id; a card answer later wins and withdraws it', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const answer = c.permissions.ask(request('r2'), new AbortController().signal);
    expect(h.notifications.shown.map((r) => r.requestId)).toEqual(['r2']);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    const snap = of(v.port.posted, 'snapshot')[0];
    expect(snap?.permissions?.map((p) => p.requestId)).toEqual(['r2']);
    await v.fromPage({ type: 'permissionAnswer', requestId: 'r2', decision: 'deny', feedback: 'use b.ts instead' });
    expect(await answer).toEqual({ decision: 'deny', feedback: 'use b.ts instead' });
    expect(h.notifications.withdrawn).toEqual(['r2']);
  });

  it('the notification answering first closes the cards', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    const answer = c.permissions.ask(request('r3'), new AbortController().signal);
    await v.fromPage({ type: 'ready' });
    h.notifications.answer('r3', { decision: 'allow' });
    expect(await answer).toEqual({ decision: 'allow' });
    expect(of(v.port.posted, 'permissionResolved')).toMatchObject([{ requestId: 'r3', source: 'notification' }]);
    await v.fromPage({ type: 'permissionAnswer', requestId: 'r3', decision: 'deny' });
    expect(of(v.port.posted, 'notice')).toHaveLength(1);
  });

  it('when every view goes away a pending card also becomes a notification', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    void c.permissions.ask(request('r4'), new AbortController().signal);
    expect(h.notifications.shown).toHaveLength(0);
    v.conn.setVisible(false);
    c.viewsChanged();
    expect(h.notifications.shown.map((r) => r.requestId)).toEqual(['r4']);
  });

  it('a cancelled task withdraws its prompt (deny) and tells the views', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    const ctl = new AbortController();
    const answer = c.permissions.ask(request('r5'), ctl.signal);
    ctl.abort();
    expect((await answer).decision).toBe('deny');
    expect(of(v.port.posted, 'permissionResolved')).toMatchObject([{ requestId: 'r5', decision: 'deny', source: 'task' }]);
  });

  it('"Always allow" allows the same tool (and for commands the same command) without asking again', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    const first = c.permissions.ask(request('r6'), new AbortController().signal);
    await v.fromPage({ type: 'permissionAnswer', requestId: 'r6', decision: 'allowAlways' });
    expect(await first).toEqual({ decision: 'allow' });
    expect(await c.permissions.ask(request('r7'), new AbortController().signal)).toEqual({ decision: 'allow' });
    expect(of(v.port.posted, 'permissionRequest')).toHaveLength(1);
    const bash = (id: string, command: string) =>
      request(id, { tool: 'Bash', input: { command }, subject: { kind: 'execute', tool: 'Bash', command, cwd: '/w', summary: command } });
    const ls = c.permissions.ask(bash('r8', 'ls'), new AbortController().signal);
    await v.fromPage({ type: 'permissionAnswer', requestId: 'r8', decision: 'allowAlways' });
    await ls;
    expect(await c.permissions.ask(bash('r9', 'ls'), new AbortController().signal)).toEqual({ decision: 'allow' });
    void c.permissions.ask(bash('r10', 'rm -rf x'), new AbortController().signal);
    expect(of(v.port.posted, 'permissionRequest').map((m) => m.request.requestId)).toEqual(['r6', 'r8', 'r10']);
  });

  it('"Open diff" uses the prompt\'s full proposed change, also after it was answered', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    void c.permissions.ask(request('r11'), new AbortController().signal);
    await v.fromPage({ type: 'permissionAnswer', requestId: 'r11', decision: 'allow' });
    await v.fromPage({ type: 'openDiff', toolCallId: 'call-r11' });
    expect(h.workbench.diffs).toMatchObject([{ path: '/w/a.ts', before: null, after: 'x\n' }]);
    await v.fromPage({ type: 'openDiff', toolCallId: 'unknown' });
    expect(of(v.port.posted, 'notice').at(-1)?.message).toMatch(/no change/);
  });
});
