import { join } from 'node:path';
import type { TaskEvent } from '../../shared/domain/events';
import { writeFileAtomicSync } from './atomicFile';
import type { EventLogWriter } from './eventLog';
import { statusOfState } from './replay';
import type { HeldTaskLock } from './taskLock';
import type { StoreLogger, TaskMeta } from './types';

/** How a recorder writes snapshots: every `every` events, at a quiescent point; `pending` events are already unsnapshotted. */
export interface SnapshotWriter {
  every: number;
  pending: number;
  /** Writes a snapshot of the log's first `until` bytes (durable already). */
  save(until: number): Promise<string | null>;
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
 * meta.json follows the status, title, tokens and cost, and the task's lock is held until
 * `close`. Contract: `record` never throws (a failing disk is logged once and the task goes on);
 * after `close` nothing more is written.
 */
export class TaskRecorder {
  private meta: TaskMeta;
  private closed = false;
  private metaDirty = false;
  private sinceSnapshot: number;
  private snapshotting: Promise<void> | null = null;

  constructor(
    readonly dir: string,
    meta: TaskMeta,
    private readonly writer: EventLogWriter,
    private readonly lock: HeldTaskLock,
    private readonly log?: StoreLogger,
    private readonly now: () => number = Date.now,
    private readonly snapshots?: SnapshotWriter,
  ) {
    this.meta = { ...meta };
    this.sinceSnapshot = snapshots?.pending ?? 0;
  }

  get id(): string {
    return this.meta.id;
  }

  snapshotMeta(): TaskMeta {
    return { ...this.meta };
  }

  record(event: TaskEvent): void {
    if (this.closed) return;
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
          if (this.metaDirty) this.writeMeta();
          void this.writer.sync();
        }
        return;
      case 'done':
        this.meta = { ...this.meta, status: event.status };
        this.writeMeta();
        void this.writer.sync();
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
        (err: unknown) => this.log?.('warn', `task ${this.meta.id}: could not write a snapshot (${(err as Error).message}); the log alone will rebuild it`),
      )
      .finally(() => {
        this.snapshotting = null;
      });
  }

  /** Resolves when every event recorded so far is on disk. Never rejects. */
  durable(): Promise<void> {
    return this.writer.sync();
  }

  /** Flushes and fsyncs the log, writes meta, releases the lock. Idempotent and synchronous. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.writer.close();
    this.writeMeta();
    this.lock.release();
  }

  private writeMeta(): void {
    this.metaDirty = false;
    this.meta = { ...this.meta, updatedAt: this.now() };
    try {
      writeFileAtomicSync(join(this.dir, 'meta.json'), `${JSON.stringify(this.meta, null, 2)}\n`);
    } catch (err) {
      this.log?.('error', `could not write ${join(this.dir, 'meta.json')}: ${(err as Error).message}`);
    }
  }
}
