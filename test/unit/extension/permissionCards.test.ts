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

  it('"Always allow" saves the rules (as edited, where chosen) before the task goes on; nothing is remembered in memory', async () => {
    const h = fakeHost();
    const saved: Array<{ rules: string[]; where: string }> = [];
    let release: () => void = () => undefined;
    const c = new ChatController({
      ...h.host,
      saveRules: (rules, where) => {
        saved.push({ rules, where });
        return new Promise<void>((r) => (release = r));
      },
    });
    const v = view(c, h);
    await v.fromPage({ type: 'ready' });
    const bash = (id: string, command: string) =>
      request(id, { tool: 'Bash', input: { command }, subject: { kind: 'execute', tool: 'Bash', command, cwd: '/w', summary: command }, suggestedRules: ['Bash(touch:*)'] });
    let settled = false;
    const first = c.permissions.ask(bash('r6', 'touch a'), new AbortController().signal).then((a) => {
      settled = true;
      return a;
    });
    expect(of(v.port.posted, 'permissionRequest')[0]?.request.suggestedRules).toEqual(['Bash(touch:*)']);
    await v.fromPage({ type: 'permissionAnswer', requestId: 'r6', decision: 'allowAlways', always: { rules: [' Bash(touch a) ', 'Bash(touch a)'], where: 'project' } });
    expect(saved).toEqual([{ rules: ['Bash(touch a)'], where: 'project' }]);
    // The card closes at once, but the task waits until the rule is on disk.
    expect(of(v.port.posted, 'permissionResolved')).toMatchObject([{ requestId: 'r6', decision: 'allowAlways', source: 'card' }]);
    await Promise.resolve();
    expect(settled).toBe(false);
    release();
    expect(await first).toEqual({ decision: 'allow', always: { rules: ['Bash(touch a)'], where: 'project' } });
    // No in-memory "always": the same call asks again (the engine, reading the file, is what allows it).
    void c.permissions.ask(bash('r7', 'touch a'), new AbortController().signal);
    expect(of(v.port.posted, 'permissionRequest').map((m) => m.request.requestId)).toEqual(['r6', 'r7']);
    // Without edited rules, every suggested rule is saved locally.
    await v.fromPage({ type: 'permissionAnswer', requestId: 'r7', decision: 'allowAlways' });
    expect(saved[1]).toEqual({ rules: ['Bash(touch:*)'], where: 'local' });
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
