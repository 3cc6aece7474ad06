import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomicFile';
import { EventLogWriter } from './eventLog';
import type { ReadLogResult } from './logReader';
import { metaFromLog, readMeta } from './metaFile';
import { MIGRATIONS, type MigrationTable } from './migrations';
import { ReplayFold, type ReplayedTask } from './replay';
import { SnapshotManager, SNAPSHOT_EVERY_EVENTS, type SnapshotOptions } from './snapshots';
import { readIndex, writeIndex, type IndexFile } from './taskIndex';
import { closingRecord, finishedWriting } from './closingRecords';
import { makeDirs, probeWritable } from './makeDirs';
import { makeNewTask, type NewTaskInit } from './newTask';
import { PRIVATE_DIR, PRIVATE_FILE, tightenTree } from './privateFiles';
import { acquireTaskLock, lockState } from './taskLock';
import { TaskRecorder, type TaskRecorderOptions } from './taskRecorder';
import { SCHEMA_VERSION, StoreError, type LockOwner, type StoreLogger, type StoreProblem, type TaskMeta, type TaskSummary } from './types';
import { errorMessage } from '../../shared/domain/errors';

export interface TaskStoreOptions {
  log?: StoreLogger;
  migrations?: MigrationTable;
  /** How long streamed text may wait in memory before it is written (default 250 ms). */
  flushIntervalMs?: number;
  /** Parsing slice between yields while reading a log (default 5 ms). */
  sliceMs?: number;
  /**
   * Snapshots of each task's folded log (docs/persistence.md): written by a task's driver every
   * K events, used by every read. `false`: none written, none read (every read folds the whole log).
   */
  snapshots?: SnapshotOptions | false;
}

export type { NewTaskInit };

/** A task read from its folder. */
export interface LoadedTask {
  meta: TaskMeta;
  replay: ReplayedTask;
  log: ReadLogResult;
  /** Set when another live process holds the task (so it is shown read-only, not interrupted). */
  heldElsewhere: LockOwner | null;
}

/** A stored task this process now drives: its log is open for appending and its lock is held. */
export interface OpenedTask extends LoadedTask {
  recorder: TaskRecorder;
}

/**
 * The task store under one root folder (the extension's globalStorage, the CLI's --storage or
 * $KEEL_HOME). Layout and guarantees: docs/persistence.md. Methods that read never throw for one
 * bad task while listing others: an unreadable task is quarantined (moved to
 * `<root>/quarantine/`) and reported as a problem.
 */
export class TaskStore {
  readonly tasksDir: string;
  readonly quarantineDir: string;
  private readonly indexPath: string;
  private readonly migrations: MigrationTable;
  private tightened = false;

  constructor(
    readonly root: string,
    private readonly options: TaskStoreOptions = {},
  ) {
    this.tasksDir = join(root, 'tasks');
    this.quarantineDir = join(root, 'quarantine');
    this.indexPath = join(root, 'index.json');
    this.migrations = options.migrations ?? MIGRATIONS;
  }

  taskDir(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new StoreError('not_found', `"${id}" is not a task id`);
    return join(this.tasksDir, id);
  }

  /**
   * Makes sure the root can hold tasks: creates `<root>/tasks` if it is missing and checks that a
   * file can be written there. Hosts call it before starting a recorded run so an unusable path
   * fails at once. Throws StoreError('unusable') saying why; never loops or waits.
   */
  prepare(): void {
    try {
      this.makePrivate();
      probeWritable(this.tasksDir);
    } catch (err) {
      throw this.unusable(err);
    }
  }

  /**
   * Resolves once every record this store's recorders closed (or are closing) has written its
   * last lines and meta.json and released its lock. Never rejects. A host awaits it before it ends.
   */
  async closed(): Promise<void> {
    await finishedWriting(this.tasksDir);
  }

  /**
   * Creates the root and `tasks/` (0700) if missing; the first time, also tightens a root an older
   * Keel left readable by others (docs/persistence.md, "Private"). Throws what makeDirs throws.
   */
  private makePrivate(): void {
    makeDirs(this.tasksDir, PRIVATE_DIR);
    this.tightenOnce();
  }

  /** The first time this store is used: a root an older Keel left readable by others is made private. Never throws. */
  private tightenOnce(): void {
    if (this.tightened) return;
    this.tightened = true;
    for (const problem of tightenTree(this.root)) this.options.log?.('warn', `could not make Keel's files private: ${problem}`);
  }

