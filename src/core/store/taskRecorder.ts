import { join } from 'node:path';
import type { TaskEvent } from '../../shared/domain/events';
import type { EventLogWriter } from './eventLog';
import { describeRecordFailure } from './recordFailure';
import { statusOfState } from './replay';
import type { HeldTaskLock } from './taskLock';
import { StoreError, type StoreLogger, type TaskMeta } from './types';
import { errorMessage } from '../../shared/domain/errors';

/** How a recorder writes snapshots: every `every` events, at a quiescent point; `pending` events are already unsnapshotted. */
export interface SnapshotWriter {
  every: number;
  pending: number;
  /** Writes a snapshot of the log's first `until` bytes (durable already). */
  save(until: number): Promise<string | null>;
}

export interface TaskRecorderOptions {
  log?: StoreLogger;
  now?: () => number;
  snapshots?: SnapshotWriter;
  /** Told of each close as it starts, with its promise (the store waits for them: `TaskStore.closed`). */
  closing?: (done: Promise<void>) => void;
}

/**
 * Quiescent points, where a snapshot is taken: a turn about to check its context (the tool
 * results of the last round are in the conversation, no stream is open, no tool runs) and the end
 * of a run. A snapshot is of the folded log, so it would be right anywhere; here it is also small.
 */
function isQuiescent(e: TaskEvent): boolean {
  return (e.type === 'turn' && e.state === 'checkingContext') || e.type === 'done';
}

/** Turn states after which the log is fsynced: a tool is about to run, results were assembled, the loop ended. */
const DURABLE_TURN_STATES = new Set(['executingTool', 'startingSubtask', 'mcpCall', 'assembling', 'done', 'error']);

/**
 * Records one task driven by this process: every event goes to its log (in publish order),
 * meta.json follows the status, title, tokens and cost, and the task's lock is held until the
 * record is closed. Contract:
 * - `record` never throws and never waits on the disk: the line is handed to the OS at once, and
 *   the fsyncs and meta.json writes it asks for run on the task's writer, off the event loop;
 * - the record's first failure (a full disk, a file over its size limit, the task's folder
 *   removed, its lock lost) is final and never silent: `meta.json` is made to say the task
 *   failed and why (`recordError`) as far as the disk allows, `durable()` and `recorded()`
 *   reject from then on, and every `onFailure` listener hears it once (on a microtask: never in
 *   the middle of recording an event);
 * - after `close` nothing more is written.
 */
export class TaskRecorder {
  private meta: TaskMeta;
  private isClosed = false;
  private metaDirty = false;
  private sinceSnapshot: number;
  private snapshotting: Promise<void> | null = null;
  private failure: string | null = null;
  private readonly failureListeners: ((message: string) => void)[] = [];
  private closing: Promise<void> | null = null;
  private readonly metaPath: string;
  private readonly log: StoreLogger | undefined;
  private readonly now: () => number;
  private readonly snapshots: SnapshotWriter | undefined;

  constructor(
    readonly dir: string,
    meta: TaskMeta,
    private readonly writer: EventLogWriter,
    private readonly lock: HeldTaskLock,
    private readonly options: TaskRecorderOptions = {},
  ) {
    this.meta = { ...meta };
    this.metaPath = join(dir, 'meta.json');
    this.log = options.log;
    this.now = options.now ?? Date.now;
    this.snapshots = options.snapshots;
    this.sinceSnapshot = this.snapshots?.pending ?? 0;
    writer.onFailure((err) => this.failed(err));
    // Another process may write the task now: this one stops writing it.
    lock.onLost((err) => writer.halt(new Error(`its lock was lost, so another process may be writing it now (${err.message})`)));
  }

  get id(): string {
    return this.meta.id;
  }

  snapshotMeta(): TaskMeta {
    return { ...this.meta };
  }

  /** Why the record failed (a sentence a person can read), or null while it holds. */
  get failureMessage(): string | null {
    return this.failure;
  }

  /** Calls `listener` once when the record fails (on a microtask; at once if it failed already). */
  onFailure(listener: (message: string) => void): void {
    if (this.failure) listener(this.failure);
    else this.failureListeners.push(listener);
  }

  record(event: TaskEvent): void {
    if (this.isClosed) return;
    this.writer.append(event);
    this.sinceSnapshot++;
    this.maybeSnapshot(event);
    switch (event.type) {
      case 'task': {
        const status = statusOfState(event.state);
        const title = event.title ?? this.meta.title;
        if ((status && status !== this.meta.status) || title !== this.meta.title) {
          this.meta = { ...this.meta, ...(status ? { status } : {}), title };
          this.writeMeta();
        }
        return;
      }
      case 'usage':
        this.meta = {
          ...this.meta,
          tokens: this.meta.tokens + event.inputTokens + event.outputTokens + event.cacheReadTokens + event.cacheWriteTokens,
          costUsd: event.totalCostUsd,
        };
        this.metaDirty = true;
        return;
      case 'assistant_start':
        if (event.model && event.model !== this.meta.model) {
          this.meta = { ...this.meta, model: event.model };
          this.metaDirty = true;
        }
        return;
      case 'turn':
        if (DURABLE_TURN_STATES.has(event.state)) {
          // The log first: meta.json never says more than the log holds on disk.
          this.syncInBackground();
          if (this.metaDirty) this.writeMeta();
        }
        return;
      case 'done':
        this.meta = { ...this.meta, status: event.status };
        this.syncInBackground();
        this.writeMeta();
        return;
      default:
        return;
    }
  }

