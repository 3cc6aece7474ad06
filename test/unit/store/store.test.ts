import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLogWriter } from '../../../src/core/store/eventLog';
import { readLog } from '../../../src/core/store/logReader';
import { TaskStore } from '../../../src/core/store/taskStore';
import { StoreError, type LogRecord } from '../../../src/core/store/types';
import { completedTaskEvents, tempStore } from './helpers';

function newTask(store: TaskStore, id: string) {
  return store.create({ id, title: 'read a.txt', model: 'claude-x', workspace: '/ws', owner: 'test' });
}

describe('task store on real files', () => {
  it('records a task and lists it with meta figures', async () => {
    const { store } = tempStore();
    const rec = newTask(store, 'task-a');
    for (const e of completedTaskEvents('task-a')) rec.record(e);
    await rec.close();
    const { tasks, problems } = await store.list();
    expect(problems).toEqual([]);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ id: 'task-a', title: 'read a.txt', status: 'completed', tokens: 245, costUsd: 0.03, workspace: '/ws' });
    const loaded = await store.load('task-a');
    expect(loaded.replay.conversation.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(loaded.replay.transcript.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('merges streamed deltas into one line and writes them within the flush interval', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store, 'task-d');
    for (let i = 0; i < 50; i++) rec.record({ type: 'text', taskId: 'task-d', delta: `${i} ` });
    const path = join(root, 'tasks', 'task-d', 'events.jsonl');
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(1); // just the header, so far
    await new Promise((r) => setTimeout(r, 400));
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect((JSON.parse(lines[1]!) as LogRecord).event).toMatchObject({ type: 'text', delta: Array.from({ length: 50 }, (_, i) => `${i} `).join('') });
    await rec.close();
  });

  it('drops a torn last line with a log entry, keeps every earlier event, and appends cleanly after it', async () => {
    const { root, store, logs } = tempStore();
    const rec = newTask(store, 'task-t');
    const events = completedTaskEvents('task-t').slice(0, 13); // up to the tool results, no answer yet
    for (const e of events) rec.record(e);
    await rec.close();
    const path = join(root, 'tasks', 'task-t', 'events.jsonl');
    // A crash in the middle of writing the next line.
    appendFileSync(path, '{"at":1,"event":{"type":"assistant_start","taskId":"task-t","messageId":"m2","mo');
    const opened = await store.open('task-t', 'test');
    expect(logs.some((l) => l.startsWith('warn') && l.includes('torn last line'))).toBe(true);
    expect(opened.replay.events).toBe(events.length);
    expect(opened.replay.conversation).toHaveLength(3);
    opened.recorder.record({ type: 'task', taskId: 'task-t', state: 'completed', title: 'read a.txt' });
    await opened.recorder.close();
    const again = await store.load('task-t');
    expect(again.log.torn).toBeNull();
    expect(again.replay.events).toBe(events.length + 1);
    expect(again.replay.status).toBe('completed');
  });

  it('keeps a complete last line that lost only its newline', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store, 'task-n');
    for (const e of completedTaskEvents('task-n')) rec.record(e);
    await rec.close();
    const path = join(root, 'tasks', 'task-n', 'events.jsonl');
    truncateSync(path, statSync(path).size - 1);
    const opened = await store.open('task-n', 'test');
    expect(opened.replay.status).toBe('completed');
    opened.recorder.record({ type: 'turn', taskId: 'task-n', state: 'done', turn: 3 });
    await opened.recorder.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(() => lines.map((l) => JSON.parse(l) as unknown)).not.toThrow();
  });

  it('quarantines a task whose log is corrupt in the middle, and still lists the others', async () => {
    const { root, store } = tempStore();
    for (const id of ['good-1', 'bad-1', 'good-2']) {
      const rec = newTask(store, id);
      for (const e of completedTaskEvents(id)) rec.record(e);
      await rec.close();
    }
    const path = join(root, 'tasks', 'bad-1', 'events.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[4] = '{"at":1,"event":{garbage';
    writeFileSync(path, lines.join('\n'));
    writeFileSync(join(root, 'tasks', 'bad-1', 'meta.json'), 'not json at all');
    const { tasks, problems } = await store.list();
    expect(tasks.map((t) => t.id).sort()).toEqual(['good-1', 'good-2']);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(/could not be read .* moved to .*quarantine/);
    expect(existsSync(join(root, 'tasks', 'bad-1'))).toBe(false);
    const q = readdirSync(join(root, 'quarantine'));
    expect(q).toHaveLength(1);
    expect(readFileSync(join(root, 'quarantine', q[0]!, 'QUARANTINED.txt'), 'utf8')).toContain('unreadable line');
    await expect(store.load('bad-1')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('quarantines on load when the log is corrupt but meta is fine', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store, 'bad-2');
    for (const e of completedTaskEvents('bad-2')) rec.record(e);
    await rec.close();
    writeFileSync(join(root, 'tasks', 'bad-2', 'events.jsonl'), 'this is not a Keel log\n{"at":1}\n');
    const err = await store.load('bad-2').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('corrupt');
    expect((err as StoreError).message).toContain('quarantine');
  });

  it('rebuilds a damaged meta.json from the log', async () => {
    const { root, store, logs } = tempStore();
    const rec = newTask(store, 'meta-x');
    for (const e of completedTaskEvents('meta-x')) rec.record(e);
    await rec.close();
    writeFileSync(join(root, 'tasks', 'meta-x', 'meta.json'), '{"schemaVersion":1,"id":');
    const { tasks } = await store.list();
    expect(tasks[0]).toMatchObject({ id: 'meta-x', title: 'read a.txt', status: 'completed', tokens: 245 });
    expect(logs.some((l) => l.includes('rebuilt it from the log'))).toBe(true);
    expect(JSON.parse(readFileSync(join(root, 'tasks', 'meta-x', 'meta.json'), 'utf8'))).toMatchObject({ id: 'meta-x', status: 'completed' });
  });

  it('rebuilds a missing or corrupt index by scanning, and notices meta changes behind its back', async () => {
    const { root, store } = tempStore();
    for (const id of ['i-1', 'i-2']) {
      const rec = newTask(store, id);
      for (const e of completedTaskEvents(id)) rec.record(e);
      await rec.close();
    }
    expect((await store.list()).tasks).toHaveLength(2);
    writeFileSync(join(root, 'index.json'), '{"schemaVersion":1,"tasks":');
    expect((await store.list()).tasks.map((t) => t.id).sort()).toEqual(['i-1', 'i-2']);
    expect(JSON.parse(readFileSync(join(root, 'index.json'), 'utf8'))).toHaveProperty('tasks.i-1');
    // Another process renames a task: its meta changes, the index follows.
    const metaPath = join(root, 'tasks', 'i-2', 'meta.json');
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(metaPath, JSON.stringify({ ...meta, title: 'renamed elsewhere' }));
    expect((await store.list()).tasks.find((t) => t.id === 'i-2')!.title).toBe('renamed elsewhere');
  });

  it('reports a running task with no live lock as interrupted, and one held by this process as running', async () => {
    const { store } = tempStore();
    const rec = newTask(store, 'run-1');
    rec.record({ type: 'task', taskId: 'run-1', state: 'running', title: 'read a.txt' });
    expect((await store.list()).tasks[0]!.status).toBe('running');
    // The process "dies": the lock goes away without the status being updated.
    (rec as unknown as { lock: { release(): void } }).lock.release();
    expect((await store.list()).tasks[0]!.status).toBe('interrupted');
    await rec.close();
  });

  it('refuses to open or delete a task another live holder has, and takes over a stale one', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store, 'lock-1');
    rec.record({ type: 'task', taskId: 'lock-1', state: 'running', title: 'read a.txt' });
    // A second store in this process is "another window": the lock is live (this pid is alive).
    const other = new TaskStore(root);
    await expect(other.open('lock-1', 'other window')).rejects.toMatchObject({ code: 'locked', message: expect.stringContaining('running in another window or process') });
    await expect(other.delete('lock-1')).rejects.toMatchObject({ code: 'locked' });
    // A dead owner (a pid that does not exist) makes the lock stale: takeover.
    writeFileSync(join(root, 'tasks', 'lock-1', 'lock.owner.json'), JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), since: 0 }));
    const opened = await other.open('lock-1', 'other window');
    expect(opened.replay.status).toBe('running');
    await opened.recorder.close();
    await other.delete('lock-1');
    expect(existsSync(join(root, 'tasks', 'lock-1'))).toBe(false);
  });

  it('resolves unique id prefixes and rejects ambiguous or unknown ones', async () => {
    const { store } = tempStore();
    await newTask(store, 'abcd1111').close();
    await newTask(store, 'abcd2222').close();
    expect(store.resolveId('abcd1')).toBe('abcd1111');
    expect(() => store.resolveId('abcd')).toThrow(/matches 2 tasks/);
    expect(() => store.resolveId('zzzz')).toThrow(StoreError);
  });
});