  /**
   * Creates a new task — folder, log (header, fsynced), meta — and takes its lock; synchronous so
   * a task records its very first event. The folder is assembled under a hidden name and renamed
   * into place, already claimed by this process: no other process ever sees a task without its
   * header and meta, or one it could take for abandoned. Throws StoreError('unusable') when the
   * root cannot hold tasks, other errors as they come.
   */
  create(init: NewTaskInit): TaskRecorder {
    const dir = this.taskDir(init.id);
    try {
      this.makePrivate();
    } catch (err) {
      throw this.unusable(err);
    }
    const { meta, writer, lock } = makeNewTask(this.tasksDir, dir, init, this.writerOptions(), this.options.log);
    return new TaskRecorder(dir, meta, writer, lock, this.recorderOptions(dir, this.snapshotWriter(init.id, { title: init.title, model: init.model }, 0)));
  }

  /**
   * Every task (subtasks only when asked), newest first. A `running` task that no live process
   * holds is reported `interrupted`; one held by another process carries `heldElsewhere`.
   * Never throws for a bad task: it is quarantined and reported in `problems`.
   */
  async list(opts: { includeSubtasks?: boolean } = {}): Promise<{ tasks: TaskSummary[]; problems: StoreProblem[] }> {
    await finishedWriting(this.tasksDir);
    const problems: StoreProblem[] = [];
    let ids: string[] = [];
    try {
      ids = readdirSync(this.tasksDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && /^[A-Za-z0-9_-]+$/.test(d.name))
        .map((d) => d.name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw this.unusable(err);
      // No tasks yet: the root must still be a place where tasks can be kept.
      this.prepare();
    }
    this.tightenOnce();
    const old = readIndex(this.indexPath);
    if (!old && ids.length > 0 && existsSync(this.indexPath)) this.options.log?.('warn', `${this.indexPath} is unreadable; rebuilding it by scanning the task folders`);
    const next: IndexFile = { schemaVersion: SCHEMA_VERSION, tasks: {} };
    let changed = !old;
    for (const id of ids) {
      const metaPath = join(this.tasksDir, id, 'meta.json');
      let mtimeMs = -1;
      try {
        mtimeMs = statSync(metaPath).mtimeMs;
      } catch {
        /* missing: rebuilt from the log below */
      }
      const cached = old?.tasks[id];
      if (cached && cached.metaMtimeMs === mtimeMs) {
        next.tasks[id] = cached;
        continue;
      }
      changed = true;
      try {
        // Cached with the mtime seen *before* reading: a meta replaced meanwhile is re-read next time.
        next.tasks[id] = { metaMtimeMs: mtimeMs, meta: await this.metaOrRebuild(id) };
      } catch (err) {
        // A task its live driver is still writing is its driver's business: left out this time.
        if (err instanceof StoreError && err.code === 'locked') this.options.log?.('info', err.message);
        else problems.push({ taskId: id, message: err instanceof Error ? err.message : String(err) });
      }
    }
    if (old && Object.keys(old.tasks).some((id) => !next.tasks[id])) changed = true;
    if (changed) {
      try {
        await writeIndex(this.indexPath, next);
      } catch (err) {
        this.options.log?.('warn', `could not write ${this.indexPath}: ${errorMessage(err)}`);
      }
    }
    const tasks = Object.values(next.tasks)
      .map((e) => this.summarize(e.meta))
      .filter((t) => opts.includeSubtasks || !t.parentId)
      .sort((a, b) => b.updatedAt - a.updatedAt);
    return { tasks, problems };
  }

  /** The id a full id or a unique prefix names. Throws StoreError not_found / ambiguous. */
  resolveId(idOrPrefix: string): string {
    this.tightenOnce();
    let ids: string[] = [];
    try {
      ids = readdirSync(this.tasksDir).filter((name) => !name.startsWith('.'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw this.unusable(err);
    }
    if (ids.includes(idOrPrefix)) return idOrPrefix;
    const matches = idOrPrefix.length >= 4 ? ids.filter((id) => id.startsWith(idOrPrefix)) : [];
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1) throw new StoreError('ambiguous', `"${idOrPrefix}" matches ${matches.length} tasks; give more of the id`);
    throw new StoreError('not_found', `no task "${idOrPrefix}" in ${this.tasksDir}`);
  }

  /** A task's meta (rebuilt from its log if meta.json is damaged). Throws StoreError like `load`. */
  async readMeta(id: string): Promise<TaskMeta> {
    await finishedWriting(this.taskDir(id));
    if (!existsSync(this.taskDir(id))) throw new StoreError('not_found', `no task "${id}" in ${this.tasksDir}`);
    return this.metaOrRebuild(id);
  }

  /**
   * Reads a task for viewing. A task whose log cannot be read is quarantined and this throws
   * StoreError('corrupt') saying where it went. `transcript` marks a cut-off answer interrupted
   * unless another live process still drives the task.
   */
  async load(id: string): Promise<LoadedTask> {
    this.tightenOnce();
    const dir = this.taskDir(id);
    await finishedWriting(dir);
    if (!existsSync(dir)) throw new StoreError('not_found', `no task "${id}" in ${this.tasksDir}`);
    const held = lockState(dir);
    const heldElsewhere = held.live && held.owner && held.owner.pid !== process.pid ? held.owner : held.live && !held.owner ? { pid: 0, host: '?', since: 0 } : null;
    return { ...(await this.read(id, held.live)), heldElsewhere };
  }

  /**
   * Takes a stored task over for driving it here: takes its lock (a stale one is taken over),
   * reads its log, cuts a torn tail and opens the log for appending. Throws StoreError('locked')
   * when a live process holds it ("running in another window or process"), 'corrupt' (after
   * quarantining it), 'not_found', 'unsupported'.
   */
  async open(id: string, owner: string): Promise<OpenedTask> {
    this.tightenOnce();
    const dir = this.taskDir(id);
    await finishedWriting(dir);
    if (!existsSync(dir)) throw new StoreError('not_found', `no task "${id}" in ${this.tasksDir}`);
    const attempt = acquireTaskLock(dir, owner, this.options.log);
    if (!attempt.ok) throw new StoreError('locked', `task ${id} is running in another window or process${describeOwner(attempt.owner)}; it is read-only here`);
    try {
      const { meta, replay, log } = await this.read(id, false, true);
      const upgradeHeader = log.version < SCHEMA_VERSION ? { ...log.header, schemaVersion: SCHEMA_VERSION } : null;
      const writer = EventLogWriter.openExisting(join(dir, 'events.jsonl'), { validBytes: log.validBytes, missingNewline: log.missingNewline, upgradeHeader }, this.writerOptions());
      const snapshots = this.snapshotWriter(id, { title: meta.title, model: meta.model }, log.records);
      // A record that failed before starts over with this driver: what it writes from here is whole.
      const { recordError: _earlier, ...fresh } = meta;
      const recorder = new TaskRecorder(dir, fresh, writer, attempt.lock, this.recorderOptions(dir, snapshots));
      return { meta, replay, log, heldElsewhere: null, recorder };
    } catch (err) {
      attempt.lock.release();
      throw err;
    }
  }

  /** Deletes a task's folder. Throws StoreError('locked') while a live process drives it. */
  async delete(id: string): Promise<void> {
    const dir = this.taskDir(id);
    await finishedWriting(dir);
    if (!existsSync(dir)) throw new StoreError('not_found', `no task "${id}" in ${this.tasksDir}`);
    const held = lockState(dir);
    if (held.live) throw new StoreError('locked', `task ${id} is running in another window or process${describeOwner(held.owner)}; stop it there first`);
    rmSync(dir, { recursive: true, force: true });
    await this.list({ includeSubtasks: true }).catch(() => undefined);
  }

  /** Moves a task folder to `<root>/quarantine/` with a note saying why. Returns where it went. */
  quarantine(id: string, reason: string): string {
    const from = this.taskDir(id);
    makeDirs(this.quarantineDir, PRIVATE_DIR);
    const to = join(this.quarantineDir, `${id}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    try {
      renameSync(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreError('not_found', `task ${id} was moved or deleted by another process`);
      throw err;
    }
    try {
      writeFileSync(join(to, 'QUARANTINED.txt'), `Keel could not read this task and moved it here on ${new Date().toISOString()}.\nReason: ${reason}\n`, { mode: PRIVATE_FILE });
    } catch {
      /* the move is what matters */
    }
    this.options.log?.('error', `task ${id} could not be read (${reason}); moved to ${to}`);
    return to;
  }

  /**
   * Reads a task's meta and log. `owned`: the caller holds the task's lock to drive it (`open`).
   * A task whose lock a live process holds (another process, or this one) is otherwise only read: never quarantined, its meta never rewritten, a partial last line (a write
   * in progress) not reported; what it writes is its own business.
   */
  private async read(id: string, live: boolean, owned = false): Promise<{ meta: TaskMeta; replay: ReplayedTask; log: ReadLogResult }> {
    const dir = this.taskDir(id);
    const held = !owned && lockState(dir).live;
    const stored = safeReadMeta(join(dir, 'meta.json'), this.migrations);
    let folded;
    try {
      folded = await this.snapshotsOf(id).restore(() => ({ title: stored?.title ?? 'Untitled task', model: stored?.model ?? '' }), {
        owned,
        quiet: held,
        fullReplay: this.options.snapshots === false,
      });
    } catch (err) {
      if (held && err instanceof StoreError && (err.code === 'corrupt' || err.code === 'not_found')) {
        throw new StoreError('locked', `task ${id} is being written by a running process and could not be read just now (${err.message})`);
      }
      if (err instanceof StoreError && (err.code === 'corrupt' || (err.code === 'not_found' && !stored))) {
        const to = this.quarantine(id, err.message);
        throw new StoreError('corrupt', `task ${id} could not be read (${err.message}); it was moved to ${to}`);
      }
      throw err;
    }
    const { fold, log } = folded;
    const replay = (fold ?? new ReplayFold(id, stored?.title ?? log.header.title ?? 'Untitled task', stored?.model ?? log.header.model ?? '')).finish({ live });
    let meta = stored;
    if ((!meta || meta.id !== id) && held) {
      meta = metaFromLog(log.header, replay); // shown from memory; its driver writes meta.json
    } else if (!meta || meta.id !== id) {
      meta = metaFromLog(log.header, replay);
      this.options.log?.('warn', `task ${id}: meta.json was missing or unreadable; rebuilt it from the log`);
      try {
        await writeFileAtomic(join(dir, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`, PRIVATE_FILE);
      } catch {
        /* shown from memory this time */
      }
    }
    return { meta, replay, log };
  }

