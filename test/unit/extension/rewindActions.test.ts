import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { TaskHandle } from '../../../src/core/runtime/types';
import { RewindActions } from '../../../src/extension/rewindActions';
import type { ToWebviewPayload } from '../../../src/shared/protocol/toWebview';
import { ListProvider, textTurn, toolTurn } from '../helpers/scriptedEvents';
import { MemoryLogger } from './fakes';

/**
 * "Rewind to here" as the chat's host does it (rewindActions.ts) over a real runtime and store:
 * the preview names each file and opens its diff without writing; a file the person changed since
 * is kept unless they chose to overwrite it; the rewind puts the others back and shows the task
 * again from its log; a message step gives its text back to the composer.
 */
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

async function setup() {
  const ws = mkdtempSync(join(tmpdir(), 'keel-ra-ws-'));
  const storage = mkdtempSync(join(tmpdir(), 'keel-ra-st-'));
  writeFileSync(join(ws, 'a.txt'), 'a v1\n');
  writeFileSync(join(ws, 'b.txt'), 'b v1\n');
  const provider = new ListProvider([
    toolTurn('toolu_a', 'Write', { file_path: 'a.txt', content: 'a v2\n' }),
    toolTurn('toolu_b', 'Write', { file_path: 'b.txt', content: 'b v2\n' }),
    textTurn('done'),
  ]);
  const runtime = new TaskRuntime({ workspace: ws, storageDir: storage, providerFactory: () => provider, ownerLabel: 'test' });
  cleanups.push(
    () => runtime.dispose(),
    () => rmSync(ws, { recursive: true, force: true }),
    () => rmSync(storage, { recursive: true, force: true }),
  );
  let current: TaskHandle | undefined = runtime.startTask({ prompt: 'change a and b', provider: { provider: 'anthropic', model: 'claude-sonnet-5-5' }, mode: 'bypassPermissions' });
  await current.settled();
  const sent: ToWebviewPayload[] = [];
  const diffs: { path: string; before: string | null; after: string }[] = [];
  const reopened: string[] = [];
  const actions = new RewindActions({
    log: new MemoryLogger(),
    current: () => current,
    runtime: () => runtime,
    workbench: { openDiff: async (c) => void diffs.push({ path: c.path, before: c.before, after: c.after }) },
    broadcast: (p) => sent.push(p),
    // The chat would show the stored task; here it is only recorded.
    reopen: async (id) => {
      reopened.push(id);
      current = undefined;
    },
  });
  const userId = current.transcript().items.find((i) => i.kind === 'user')?.id ?? '';
  return { ws, actions, sent, diffs, reopened, userId, id: current.id, read: (p: string) => readFileSync(join(ws, p), 'utf8') };
}

const planOf = (sent: ToWebviewPayload[]) => {
  const p = sent.filter((m): m is Extract<ToWebviewPayload, { type: 'rewindPlan' }> => m.type === 'rewindPlan').at(-1)?.preview;
  if (!p) throw new Error('no preview was sent');
  return p;
};

describe('Rewind to here, from the chat', () => {
  it('previews (files and the first diff, nothing written), then rewinds, keeping a file the person changed', async () => {
    const s = await setup();
    await s.actions.preview('toolu_a');
    const plan = planOf(s.sent);
    expect(plan.files.map((f) => [f.path, f.action, f.conflict])).toEqual([
      ['a.txt', 'restore', false],
      ['b.txt', 'restore', false],
    ]);
    expect(s.diffs).toEqual([{ path: 'a.txt', before: 'a v2\n', after: 'a v1\n' }]);
    expect([s.read('a.txt'), s.read('b.txt')]).toEqual(['a v2\n', 'b v2\n']);

    // The person changes b.txt before applying: a conflict, kept by default.
    writeFileSync(join(s.ws, 'b.txt'), 'b mine\n');
    await s.actions.preview('toolu_a');
    const again = planOf(s.sent);
    expect(again.files.find((f) => f.path === 'b.txt')?.conflict).toBe(true);
    await s.actions.apply(again.previewId, 'both', []);
    expect([s.read('a.txt'), s.read('b.txt')]).toEqual(['a v1\n', 'b mine\n']);
    expect(s.reopened).toEqual([s.id]);
  });

  it('a conflicting file the person chose to overwrite is put back too', async () => {
    const s = await setup();
    writeFileSync(join(s.ws, 'a.txt'), 'a mine\n');
    await s.actions.preview('toolu_a');
    const plan = planOf(s.sent);
    expect(plan.files.find((f) => f.path === 'a.txt')?.conflict).toBe(true);
    await s.actions.apply(plan.previewId, 'files', ['a.txt']);
    expect([s.read('a.txt'), s.read('b.txt')]).toEqual(['a v1\n', 'b v1\n']);
  });

  it("to before the user message: every file back, and the message's text back in the composer", async () => {
    const s = await setup();
    await s.actions.preview(s.userId);
    const plan = planOf(s.sent);
    expect(plan.stepKind).toBe('message');
    expect(plan.conversationMessages).toBe(0);
    await s.actions.apply(plan.previewId, 'both', []);
    expect([s.read('a.txt'), s.read('b.txt')]).toEqual(['a v1\n', 'b v1\n']);
    expect(s.sent.at(-1)).toEqual({ type: 'composerText', text: 'change a and b' });
  });

  it('a preview replaced by another is refused, and nothing is written', async () => {
    const s = await setup();
    await s.actions.preview('toolu_a');
    const first = planOf(s.sent).previewId;
    await s.actions.preview('toolu_b');
    await s.actions.apply(first, 'both', []);
    expect(s.sent.at(-1)).toMatchObject({ type: 'notice', message: expect.stringContaining('no longer current') });
    expect([s.read('a.txt'), s.read('b.txt')]).toEqual(['a v2\n', 'b v2\n']);
  });
});
