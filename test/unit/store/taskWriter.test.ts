import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { lockState } from '../../../src/core/store/taskLock';
import { TaskStore } from '../../../src/core/store/taskStore';
import { StoreError } from '../../../src/core/store/types';
import { completedTaskEvents, tempStore } from './helpers';

/**
 * One writer per task (docs/persistence.md): lines reach the OS at once, everything that waits on
 * the disk (fdatasync, meta.json's replacement) runs on the task's queue, off the event loop, and
 * the record's failure is final, said, and leaves nothing half-made.
 */
const T = 'writer-1';
const newTask = (store: ReturnType<typeof tempStore>['store'], id = T) => store.create({ id, title: 'read a.txt', model: 'claude-x', workspace: '/ws', owner: 'test' });
const meta = (root: string, id = T) => JSON.parse(readFileSync(join(root, 'tasks', id, 'meta.json'), 'utf8')) as Record<string, unknown>;
const logLines = (root: string, id = T) => readFileSync(join(root, 'tasks', id, 'events.jsonl'), 'utf8').trim().split('\n');

describe('the task writer', () => {
  it('hands a line to the OS before record() returns, but never waits for meta.json: that lands on the queue, after the log is synced', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store);
    await rec.recorded();
    const events = completedTaskEvents(T);
    const upTo = events.findIndex((e) => e.type === 'turn' && e.state === 'executingTool');
    for (const e of events.slice(0, upTo + 1)) rec.record(e);
    // The tool round's line is in the file already; meta.json (dirty since `usage`) is not yet replaced.
    expect(logLines(root).at(-1)).toContain('"executingTool"');
    expect(meta(root)).toMatchObject({ tokens: 0 });
    await rec.durable();
    await rec.recorded();
    expect(meta(root)).toMatchObject({ tokens: 120 });
    await rec.close();
  });

  it('writes only the latest meta.json of a burst, and closes with the last one before releasing the lock', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store);
    for (let i = 0; i < 200; i++) rec.record({ type: 'task', taskId: T, state: 'running', title: `title ${i}` });
    rec.record({ type: 'task', taskId: T, state: 'completed', title: 'the last title' });
    const closing = rec.close();
    // Until its last writes are done the task is still this process's.
    expect(lockState(join(root, 'tasks', T)).live).toBe(true);
    await closing;
    expect(meta(root)).toMatchObject({ title: 'the last title', status: 'completed' });
    expect(lockState(join(root, 'tasks', T)).held).toBe(false);
    expect(readdirSync(join(root, 'tasks', T)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it("fails once and says so when the task's folder is removed: durable() and recorded() reject, later records are ignored", async () => {
    const { root, store } = tempStore();
    const rec = newTask(store);
    const heard: string[] = [];
    rec.onFailure((m) => heard.push(m));
    rec.record({ type: 'task', taskId: T, state: 'running', title: 'read a.txt' });
    await rec.durable();
    rmSync(join(root, 'tasks', T), { recursive: true, force: true });
    rec.record({ type: 'turn', taskId: T, state: 'executingTool', turn: 1 });
    const err = await rec.durable().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('io');
    expect((err as StoreError).message).toMatch(/could not be saved in .*: the task's folder was removed or moved/);
    await expect(rec.recorded()).rejects.toBeInstanceOf(StoreError);
    expect(() => rec.record({ type: 'turn', taskId: T, state: 'assembling', turn: 1 } satisfies TaskEvent)).not.toThrow();
    await new Promise((r) => setImmediate(r));
    expect(heard).toHaveLength(1);
    expect(rec.failureMessage).toBe(heard[0]);
    await rec.close();
    // Nothing was made again where the folder was.
    expect(existsSync(join(root, 'tasks', T))).toBe(false);
  });

  it('a new task is private from its first byte, whatever the umask: folders 0700, files 0600', async () => {
    const root = join(tempStore().root, 'keel-home');
    const store = new TaskStore(root);
    const umask = process.umask(0);
    let rec;
    try {
      rec = newTask(store);
    } finally {
      process.umask(umask);
    }
    await rec.recorded();
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(root)).toBe(0o700);
    expect(mode(join(root, 'tasks'))).toBe(0o700);
    expect(mode(join(root, 'tasks', T))).toBe(0o700);
    for (const f of ['events.jsonl', 'meta.json', 'lock.owner.json']) expect([f, mode(join(root, 'tasks', T, f))]).toEqual([f, 0o600]);
    expect(mode(join(root, 'tasks', T, 'lock'))).toBe(0o700);
    await rec.close();
    await store.list();
    expect(mode(join(root, 'index.json'))).toBe(0o600);
  });
});
