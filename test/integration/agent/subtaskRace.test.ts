import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { changesOf, eventually, settled as settledTurns } from '../../unit/helpers/changes';
import { MiniHost } from './miniHost';

/**
 * The race this design exists to prevent: a subtask finishes while the user navigates away and
 * back and the parent task is rebuilt. The parent must continue exactly once, with the child's
 * answer in its next request exactly once, and never two requests at a time.
 */
let server: FakeModelServer;
beforeEach(async () => {
  server = await startFakeModelServer();
  server.enqueue(
    { blocks: [{ type: 'tool_use', id: 'toolu_k1', name: 'Task', input: { description: 'count', prompt: 'count the files' } }] },
    { blocks: [{ type: 'text', text: 'child answer: 3 files' }] },
    { blocks: [{ type: 'text', text: 'parent done' }] },
  );
});
afterEach(async () => {
  await server.close();
});

type Body = { messages: { role: string; content: string | { type: string; tool_use_id?: string; content?: unknown }[] }[] };
const bodiesOf = (taskId: string) => server.requests.filter((r) => r.taskId === taskId).map((r) => r.body as Body);
const resultsFor = (body: Body, id: string) => body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).filter((b) => b.type === 'tool_result' && b.tool_use_id === id);
const settled = (host: MiniHost, id: string) => ['completed', 'awaitingUser', 'aborted', 'failed'].includes(host.settledAs(id) ?? '');

async function runRace(rebuild: boolean) {
  const host = new MiniHost(server.url);
  const parent = host.start('delegate the counting');
  const seen: TaskEvent[] = [];
  let detach = host.attachView(parent, (e) => seen.push(e));
  host.onChildDone = () => {
    // The child has just finished; its result has not reached the parent yet. The user
    // navigates away (the view detaches), the parent is rebuilt, the user comes back.
    detach();
    if (rebuild) host.rebuild(parent, 'The task was reloaded; continue.');
    detach = host.attachView(parent, (e) => seen.push(e));
  };
  try {
    await host.changes.until(() => host.log(parent).some((e) => e.type === 'task' && e.state === 'waitingForSubtask'), () => host.state(parent));
    await eventually(() => settled(host, parent) && server.requests.length >= 3, () => `${host.state(parent)}; ${server.requests.length} requests`, host.changes, changesOf(server));
    await settledTurns(); // anything late would show up now
    return { host, parent, seen };
  } finally {
    host.stopAll();
  }
}

describe('a subtask finishing while the user navigates away and back', () => {
  it('without a rebuild: the parent continues once, with the child answer once', async () => {
    const { host, parent } = await runRace(false);
    expect(host.settledAs(parent)).toBe('completed');
    const parentBodies = bodiesOf(parent);
    expect(parentBodies).toHaveLength(2);
    const results = resultsFor(parentBodies[1]!, 'toolu_k1');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_k1', content: 'child answer: 3 files' });
    for (const n of server.maxConcurrentByTask().values()) expect(n).toBe(1);
  });

  // This test first exposed a duplicate-key bug (fixed in turn.machine.ts: the rebuilt actor's
  // first request reused its predecessor's continuation key) and then that a rebuilt parent did
  // not re-attach to the subtask it was waiting for (fixed: the turn adopts unanswered Task calls
  // and the subtask runner, keyed by parent and tool call, hands back the same child).
  it('with the parent rebuilt: it continues exactly once, with the child answer exactly once, never two requests at a time', async () => {
    const { host, parent } = await runRace(true);
    const parentBodies = bodiesOf(parent);
    for (const n of server.maxConcurrentByTask().values()) expect(n).toBe(1);
    expect(host.settledAs(parent)).toBe('completed');
    expect(parentBodies).toHaveLength(2);
    const results = resultsFor(parentBodies[1]!, 'toolu_k1');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ content: 'child answer: 3 files' });
  });
});
