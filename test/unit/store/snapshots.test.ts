import fc from 'fast-check';
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/core/store/taskStore';
import { runningChecksum, type ChecksumKind } from '../../../src/core/store/checksum';
import { SNAPSHOT_DIR } from '../../../src/core/store/snapshotFile';
import { tempStore } from './helpers';
import { lineEnds, recordTask, T, taskLog } from './snapshotLogs';

const snapDir = (root: string) => join(root, 'tasks', T, SNAPSHOT_DIR);
const snapNames = (root: string) => {
  try {
    return readdirSync(snapDir(root)).sort();
  } catch {
    return [];
  }
};

/** What a full replay of the log gives: the store with snapshots turned off. */
async function fullReplay(root: string) {
  return (await new TaskStore(root, { snapshots: false }).load(T)).replay;
}

describe('snapshots of a task log', () => {
  it('restore from any snapshot plus the log after it equals the full replay (property)', async () => {
    await fc.assert(
      fc.asyncProperty(taskLog, fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), async (events, picks) => {
        const { root, store } = tempStore();
        try {
          await recordTask(new TaskStore(root, { snapshots: false }), events);
          const ends = lineEnds(root);
          const full = await fullReplay(root);
          const offsets = [...new Set(picks.map((p) => ends[p % ends.length]!))].sort((a, b) => a - b);
          const manager = store.snapshotsOf(T);
          // Each later snapshot is built on the earlier ones (save restores first), as a live driver's are.
          for (const at of offsets) await manager.save(at, () => ({ title: 'snapshot test', model: 'claude-a' }));
          const written = snapNames(root);
          expect(written.length).toBe(Math.min(3, offsets.filter((o) => o > 0).length));
          for (const name of written) {
            // Only this snapshot present: the restore must start from it.
            for (const other of written) if (other !== name) rmSync(join(snapDir(root), other), { force: true });
            const restored = await store.snapshotsOf(T).restore(() => ({ title: 'snapshot test', model: 'claude-a' }));
            expect(restored.snapshot?.logOffset).toBe(Number(name.slice(0, 16)));
            expect((await store.load(T)).replay).toEqual(full);
            // Put the others back for the next round.
            for (const at of offsets) await manager.save(at, () => ({ title: 'snapshot test', model: 'claude-a' }));
          }
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('a driver writes snapshots every K events at quiescent points and keeps the newest N', async () => {
    const { root } = tempStore();
    try {
      const store = new TaskStore(root, { snapshots: { every: 10, keep: 2 } });
      const rec = store.create({ id: T, title: 't', model: 'm', workspace: '/ws', owner: 'test' });
      for (let turn = 0; turn < 12; turn++) {
        rec.record({ type: 'turn', taskId: T, state: 'checkingContext', turn });
        rec.record({ type: 'assistant_start', taskId: T, messageId: `m${turn}`, model: 'm' });
        for (let k = 0; k < 4; k++) rec.record({ type: 'stream', taskId: T, mode: 'responding' });
        rec.record({ type: 'text', taskId: T, delta: `answer ${turn}` });
        rec.record({ type: 'message', taskId: T, message: { role: 'assistant', content: [{ type: 'text', text: `answer ${turn}` }] } });
        await rec.snapshotWritten();
      }
      rec.record({ type: 'done', taskId: T, status: 'completed', stopReason: 'end_turn' });
      await rec.snapshotWritten();
      await rec.close();
      const names = snapNames(root);
      expect(names).toHaveLength(2);
      // Each one ends where a quiescent event's line ends.
      const log = readFileSync(join(root, 'tasks', T, 'events.jsonl'), 'utf8');
      for (const n of names) {
        const at = Number(n.slice(0, 16));
        const lastLine = log.slice(0, at).trimEnd().split('\n').pop()!;
        expect(lastLine).toMatch(/"type":"(turn","taskId":"snap-task","state":"checkingContext|done)"/);
      }
      expect((await store.load(T)).replay).toEqual(await fullReplay(root));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** A snapshot file's head and its body's frames (snapshotBody.ts: a 4-byte length, then a V8-serialized value). */
function snapshotParts(path: string): { head: Record<string, unknown>; frames: unknown[] } {
  const b = readFileSync(path);
  const nl = b.indexOf(10);
  const frames: unknown[] = [];
  for (let at = nl + 1; at < b.length; ) {
    const length = b.readUInt32LE(at);
    frames.push(deserialize(b.subarray(at + 4, at + 4 + length)));
    at += 4 + length;
  }
  return { head: JSON.parse(b.toString('utf8', 0, nl)) as Record<string, unknown>, frames };
}

function writeSnapshotParts(path: string, head: Record<string, unknown>, frames: unknown[]): void {
  const body = Buffer.concat(
    frames.flatMap((f) => {
      const data = serialize(f);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(data.length);
      return [length, data];
    }),
  );
  const sum = runningChecksum(head.checksum as ChecksumKind);
  sum.update(body);
  writeFileSync(path, Buffer.concat([Buffer.from(`${JSON.stringify({ ...head, bodyBytes: body.length, bodyChecksum: sum.digest() })}\n`), body]));
}

describe('the snapshot body', () => {
  const rounds = Array.from({ length: 6 }, (_, i) => [
    { type: 'tool_call' as const, taskId: T, id: `toolu_${i}`, name: 'Read', input: { i } },
    { type: 'tool_result' as const, taskId: T, id: `toolu_${i}`, is_error: false, summary: `read ${i}` },
  ]).flat();
  const seed = () => ({ title: 'snapshot test', model: 'claude-a' });

  it('holds the transcript items but no index of their tool calls (the items say it: since format 3)', async () => {
    const { root, store } = tempStore();
    try {
      await recordTask(new TaskStore(root, { snapshots: false }), rounds);
      const ends = lineEnds(root);
      await store.snapshotsOf(T).save(ends[ends.length - 1]!, seed);
      const { head, frames } = snapshotParts(join(snapDir(root), snapNames(root)[0]!));
      expect(head.format).toBe(4);
      const core = frames[0] as { transcript: Record<string, unknown>; itemCount: number };
      expect(core.itemCount).toBeGreaterThanOrEqual(6);
      expect(Object.keys(core.transcript)).not.toContain('toolIndex');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("of an older Keel's rules (format 3) is passed over: the log is folded again, and a retried attempt reads retried, not interrupted", async () => {
    const { root, store, logs } = tempStore();
    try {
      const retried = [
        { type: 'assistant_start' as const, taskId: T, messageId: 'msg_1', model: 'claude-a' },
        { type: 'text' as const, taskId: T, delta: 'The first words, then a long silence' },
        { type: 'retry' as const, taskId: T, attempt: 1, delayMs: 1000, code: 'stream_stalled' as const, message: 'Anthropic sent no part of the answer for 2 s.' },
        { type: 'assistant_start' as const, taskId: T, messageId: 'msg_2', model: 'claude-a' },
        { type: 'text' as const, taskId: T, delta: 'Answered on the retry.' },
        { type: 'done' as const, taskId: T, status: 'completed' as const, stopReason: null },
      ];
      await recordTask(new TaskStore(root, { snapshots: false }), [...rounds, ...retried]);
      const ends = lineEnds(root);
      const at = ends[ends.length - 1]!;
      await store.snapshotsOf(T).save(at, seed);
      const path = join(snapDir(root), snapNames(root)[0]!);
      const { head, frames } = snapshotParts(path);
      expect(head.format).toBe(4);
      // What the previous Keel wrote: the same log folded by its rules, the retried attempt read as interrupted.
      const older = frames.map((f) => deserialize(serialize(f)) as unknown);
      const asOlder = JSON.parse(JSON.stringify(older).replaceAll('"retried":true', '"interrupted":true')) as unknown[];
      expect(JSON.stringify(asOlder)).toContain('"interrupted":true');
      writeSnapshotParts(path, { ...head, format: 3 }, asOlder);
      const restored = await store.snapshotsOf(T).restore(seed);
      expect(restored.snapshot).toBeNull();
      expect(logs.some((l) => l.startsWith('warn') && /format 3/.test(l)), logs.join('\n')).toBe(true);
      const { replay } = await store.load(T);
      expect(replay).toEqual(await fullReplay(root));
      const answers = replay.transcript.items.filter((i) => i.kind === 'assistant');
      expect(answers.map((i) => ('retried' in i && i.retried ? 'retried' : 'interrupted' in i && i.interrupted ? 'interrupted' : 'whole'))).toEqual(['retried', 'whole']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a damaged snapshot', () => {
  const events = [
    ...Array.from({ length: 30 }, (_, i) => ({ type: 'message' as const, taskId: T, message: { role: 'user' as const, content: [{ type: 'text' as const, text: `message ${i} ${'x'.repeat(200)}` }] } })),
    { type: 'done' as const, taskId: T, status: 'completed' as const, stopReason: null },
  ];

  /** A task with two snapshots (at line 10 and line 20); returns the newest's path. */
  async function twoSnapshots() {
    const t = tempStore();
    await recordTask(new TaskStore(t.root, { snapshots: false }), events);
    const ends = lineEnds(t.root);
    for (const at of [ends[9]!, ends[19]!]) await t.store.snapshotsOf(T).save(at, () => ({ title: 'snapshot test', model: 'claude-a' }));
    const [older, newest] = snapNames(t.root);
    return { ...t, older: join(snapDir(t.root), older!), newest: join(snapDir(t.root), newest!), ends };
  }

  const damages: [string, (path: string, root: string, older: boolean) => void, RegExp][] = [
    ['truncated', (p) => truncateSync(p, Math.floor(readFileSync(p).length / 2)), /truncated/],
    ['with a bad checksum', (p) => {
      const b = readFileSync(p);
      const i = b.lastIndexOf('message 1');
      b[i] = 'M'.charCodeAt(0);
      writeFileSync(p, b);
    }, /checksum/],
    ['of another format version', (p) => writeFileSync(p, readFileSync(p, 'utf8').replace('"format":4', '"format":5')), /format 5/],
    ['of another log schema version', (p) => writeFileSync(p, readFileSync(p, 'utf8').replace('"schemaVersion":1', '"schemaVersion":7')), /log schema 7/],
    ['that refers past the end of the log', (_p, root, older) => {
      // Power loss took the log's last lines (line 15 on; then line 5 on), not the snapshot.
      truncateSync(join(root, 'tasks', T, 'events.jsonl'), lineEnds(root)[older ? 4 : 14]!);
    }, /past the end/],
    ['of a log that was rewritten', (_p, root) => {
      const path = join(root, 'tasks', T, 'events.jsonl');
      writeFileSync(path, readFileSync(path, 'utf8').replace('message 3 ', 'massage 3 '));
    }, /rewritten/],
  ];

  for (const [what, damage, reason] of damages) {
    it(`${what}: falls back to the previous one, then to the whole log, with a warning`, async () => {
      const { root, store, logs, newest, older } = await twoSnapshots();
      try {
        damage(newest, root, false);
        const expected = await fullReplay(root);
        const first = await store.snapshotsOf(T).restore(() => ({ title: 'snapshot test', model: 'claude-a' }));
        const restoredFrom = first.snapshot?.logOffset;
        expect((await store.load(T)).replay).toEqual(expected);
        expect(logs.some((l) => l.startsWith('warn') && reason.test(l)), logs.join('\n')).toBe(true);
        if (what.includes('rewritten')) {
          // Both snapshots folded the old prefix: neither may be used.
          expect(restoredFrom).toBeUndefined();
          return;
        }
        if (!what.includes('past the end')) expect(restoredFrom).toBe(Number(older.split('/').pop()!.slice(0, 16)));
        // Now the older one is damaged too: the whole log, with a warning for it.
        damage(older, root, true);
        logs.length = 0;
        const second = await store.snapshotsOf(T).restore(() => ({ title: 'snapshot test', model: 'claude-a' }));
        expect(second.snapshot).toBeNull();
        expect((await store.load(T)).replay).toEqual(await fullReplay(root));
        expect(logs.filter((l) => l.startsWith('warn') && /snapshot/.test(l)).length).toBeGreaterThanOrEqual(2);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }

  it('of a log edited inside its prefix without changing its length: passed over, wherever the edit is', async () => {
    // A log long enough that no sample of it could cover every byte (60 KB before the snapshot).
    const many = [
      ...Array.from({ length: 240 }, (_, i) => ({ type: 'message' as const, taskId: T, message: { role: 'user' as const, content: [{ type: 'text' as const, text: `message ${i} ${'x'.repeat(200)}` }] } })),
      { type: 'done' as const, taskId: T, status: 'completed' as const, stopReason: null },
    ];
    const path = (root: string) => join(root, 'tasks', T, 'events.jsonl');
    const seed = () => ({ title: 'snapshot test', model: 'claude-a' });
    for (const where of [0.1, 0.37, 0.5, 0.83]) {
      const { root, store, logs } = tempStore();
      try {
        await recordTask(new TaskStore(root, { snapshots: false }), many);
        const ends = lineEnds(root);
        const at = ends[220]!;
        await store.snapshotsOf(T).save(at, seed);
        const log = readFileSync(path(root));
        // One `x` of the padding becomes a `y`: same length, same lines, another conversation.
        const i = log.indexOf('x', Math.floor(at * where));
        log[i] = 'y'.charCodeAt(0);
        writeFileSync(path(root), log);
        const restored = await store.snapshotsOf(T).restore(seed);
        expect(restored.snapshot, `an edit at byte ${i} of ${at}`).toBeNull();
        expect(logs.some((l) => l.startsWith('warn') && /does not match the log/.test(l))).toBe(true);
        expect((await store.load(T)).replay).toEqual(await fullReplay(root));
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }
  });

  it('is removed by the task\'s next driver, and never by a reader', async () => {
    const { root, store, newest } = await twoSnapshots();
    try {
      truncateSync(newest, 10);
      await store.load(T);
      expect(snapNames(root)).toHaveLength(2);
      const opened = await store.open(T, 'test');
      await opened.recorder.close();
      expect(snapNames(root)).toHaveLength(1);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