  /** The snapshot manager of one task (docs/persistence.md, "Snapshots"). */
  snapshotsOf(id: string): SnapshotManager {
    const snaps = this.options.snapshots;
    return new SnapshotManager(this.taskDir(id), id, {
      ...(this.options.log ? { log: this.options.log } : {}),
      ...(this.options.sliceMs ? { sliceMs: this.options.sliceMs } : {}),
      migrations: this.migrations,
      ...(snaps && snaps.keep !== undefined ? { keep: snaps.keep } : {}),
    });
  }

  /** How the recorder of task `id` writes snapshots, or undefined when this store writes none. */
  private snapshotWriter(id: string, seed: { title: string; model: string }, pending: number) {
    const snaps = this.options.snapshots;
    if (snaps === false) return undefined;
    const manager = this.snapshotsOf(id);
    return { every: snaps?.every ?? SNAPSHOT_EVERY_EVENTS, pending, save: (until: number) => manager.save(until, () => seed) };
  }

  private async metaOrRebuild(id: string): Promise<TaskMeta> {
    const meta = safeReadMeta(join(this.taskDir(id), 'meta.json'), this.migrations);
    if (meta && meta.id === id) return meta;
    return (await this.read(id, false)).meta;
  }

  private unusable(err: unknown): StoreError {
    if (err instanceof StoreError) return err;
    return new StoreError('unusable', `cannot keep tasks in ${this.root}: ${errorMessage(err)}`);
  }

