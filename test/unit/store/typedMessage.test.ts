import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTimeline } from '../../../src/core/checkpoints/timeline';
import { replayTask } from '../../../src/core/replay/replayTask';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { exportMarkdown } from '../../../src/core/store/exportTask';
import { TaskStore } from '../../../src/core/store/taskStore';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { TaskTranscript } from '../../../src/shared/domain/transcript';
import { applyTaskEvent, emptyTranscript } from '../../../src/shared/domain/transcript';
import { CountingModel } from '../helpers/countingModel';
import { lineEnds } from './snapshotLogs';

/**
 * A message the person typed as `/review a.ts` is sent as its command's text, and kept as typed:
 * the model reads only the expansion; the live transcript, the log read back (with and without
 * snapshots), a replay, a resumed task, the task's title, a rewind's steps and an export all have
 * the typed line with what it sent.
 */
const PROVIDER = { provider: 'anthropic' as const, model: 'claude-sonnet-5-5', apiKey: 'k' };
const FIRST = 'Review a.ts carefully and list what is wrong.';
const QUEUED = 'Review b.ts carefully and list what is wrong.';
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
});

function dirs() {
  const storageDir = mkdtempSync(join(tmpdir(), 'keel-typed-'));
  const workspace = mkdtempSync(join(tmpdir(), 'keel-typed-ws-'));
  cleanup.push(() => rmSync(storageDir, { recursive: true, force: true }), () => rmSync(workspace, { recursive: true, force: true }));
  return { storageDir, workspace };
}

const users = (t: TaskTranscript) => t.items.flatMap((i) => (i.kind === 'user' ? [{ text: i.text, typed: i.typed }] : []));
/** Every text block the model was sent, across its requests. */
const sentTexts = (model: CountingModel) => model.requests.flat().flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])));

describe('a command message keeps what the person typed', () => {
  it('sent as its expansion, shown as typed: live, from the log, from snapshots, in a replay, a resume, the title, the steps and an export', async () => {
    const { storageDir, workspace } = dirs();
    const model = new CountingModel();
    const runtime = new TaskRuntime({ workspace, storageDir, ownerLabel: 'test', providerFactory: () => model });
    cleanup.push(() => runtime.dispose());

    const task = runtime.startTask({ prompt: FIRST, typed: '/review a.ts', provider: PROVIDER });
    const events: TaskEvent[] = [];
    task.subscribe((e) => events.push(e));
    await model.requestsSeen(1);
    // Queued while the run works: shown (and given back) as typed; a message typed as sent has no `typed`.
    task.sendUserMessage(QUEUED, { typed: '/review b.ts' });
    task.sendUserMessage('and be brief', { typed: 'and be brief' });
    expect(task.transcript().queued?.map((q) => q.typed)).toEqual(['/review b.ts', undefined]);
    model.answer('a.ts is fine.');
    await model.requestsSeen(2);
    model.answer('b.ts is fine.');
    expect((await task.settled()).status).toBe('completed');
    await task.recorded?.();

    // The model read the expansions, never a typed line.
    expect(sentTexts(model)).toEqual(expect.arrayContaining([FIRST, QUEUED, 'and be brief']));
    expect(sentTexts(model).some((t) => t.includes('/review'))).toBe(false);

    const want = [
      { text: FIRST, typed: '/review a.ts' },
      { text: QUEUED, typed: '/review b.ts' },
      { text: 'and be brief', typed: undefined },
    ];
    expect(users(task.transcript())).toEqual(want);
    expect(task.transcript().title).toBe('/review a.ts');
    expect(events.find((e) => e.type === 'user_message')).toMatchObject({ text: FIRST, typed: '/review a.ts' });
    expect(events.filter((e) => e.type === 'user_message').at(-1)).not.toHaveProperty('typed');
    // The events fold into the same items in a view (applyTaskEvent) as in the store.
    expect(users(events.reduce(applyTaskEvent, emptyTranscript(task.id, '', 'm')))).toEqual(want);

    // Read back from the log, and from a snapshot plus the log after it.
    expect(users((await new TaskStore(storageDir, { snapshots: false }).load(task.id)).replay.transcript)).toEqual(want);
    const snapshotting = new TaskStore(storageDir);
    const ends = lineEnds(storageDir, task.id);
    expect(await snapshotting.snapshotsOf(task.id).save(ends[Math.floor(ends.length / 2)]!, () => ({ title: '/review a.ts', model: PROVIDER.model }))).not.toBeNull();
    const restored = await snapshotting.load(task.id);
    expect(users(restored.replay.transcript)).toEqual(want);
    expect(restored.meta.title).toBe('/review a.ts');

    // A replay sends the same messages, typed lines included: no difference.
    const replayed = await replayTask(runtime.store!, task.id, { idleMs: 5_000 });
    expect(replayed.divergence).toBeNull();

    // Rewinding names the message, and gives it back, as typed.
    const steps = (await readTimeline(runtime.store!.taskDir(task.id))).steps.filter((s) => s.kind === 'message');
    expect(steps.map((s) => [s.label, s.text])).toEqual([
      ['/review a.ts', '/review a.ts'],
      ['/review b.ts', '/review b.ts'],
      ['and be brief', 'and be brief'],
    ]);

    // An export shows the typed line with what it sent folded under it.
    const md = exportMarkdown(await runtime.store!.load(task.id));
    expect(md).toContain(`/review a.ts\n\n<details><summary>What it sent</summary>\n\n${FIRST}\n\n</details>`);
    runtime.dispose();

    // Resumed in another process with a command as its follow-up: shown as typed there too.
    const model2 = new CountingModel();
    const next = new TaskRuntime({ workspace, storageDir, ownerLabel: 'test2', providerFactory: () => model2 });
    cleanup.push(() => next.dispose());
    const resumed = await next.resume(task.id, { provider: PROVIDER, followUp: 'Review c.ts carefully.', typed: '/review c.ts' });
    await model2.requestsSeen(1);
    model2.answer('c.ts is fine.');
    await resumed.settled();
    await resumed.recorded?.();
    expect(users(resumed.transcript()).at(-1)).toEqual({ text: 'Review c.ts carefully.', typed: '/review c.ts' });
    expect(sentTexts(model2).some((t) => t.includes('/review'))).toBe(false);
    next.dispose();
    expect(users((await new TaskStore(storageDir, { snapshots: false }).load(task.id)).replay.transcript).at(-1)).toEqual({ text: 'Review c.ts carefully.', typed: '/review c.ts' });
  });
});
