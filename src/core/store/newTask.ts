import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { EventLogWriter, type EventLogWriterOptions } from './eventLog';
import { PRIVATE_DIR, PRIVATE_FILE } from './privateFiles';
import { claimNewTask, lockClaimedTask, type HeldTaskLock } from './taskLock';
import { SCHEMA_VERSION, StoreError, type StoreLogger, type TaskMeta } from './types';

/** What a new task is created with (TaskStore.create). */
export interface NewTaskInit {
  id: string;
  title: string;
  model: string;
  provider?: string;
  workspace: string;
  parentId?: string;
  /** Who drives it, for "running in another window" messages (e.g. "keel run", "VS Code window"). */
  owner: string;
}

/**
 * Makes a new task's folder `dir` under `tasksDir` — its log (header), meta.json and owner file —
 * under a hidden name, renames it into place already claimed by this process, and takes its lock;
 * synchronous, so a task records its very first event, and waiting on no fsync: what the folder
 * holds is made durable by the writer's first step, off the event loop, before any tool runs.
 * Every file is private (0600) from its first byte. Throws on I/O errors (nothing is left behind)
 * and StoreError('locked') if the lock cannot be taken.
 */
export function makeNewTask(tasksDir: string, dir: string, init: NewTaskInit, options: EventLogWriterOptions, log?: StoreLogger): { meta: TaskMeta; writer: EventLogWriter; lock: HeldTaskLock } {
  const staging = join(tasksDir, `.${init.id}.creating`);
  const now = Date.now();
  const header = {
    type: 'keel.task-log' as const,
    schemaVersion: SCHEMA_VERSION,
    taskId: init.id,
    createdAt: now,
    title: init.title,
    model: init.model,
    workspace: init.workspace,
    ...(init.parentId ? { parentId: init.parentId } : {}),
  };
  const meta: TaskMeta = {
    schemaVersion: SCHEMA_VERSION,
    id: init.id,
    title: init.title,
    status: 'running',
    createdAt: now,
    updatedAt: now,
    tokens: 0,
    costUsd: 0,
    model: init.model,
    ...(init.provider ? { provider: init.provider } : {}),
    workspace: init.workspace,
    ...(init.parentId ? { parentId: init.parentId } : {}),
  };
  let writer: EventLogWriter | undefined;
  try {
    mkdirSync(staging, PRIVATE_DIR);
    // The open descriptor follows the file through the rename below. What the folder holds is
    // made durable by the writer's first step (fsyncs off the event loop), before any tool runs.
    writer = EventLogWriter.create(join(staging, 'events.jsonl'), header, options, () => durableFolder(dir, tasksDir));
    // The staging folder is seen by no one: meta.json is written in place, not through a temp file.
    writeFileSync(join(staging, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`, { mode: PRIVATE_FILE, flag: 'wx' });
    claimNewTask(staging, init.owner);
    renameSync(staging, dir);
  } catch (err) {
    void writer?.close();
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  const lock = lockClaimedTask(dir, init.owner, log);
  if (!lock.ok) {
    void writer.close();
    throw new StoreError('locked', `task ${init.id} is locked by another process`);
  }
  return { meta, writer, lock: lock.lock };
}

/** fsync of a new task's meta.json and folder, and of the folder it was renamed into: the task is on disk. */
async function durableFolder(dir: string, tasksDir: string): Promise<void> {
  for (const [path, folder] of [[join(dir, 'meta.json'), false], [dir, true], [tasksDir, true]] as const) {
    const fh = await open(path, 'r');
    try {
      // Some file systems refuse fsync on a folder; its renames are atomic all the same.
      await (folder ? fh.sync().catch(() => undefined) : fh.datasync());
    } finally {
      await fh.close();
    }
  }
}