describe('event log writer and reader', () => {
  it('reads a log written in several chunks the same as it was written, yielding between slices', async () => {
    const { root } = tempStore();
    const path = join(root, 'big.jsonl');
    const w = EventLogWriter.create(path, { type: 'keel.task-log', schemaVersion: 1, taskId: 'big', createdAt: 1 });
    for (let i = 0; i < 5000; i++) w.append({ type: 'user_message', taskId: 'big', id: `u${i}`, text: `message ${i} ${'é'.repeat(i % 7)}` });
    await w.close();
    const seen: string[] = [];
    const r = await readLog(path, (rec) => seen.push((rec.event as { text: string }).text), { chunkBytes: 4096, sliceMs: 0 });
    expect(r.records).toBe(5000);
    expect(seen[4999]).toBe(`message 4999 ${'é'.repeat(4999 % 7)}`);
    expect(r.torn).toBeNull();
  });

  it('reads lines many chunks long (a long answer) whole, with their offsets, a long last line kept or a torn one dropped', async () => {
    const { root } = tempStore();
    const path = join(root, 'long.jsonl');
    const header = `${JSON.stringify({ type: 'keel.task-log', schemaVersion: 1, taskId: 'l', createdAt: 1 })}\n`;
    // Multi-byte characters so chunk boundaries fall inside characters; lines of 1 to ~40 chunks.
    const texts = ['short', 'é€'.repeat(30_000) + 'x'.repeat(1023), 'y'.repeat(4096 * 3), 'z', '€'.repeat(50_001)];
    const lines = texts.map((text, i) => `${JSON.stringify({ at: i, event: { type: 'text', taskId: 'l', delta: text } })}\n`);
    writeFileSync(path, header + lines.join(''));
    const bytes = statSync(path).size;
    const seen: string[] = [];
    const r = await readLog(path, (rec) => seen.push((rec.event as { delta: string }).delta), { chunkBytes: 4096, sliceMs: 0 });
    expect(seen).toEqual(texts);
    expect(r).toMatchObject({ records: texts.length, validBytes: bytes, missingNewline: false, torn: null });

    // Stopping at a line boundary (a snapshot's `until`) reads exactly the lines before it.
    const until = Buffer.byteLength(header + lines.slice(0, 3).join(''));
    const upTo: string[] = [];
    expect((await readLog(path, (rec) => upTo.push((rec.event as { delta: string }).delta), { chunkBytes: 4096, until })).validBytes).toBe(until);
    expect(upTo).toEqual(texts.slice(0, 3));

    // A long last line that lost only its newline is kept; one cut short is dropped, the rest kept.
    truncateSync(path, bytes - 1);
    expect(await readLog(path, () => undefined, { chunkBytes: 4096 })).toMatchObject({ records: texts.length, validBytes: bytes - 1, missingNewline: true, torn: null });
    truncateSync(path, bytes - 20_000);
    const cut = await readLog(path, () => undefined, { chunkBytes: 4096 });
    expect(cut).toMatchObject({ records: texts.length - 1, validBytes: until + Buffer.byteLength(lines[3]!), torn: { offset: until + Buffer.byteLength(lines[3]!) } });
  });

  it('applies the migration hook to lines of an older schema version', async () => {
    const { root } = tempStore();
    const path = join(root, 'old.jsonl');
    writeFileSync(path, `${JSON.stringify({ type: 'keel.task-log', schemaVersion: 1, taskId: 'o', createdAt: 1 })}\n${JSON.stringify({ when: 5, e: { type: 'turn', taskId: 'o', state: 'done', turn: 1 } })}\n`);
    const seen: LogRecord[] = [];
    // A pretend version 2 whose lines were { when, e } in version 1.
    const table = { 1: { record: (v: unknown) => ({ at: (v as { when: number }).when, event: (v as { e: unknown }).e }), meta: (v: unknown) => v } };
    const { migrator } = await import('../../../src/core/store/migrations');
    const up = migrator('record', 1, table, 2)!;
    expect(up({ when: 5, e: { type: 'x' } })).toEqual({ at: 5, event: { type: 'x' } });
    const r = await readLog(path, (rec) => seen.push(rec), { migrations: table, targetVersion: 2 });
    expect(r.torn).toBeNull();
    expect(seen).toEqual([{ at: 5, event: { type: 'turn', taskId: 'o', state: 'done', turn: 1 } }]);
    // Without the step, the old line is not a record: as the last line it is dropped, not misread.
    const plain = await readLog(path, () => undefined);
    expect(plain.records).toBe(0);
    expect(() => migrator('record', 3, table, 2)).toThrow(/cannot be read/);
  });
});