  private summarize(meta: TaskMeta): TaskSummary {
    const held = lockState(join(this.tasksDir, meta.id));
    const elsewhere = held.live && held.owner && held.owner.pid !== process.pid ? held.owner : null;
    const status = meta.status === 'running' && !held.live ? 'interrupted' : meta.status;
    return { ...meta, status, ...(elsewhere ? { heldElsewhere: elsewhere } : {}) };
  }

  private writerOptions() {
    return this.options.flushIntervalMs ? { flushIntervalMs: this.options.flushIntervalMs } : {};
  }

  private recorderOptions(recorderDir: string, snapshots: ReturnType<TaskStore['snapshotWriter']>): TaskRecorderOptions {
    return {
      ...(this.options.log ? { log: this.options.log } : {}),
      ...(snapshots ? { snapshots } : {}),
      closing: (done) => closingRecord(recorderDir, done),
    };
  }
}

function safeReadMeta(path: string, table: MigrationTable): TaskMeta | null {
  try {
    return readMeta(path, table);
  } catch (err) {
    if (err instanceof StoreError) throw err;
    return null;
  }
}

function describeOwner(owner: LockOwner | null): string {
  if (!owner) return '';
  return ` (${owner.label ?? 'pid'} ${owner.pid} on ${owner.host})`;
}
