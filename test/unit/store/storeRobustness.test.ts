import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { makeDirs } from '../../../src/core/store/makeDirs';
import { lockState } from '../../../src/core/store/taskLock';
import { TaskStore } from '../../../src/core/store/taskStore';
import { StoreError } from '../../../src/core/store/types';
import { ListProvider, textTurn } from '../helpers/scriptedEvents';
import { tempStore } from './helpers';

const newTask = (store: TaskStore, id: string) => store.create({ id, title: 'read a.txt', model: 'claude-x', workspace: '/ws', owner: 'test' });

/** Paths no task can be kept under: a file, a folder under a file, a folder under /proc (mkdir answers ENOENT there). */
function unusableRoots(): string[] {
  const { root } = tempStore();
  const file = join(root, 'a-file');
  writeFileSync(file, 'not a folder');
  return [file, join(file, 'keel'), '/proc/1/keel-store-test'];
}

describe('a storage root that cannot hold tasks', () => {
  it('prepare, list and create fail at once with StoreError("unusable") naming the root', async () => {
    for (const root of unusableRoots()) {
      const store = new TaskStore(root);
      expect(() => store.prepare()).toThrow(expect.objectContaining({ code: 'unusable', message: expect.stringContaining(root) }));
      await expect(store.list()).rejects.toMatchObject({ code: 'unusable' });
      expect(() => newTask(store, 'x1')).toThrow(expect.objectContaining({ code: 'unusable' }));
    }
  });

  it('a runtime whose store cannot record a task refuses to start it (nothing runs unrecorded)', () => {
    for (const root of unusableRoots()) {
      const provider = new ListProvider([textTurn('should never be asked')]);
      const runtime = new TaskRuntime({ workspace: tempStore().root, storageDir: root, providerFactory: () => provider });
      expect(() => runtime.startTask({ prompt: 'hi', provider: { provider: 'anthropic', model: 'm' } })).toThrow(StoreError);
      expect(runtime.list()).toEqual([]);
      expect(provider.requests).toEqual([]);
    }
  });

  it('makeDirs creates missing levels and accepts what exists', () => {
    const { root } = tempStore();
    makeDirs(join(root, 'a', 'b', 'c'));
    makeDirs(join(root, 'a', 'b', 'c'));
    expect(existsSync(join(root, 'a', 'b', 'c'))).toBe(true);
  });

  it('prepare creates the tasks folder of a fresh root', () => {
    const { root } = tempStore();
    const store = new TaskStore(join(root, 'fresh', 'keel'));
    store.prepare();
    expect(readdirSync(store.tasksDir)).toEqual([]);
  });
});

describe('a task another live process is writing is left alone', () => {
  it('a held task whose log and meta look broken is neither quarantined nor rebuilt by a listing', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store, 'live-1');
    rec.record({ type: 'task', taskId: 'live-1', state: 'running', title: 'read a.txt' });
    await rec.durable();
    // What a reader could catch in the middle of someone's writes: no meta, an empty log.
    rmSync(join(root, 'tasks', 'live-1', 'meta.json'));
    writeFileSync(join(root, 'tasks', 'live-1', 'events.jsonl'), '');
    const logs: string[] = [];
    const other = new TaskStore(root, { log: (level, m) => level !== 'info' && logs.push(m) });
    const { problems } = await other.list();
    expect(problems).toEqual([]);
    expect(logs).toEqual([]);
    expect(existsSync(join(root, 'quarantine'))).toBe(false);
    expect(existsSync(join(root, 'tasks', 'live-1', 'meta.json'))).toBe(false);
    await expect(other.load('live-1')).rejects.toMatchObject({ code: 'locked' });
    expect(existsSync(join(root, 'tasks', 'live-1'))).toBe(true);
    await rec.close();
  });

  it('a folder claimed by a live process but not yet locked counts as held', async () => {
    const { root, store } = tempStore();
    await newTask(store, 'claimed').close();
    const dir = join(root, 'tasks', 'claimed');
    const claim = (since: number, pid = process.pid) => writeFileSync(join(dir, 'lock.owner.json'), JSON.stringify({ pid, host: hostname(), since, label: 'keel run' }));
    claim(Date.now());
    expect(lockState(dir)).toMatchObject({ held: true, live: true });
    await expect(new TaskStore(root).open('claimed', 'other')).rejects.toMatchObject({ code: 'locked' });
    claim(Date.now() - 60_000);
    expect(lockState(dir).live).toBe(false);
    claim(Date.now(), 2 ** 22 + 4321);
    expect(lockState(dir).live).toBe(false);
  });

  it('a task being created (its hidden staging folder) is invisible to listings and id lookups', async () => {
    const { root, store } = tempStore();
    await newTask(store, 'done-1').close();
    mkdirSync(join(root, 'tasks', '.half-made.creating'));
    writeFileSync(join(root, 'tasks', '.half-made.creating', 'events.jsonl'), '');
    const { tasks, problems } = await store.list();
    expect(tasks.map((t) => t.id)).toEqual(['done-1']);
    expect(problems).toEqual([]);
    expect(() => store.resolveId('.half')).toThrow(StoreError);
    expect(existsSync(join(root, 'tasks', '.half-made.creating'))).toBe(true);
  });

  it('create leaves no staging folder behind and the new task is held from the start', async () => {
    const { root, store } = tempStore();
    const rec = newTask(store, 'new-1');
    expect(readdirSync(join(root, 'tasks'))).toEqual(['new-1']);
    expect(lockState(join(root, 'tasks', 'new-1'))).toMatchObject({ held: true, live: true, owner: expect.objectContaining({ pid: process.pid }) });
    await rec.close();
  });
});
