import { describe, expect, it } from 'vitest';
import type { PermissionRequest } from '../../../src/core/permissions/gate';
import { PermissionBroker } from '../../../src/extension/permissionBroker';
import { ChatController } from '../../../src/extension/chatController';
import { ViewConnection } from '../../../src/extension/viewConnection';
import { fakeHost, MemoryLogger, recordingPort } from './fakes';

/**
 * Per-hunk review answered on the chat card (issue 23): the broker turns the card's choices into
 * the allow's review, built from the request's own proposal — what the tool then writes exactly.
 */
const BEFORE = 'one\ntwo\nthree\nfour\n';
const AFTER = 'ONE\ntwo\nthree\nFOUR\n';
const edit = (id: string): PermissionRequest => ({
  requestId: id,
  taskId: 't1',
  toolCallId: `c-${id}`,
  tool: 'Edit',
  input: { file_path: 'a.txt', old_string: BEFORE, new_string: AFTER },
  subject: { kind: 'write', tool: 'Edit', paths: ['/w/a.txt'], summary: 'Edit a.txt', diff: { path: '/w/a.txt', before: BEFORE, after: AFTER } },
  reason: 'editing a file',
});

function broker(): PermissionBroker {
  return new PermissionBroker({ log: new MemoryLogger(), surfaces: [], hasVisibleView: () => true });
}

describe('per-hunk review from the chat card', () => {
  it('an allow with the second of two hunks left out carries a review that writes exactly the first', async () => {
    const b = broker();
    const answer = b.ask(edit('r1'), new AbortController().signal);
    expect(b.answer('r1', 'allow', undefined, undefined, [{ kind: 'accept' }, { kind: 'reject' }])).toBe(true);
    const a = await answer;
    expect(a.decision).toBe('allow');
    expect(a.review).toMatchObject({ content: 'ONE\ntwo\nthree\nfour\n', hunks: 2, accepted: [1], rejected: [2], edited: [] });
  });

  it("the person's own lines for a hunk are what is written in its place", async () => {
    const b = broker();
    const answer = b.ask(edit('r2'), new AbortController().signal);
    b.answer('r2', 'allow', undefined, undefined, [{ kind: 'edit', lines: ['Uno'] }, { kind: 'accept' }]);
    const a = await answer;
    expect(a.review).toMatchObject({ content: 'Uno\ntwo\nthree\nFOUR\n', accepted: [2], edited: [1], edits: [{ hunk: 1, lines: ['Uno'] }] });
  });

  it('every hunk applied as proposed is a plain allow (no review), and a deny ignores choices', async () => {
    const b = broker();
    const all = b.ask(edit('r3'), new AbortController().signal);
    b.answer('r3', 'allow', undefined, undefined, [{ kind: 'accept' }, { kind: 'accept' }]);
    expect(await all).toEqual({ decision: 'allow' });
    const denied = b.ask(edit('r4'), new AbortController().signal);
    b.answer('r4', 'deny', 'no', undefined, [{ kind: 'reject' }, { kind: 'accept' }]);
    expect(await denied).toEqual({ decision: 'deny', feedback: 'no' });
  });

  it('the card\'s message reaches the prompt through the chat: the allow carries the review', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const port = recordingPort();
    const conn = new ViewConnection('v1', 'sidebar', port.post, h.log);
    c.attach(conn);
    const fromPage = async (data: unknown) => {
      const m = conn.receive(data);
      expect(m).toBeDefined();
      if (m) await c.handle(conn, m);
    };
    await fromPage({ type: 'ready' });
    const answer = c.permissions.ask(edit('r5'), new AbortController().signal);
    await fromPage({ type: 'permissionAnswer', requestId: 'r5', decision: 'allow', review: { choices: [{ kind: 'accept' }, { kind: 'reject' }] } });
    expect((await answer).review).toMatchObject({ content: 'ONE\ntwo\nthree\nfour\n', rejected: [2] });
  });
});
