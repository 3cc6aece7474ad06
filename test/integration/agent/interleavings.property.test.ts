import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/core/workers/pool';
import { workerCommandBeside } from '../../../src/core/workers/spawnWorker';
import { cliBundle } from '../cli/cliHarness';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { PermissionAsker } from '../../../src/core/permissions/gate';
import { startFakeModelServer, type FakeTurn } from '../../fixtures/fake-model-server';
import { MiniHost } from './miniHost';

/**
 * Random interleavings of what users and the world do to a task — a user message, cancel,
 * navigating away and back, a subtask finishing, resume/retry, provider errors before and in the
 * middle of a stream, permission answers — against the real Anthropic provider and the fake
 * model server. Invariants: at most one request in flight per task; every request a well-formed,
 * role-alternating conversation whose tool results answer the previous tool calls exactly once
 * and that extends the task's previous request; every task settles in a defined state.
 * Actions fire after a given number of task events (not after a time), so a failing case replays
 * from its seed.
 */
type Action = { kind: 'user' | 'cancel' | 'away' | 'back' | 'retry' | 'resume'; afterEvents: number };

const turnArb: fc.Arbitrary<FakeTurn> = fc.oneof(
  fc.constant<FakeTurn>({ blocks: [{ type: 'text', text: 'An answer in a few words.' }], chunkSize: 4 }),
  fc.constant<FakeTurn>({ blocks: [{ type: 'text', text: 'Running it.' }, { type: 'tool_use', name: 'Bash', input: { command: 'echo hi' } }] }),
  fc.constant<FakeTurn>({ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: 'missing.txt' } }] }),
  fc.constant<FakeTurn>({ blocks: [{ type: 'tool_use', name: 'Task', input: { description: 'sub', prompt: 'answer briefly' } }] }),
  fc.constant<FakeTurn>({ blocks: [{ type: 'text', text: 'this will break off mid-way' }], fault: { kind: 'midstream-error', afterEvents: 4 } }),
  fc.constant<FakeTurn>({ blocks: [], fault: { kind: 'http', status: 529 } }),
  fc.constant<FakeTurn>({ blocks: [{ type: 'text', text: 'slow answer, slowly' }], chunkSize: 2, delayMs: 1 }),
);
const actionArb: fc.Arbitrary<Action> = fc.record({ kind: fc.constantFrom<Action['kind']>('user', 'cancel', 'away', 'back', 'retry', 'resume'), afterEvents: fc.integer({ min: 0, max: 25 }) });

type Block = { type: string; id?: string; tool_use_id?: string; cache_control?: unknown };
type Msg = { role: 'user' | 'assistant'; content: string | Block[] };
const strip = (m: Msg): Msg => ({ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map(({ cache_control: _c, ...b }) => b) });

function checkConversation(messages: Msg[]): string | null {
  const seenUses = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== (i % 2 === 0 ? 'user' : 'assistant')) return `message ${i} has role ${m.role}: roles must alternate from user`;
    const blocks = typeof m.content === 'string' ? [] : m.content;
    for (const b of blocks) if (b.type === 'tool_use') {
      if (seenUses.has(b.id!)) return `tool_use ${b.id} appears twice`;
      seenUses.add(b.id!);
    }
    const prev = messages[i - 1];
    const uses = prev && typeof prev.content !== 'string' ? prev.content.filter((b) => b.type === 'tool_use').map((b) => b.id!) : [];
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id!);
    if (m.role === 'user' && JSON.stringify([...results].sort()) !== JSON.stringify([...uses].sort())) return `message ${i} answers ${results.join(',')} but the calls were ${uses.join(',')}`;
  }
  return null;
}

// In this process, and on real worker processes (the runtime's default: docs/workers.md, "One default").
describe.each([
  ['in process', false],
  ['on workers', true],
] as const)('random interleavings against the fake model server (%s)', (_where, onWorkers) => {
  let pool: WorkerPool | null = null;
  beforeAll(async () => {
    if (onWorkers) pool = new WorkerPool({ command: workerCommandBeside(dirname(await cliBundle()), join), max: 4, healthIntervalMs: 600_000 });
  }, 120_000);
  afterAll(async () => {
    await pool?.shutdown();
  });
  it('keep one request per task in flight, a well-formed conversation, and a defined end', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(turnArb, { minLength: 1, maxLength: 6 }), fc.array(actionArb, { maxLength: 6 }), fc.array(fc.boolean(), { maxLength: 4 }), async (turns, actions, answers) => {
        const server = await startFakeModelServer({ fallback: { blocks: [{ type: 'text', text: 'Done.' }] } });
        server.enqueue(...turns);
        const queue = answers.slice();
        const asker: PermissionAsker = { ask: async () => ({ decision: queue.shift() ? 'allow' : 'deny' }) };
        const host = new MiniHost(server.url, asker, 'default', pool);
        try {
          const id = host.start('do the thing');
          let events = 0;
          host.attachView(id, () => events++);
          let detach: (() => void) | null = host.attachView(id, (_e: TaskEvent) => undefined);
          for (const a of actions) {
            const target = events + a.afterEvents;
            await host.changes.until(() => events >= target || settledAll(host));
            if (a.kind === 'user') host.send(id, { type: 'USER_MESSAGE', text: 'and one more thing' });
            else if (a.kind === 'cancel') host.send(id, { type: 'CANCEL' });
            else if (a.kind === 'retry') host.send(id, { type: 'RETRY' });
            else if (a.kind === 'resume') host.send(id, { type: 'RESUME', note: 'resumed' });
            else if (a.kind === 'away') {
              detach?.();
              detach = null;
            } else if (!detach) detach = host.attachView(id, () => undefined);
          }
          await host.changes.until(() => settledAll(host), () => [...host.actors.keys()].map((k) => `${k}=${host.state(k)}`).join(' '));
          for (const [task, n] of server.maxConcurrentByTask()) expect(n, `requests in flight at once for ${task}`).toBe(1);
          const byTask = new Map<string, Msg[][]>();
          for (const r of server.requests) {
            const msgs = ((r.body as { messages: Msg[] }).messages ?? []).map(strip);
            expect(checkConversation(msgs), JSON.stringify(msgs)).toBeNull();
            const list = byTask.get(r.taskId ?? '') ?? [];
            const prev = list.at(-1);
            // Each request extends the previous one of its task (its last message may grow).
            if (prev) expect(msgs.slice(0, prev.length - 1), 'a request that rewrites the conversation').toEqual(prev.slice(0, prev.length - 1));
            list.push(msgs);
            byTask.set(r.taskId ?? '', list);
          }
        } finally {
          host.stopAll();
          await server.close();
        }
      }),
      { numRuns: 40, endOnFailure: true },
    );
    // The workers' run really ran its turns on worker processes.
    if (pool) expect(pool.status().stats.spawned).toBeGreaterThan(0);
  }, 120_000);
});

function settledAll(host: MiniHost): boolean {
  return [...host.actors.keys()].every((k) => ['completed', 'awaitingUser', 'aborted', 'failed'].includes(host.settledAs(k) ?? ''));
}
