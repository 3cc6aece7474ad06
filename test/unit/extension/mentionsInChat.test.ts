import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatController } from '../../../src/extension/chatController';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { ProblemEntry } from '../../../src/core/mentions/reports';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';
import { NOTHING_APPROVED as NO_PROJECT_CONTENT } from '../../../src/core/commands/projectGate';
import { fakeHost, recordingPort } from './fakes';

/**
 * The chat resolves a message's `@` mentions on the host, from what the person typed: the task
 * gets the attachments (the model reads them), the views get the summaries (the chips), and the
 * page never sends anything but the text.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(problems: ProblemEntry[] = []) {
  const ws = mkdtempSync(join(tmpdir(), 'keel-chat-mentions-'));
  dirs.push(ws);
  writeFileSync(join(ws, 'README.md'), '# Hello\n');
  const h = fakeHost();
  h.runtime.permissions = lazyEngine({ workspace: ws, trust: NOTHING_APPROVED });
  const asked: (string | undefined)[] = [];
  h.host.mentions = {
    workspace: ws,
    problems: async (path) => {
      asked.push(path);
      return problems;
    },
  };
  const c = new ChatController(h.host);
  const port = recordingPort();
  const conn = new ViewConnection('v1', 'sidebar', port.post, h.host.log);
  c.attach(conn);
  const fromPage = async (data: unknown) => {
    const m = conn.receive(data);
    if (m) await c.handle(conn, m);
  };
  return { h, c, port, fromPage, asked };
}

describe('mentions in the chat', () => {
  it('the first message’s mentions become the new task’s attachments; the transcript shows their summaries', async () => {
    const problem: ProblemEntry = { path: 'src/a.ts', line: 2, column: 5, severity: 'error', message: "Type 'string' is not assignable to type 'number'.", source: 'ts', code: '2322' };
    const { h, fromPage, port, asked } = setup([problem]);
    await fromPage({ type: 'ready' });
    await fromPage({ type: 'prompt', text: 'fix @problems, see @README.md' });
    const task = h.runtime.tasks[0]!;
    expect(task.options.prompt).toBe('fix @problems, see @README.md');
    expect(asked).toEqual([undefined]);
    expect(task.options.attachments?.map((a) => [a.kind, a.label])).toEqual([
      ['problems', 'problems'],
      ['file', 'README.md'],
    ]);
    expect(task.options.attachments?.[0]?.content).toContain("src/a.ts:2:5 error 2322 (ts): Type 'string' is not assignable to type 'number'.");
    await new Promise((r) => setTimeout(r, 0));
    const shown = port.posted.flatMap((m) => (m.type === 'event' && m.event.type === 'user_message' ? [m.event] : []));
    expect(shown[0]?.attachments).toEqual([
      { kind: 'problems', label: 'problems' },
      { kind: 'file', label: 'README.md' },
    ]);
    expect(JSON.stringify(port.posted)).not.toContain('# Hello');
  });

  it('a message sent while the task works is queued with its attachments, and a message without mentions has none', async () => {
    const { h, fromPage } = setup();
    await fromPage({ type: 'ready' });
    await fromPage({ type: 'prompt', text: 'start' });
    await new Promise((r) => setTimeout(r, 0));
    const task = h.runtime.tasks[0]!;
    expect(task.options.attachments).toBeUndefined();
    await fromPage({ type: 'prompt', text: 'and @README.md#L1' });
    expect(task.transcript().queued).toEqual([{ id: `${task.id}-q1`, text: 'and @README.md#L1', attachments: [{ kind: 'file', label: 'README.md:1' }] }]);
    task.answer('ok');
    expect(task.extras.at(-1)?.attachments?.[0]).toMatchObject({ kind: 'file', label: 'README.md:1', content: '     1\t# Hello' });
  });

  it('without a folder (no editor mentions) the text goes as typed, with nothing attached', async () => {
    const h = fakeHost();
    const c = new ChatController(h.host);
    const conn = new ViewConnection('v1', 'sidebar', recordingPort().post, h.host.log);
    c.attach(conn);
    await c.handle(conn, { type: 'prompt', text: 'read @README.md' });
    expect(h.runtime.tasks[0]!.options.attachments).toBeUndefined();
  });
  it('a message’s images go to the task with its mentions; the composer’s preview is kept only when it is a checked image', async () => {
    const { h, fromPage } = setup();
    await fromPage({ type: 'ready' });
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const preview = `data:image/png;base64,${png}`;
    await fromPage({
      type: 'prompt',
      text: 'see @README.md',
      images: [
        { name: 'a.png', data: png, thumbnail: preview },
        { name: 'b.png', data: png, thumbnail: 'data:image/png;base64,AAAA' },
      ],
    });
    const task = h.runtime.tasks[0]!;
    expect(task.options.attachments?.map((a) => a.label)).toEqual(['README.md']);
    expect(task.options.images?.map((i) => i.info)).toEqual([
      { name: 'a.png', mediaType: 'image/png', bytes: 70, thumbnail: preview },
      { name: 'b.png', mediaType: 'image/png', bytes: 70 },
    ]);
    expect(task.options.images?.[0]?.block).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } });
  });

  it('only what the person typed is read: a mention that a command brings is sent as text, never read', async () => {
    const { h, fromPage } = setup();
    const home = mkdtempSync(join(tmpdir(), 'keel-chat-mentions-home-'));
    dirs.push(home);
    mkdirSync(join(home, '.claude', 'commands'), { recursive: true });
    writeFileSync(join(home, '.claude', 'commands', 'peek.md'), 'Look at @README.md and $ARGUMENTS');
    const ws = h.host.mentions!.workspace;
    writeFileSync(join(ws, 'notes.txt'), 'my notes\n');
    h.host.commands = { workspace: () => ws, home, gate: NO_PROJECT_CONTENT, approveHint: 'approve it first' };
    await fromPage({ type: 'ready' });
    await fromPage({ type: 'prompt', text: '/peek @notes.txt' });
    const task = h.runtime.tasks[0]!;
    expect(task.options.prompt).toBe('Look at @README.md and @notes.txt');
    expect(task.options.attachments?.map((a) => a.label)).toEqual(['notes.txt']);
  });
});