  /** Resolves once the snapshot being written (if any) is written or given up. Never rejects. */
  snapshotWritten(): Promise<void> {
    return this.snapshotting ?? Promise.resolve();
  }

  /**
   * At a quiescent point after K events, writes a snapshot in the background: the log is made
   * durable up to here first, so a snapshot never refers to bytes a power loss could take. One at
   * a time; a failure is logged and the task goes on (the log is the truth).
   */
  private maybeSnapshot(event: TaskEvent): void {
    const snaps = this.snapshots;
    if (!snaps || this.snapshotting || this.sinceSnapshot < snaps.every || !isQuiescent(event) || !this.writer.healthy) return;
    this.writer.flush();
    const until = this.writer.size;
    this.sinceSnapshot = 0;
    this.snapshotting = this.writer
      .sync()
      .then(() => snaps.save(until))
      .then(
        () => undefined,
        (err: unknown) => {
          // A failed record says so itself; a snapshot is only a shortcut.
          if (!this.failure) this.log?.('warn', `task ${this.meta.id}: could not write a snapshot (${errorMessage(err)}); the log alone will rebuild it`);
        },
      )
      .finally(() => {
        this.snapshotting = null;
      });
  }

  /**
   * Resolves when every event recorded so far is on disk (the runtime awaits it before a tool
   * runs). Rejects with StoreError('io') once the record has failed: nothing may act on the
   * world without its record.
   */
  durable(): Promise<void> {
    if (this.failure) return Promise.reject(new StoreError('io', this.failure));
    return this.writer.sync().catch(() => Promise.reject(new StoreError('io', this.failure ?? 'the task record could not be saved')));
  }

  /**
   * Resolves when everything recorded so far — the log fsynced, meta.json written — is on disk
   * (a host reports a run's success only after it). Rejects with StoreError('io') once the
   * record has failed.
   */
  recorded(): Promise<void> {
    if (this.failure) return Promise.reject(new StoreError('io', this.failure));
    this.syncInBackground();
    return this.writer.drained().catch(() => Promise.reject(new StoreError('io', this.failure ?? 'the task record could not be saved')));
  }

  /**
   * Stops recording (later events are ignored) and hands the merged deltas to the OS at once;
   * then, on the task's writer, fsyncs the log, writes meta.json and releases the lock. Idempotent;
   * the promise resolves when the lock is released and never rejects.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.isClosed = true;
    this.meta = { ...this.meta, updatedAt: this.now() };
    const finalMeta = this.failure ? undefined : { path: this.metaPath, text: metaText(this.meta) };
    const release = () => this.lock.release();
    this.closing = this.writer.close(finalMeta).then(release, release);
    this.options.closing?.(this.closing);
    return this.closing;
  }

  /**
   * @internal Lets the task go as a process that died would (the bench's "crash"): the log is
   * closed as it stands — no final meta.json, no fsync — and the lock released.
   */
  abandon(): Promise<void> {
    this.isClosed = true;
    const release = () => this.lock.release();
    this.closing ??= this.writer.close().then(release, release);
    return this.closing;
  }

  private syncInBackground(): void {
    // A failure is the record's failure (onFailure), not a rejection anyone waits for here.
    this.writer.sync().catch(() => undefined);
  }

  private writeMeta(): void {
    this.metaDirty = false;
    this.meta = { ...this.meta, updatedAt: this.now() };
    this.writer.writeMeta(this.metaPath, metaText(this.meta));
  }

  /** The record failed: meta.json says so as far as the disk allows, and every listener hears it once. */
  private failed(err: Error): void {
    if (this.failure) return;
    const message = describeRecordFailure(err, this.dir);
    this.failure = message;
    this.meta = { ...this.meta, status: 'failed', recordError: message, updatedAt: this.now() };
    void this.writer.markFailed(this.metaPath, metaText(this.meta)).then((marked) => {
      if (!marked) this.log?.('info', `task ${this.meta.id}: could not mark ${this.metaPath} as failed either`);
    });
    queueMicrotask(() => {
      for (const l of this.failureListeners.splice(0)) l(message);
    });
  }
}

function metaText(meta: TaskMeta): string {
  return `${JSON.stringify(meta, null, 2)}\n`;
}
