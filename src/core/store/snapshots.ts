import { join } from 'node:path';
import { runningChecksum, type RunningChecksum } from './checksum';
import { readLog, type ReadLogResult } from './logReader';
import type { MigrationTable } from './migrations';
import { ReplayFold } from './replay';
import { listSnapshots, readSnapshot, removeOldSnapshots, removeSnapshot, writeSnapshot, type SnapshotHead } from './snapshotFile';
import type { LogHeader, LogRecord, StoreLogger } from './types';

/**
 * K: a task's driver writes a snapshot at the first quiescent point (a turn about to call the
 * model, or a run's end) after this many events. A resume then reads at most about K events of
 * log after the newest snapshot. Why 2,000 (docs/persistence.md, "Snapshots"): a snapshot holds
 * the whole transcript (it grows with the task), so writing one every K events writes O(n²/K)
 * bytes over a task's life; 2,000 events are about 0.5 MB of log (a few ms to fold), and a
 * 100,000-event task writes ~50 snapshots in its life. It was 4,000 until the tail folded after
 * the snapshot was a fifth of a resume; smaller K buys little more and much writing.
 */
export const SNAPSHOT_EVERY_EVENTS = 2000;
/** N: snapshots kept per task; older ones are removed after each write. */
export const SNAPSHOTS_KEPT = 3;

export interface SnapshotOptions {
  /** K (default SNAPSHOT_EVERY_EVENTS). */
  every?: number;
  /** N (default SNAPSHOTS_KEPT). */
  keep?: number;
}

/** The fold's starting title and model when the log holds no title: what meta.json says. */
export interface FoldSeed {
  title: string;
  model: string;
}

/** A folded log: the fold (null when the log holds no event), what reading found, and the snapshot it started from. */
export interface FoldedLog {
  fold: ReplayFold | null;
  log: ReadLogResult;
  snapshot: SnapshotHead | null;
  /** With `restore({ hash: true })`: the running checksum of every byte read, from byte 0 (a torn tail included). */
  prefixHash?: RunningChecksum;
}

export interface SnapshotManagerOptions {
  log?: StoreLogger;
  migrations?: MigrationTable;
  sliceMs?: number;
  keep?: number;
}

/**
 * The snapshots of one task folder (docs/persistence.md, "Snapshots"). A snapshot is the folded
 * state of the log up to a byte offset — the conversation, the transcript, where a stream or a
 * tool call stood — never an xstate snapshot, so nothing in flight is ever restored. The log
 * stays the truth: a snapshot that does not agree with it is passed over.
 */
export class SnapshotManager {
  readonly logPath: string;
  /** Where the last save left the fold (a driver's manager saves again and again). */
  private folded: { fold: ReplayFold; offset: number; header: LogHeader; version: number; hash: RunningChecksum } | null = null;

  constructor(
    readonly dir: string,
    readonly taskId: string,
    private readonly options: SnapshotManagerOptions = {},
  ) {
    this.logPath = join(dir, 'events.jsonl');
  }

  /**
   * The task's state: the newest snapshot that agrees with the log plus the log after it, or, when
   * none does, the whole log. Each snapshot passed over is logged as a warning with the reason;
   * `owned` (the caller drives the task) also removes it. `until` stops at a byte offset;
   * `fullReplay` ignores every snapshot; `quiet` logs nothing (a task another process writes);
   * `hash` also hashes the log from byte 0 as it is read (what a driver's next snapshot refers to).
   * Throws what `readLog` throws for the part of the log it reads (corrupt, unsupported, io).
   */
  async restore(seed: () => FoldSeed, opts: { owned?: boolean; until?: number; quiet?: boolean; fullReplay?: boolean; hash?: boolean } = {}): Promise<FoldedLog> {
    const log = opts.quiet ? undefined : this.options.log;
    for (const { name, offset } of opts.fullReplay ? [] : await listSnapshots(this.dir)) {
      if (opts.until !== undefined && offset > opts.until) continue;
      const check = await readSnapshot(this.dir, this.logPath, this.taskId, name);
      if (!check.ok) {
        log?.('warn', `task ${this.taskId}: snapshot ${name} ${check.reason}; using an older snapshot or the whole log`);
        if (opts.owned) await removeSnapshot(this.dir, name);
        continue;
      }
      let header: LogHeader;
      try {
        header = JSON.parse(check.header.toString('utf8')) as LogHeader;
      } catch {
        log?.('warn', `task ${this.taskId}: snapshot ${name} names an unreadable log header; using an older snapshot or the whole log`);
        continue;
      }
      const fold = ReplayFold.fromState(check.state);
      const prefixHash = check.prefix;
      const result = await readLog(this.logPath, (r) => fold.add(r), {
        ...this.readOptions(log),
        from: { offset: check.head.logOffset, header, version: check.head.logVersion },
        ...(opts.until !== undefined ? { until: opts.until } : {}),
        ...(opts.hash ? { onBytes: (b: Buffer) => prefixHash.update(b) } : {}),
      });
      return { fold, log: result, snapshot: check.head, ...(opts.hash ? { prefixHash } : {}) };
    }
    const prefixHash = opts.hash ? runningChecksum() : undefined;
    let fold: ReplayFold | null = null;
    const result = await readLog(
      this.logPath,
      (r: LogRecord) => {
        const s = fold ? null : seed();
        fold ??= new ReplayFold(this.taskId, s!.title, s!.model);
        fold.add(r);
      },
      { ...this.readOptions(log), ...(opts.until !== undefined ? { until: opts.until } : {}), ...(prefixHash ? { onBytes: (b: Buffer) => prefixHash.update(b) } : {}) },
    );
    return { fold, log: result, snapshot: null, ...(prefixHash ? { prefixHash } : {}) };
  }

  /**
   * Writes a snapshot of the log's first `until` bytes (a line boundary the caller has made
   * durable), folded from the log — by `restore`, then onward from the last save — so a snapshot
   * is always what the log says, never what memory says; then keeps the newest N. Calls must not
   * overlap (the recorder makes one at a time). Returns the snapshot's path, or null when there was nothing
   * new to keep. Throws on I/O errors; the task goes on without this snapshot.
   */
  async save(until: number, seed: () => FoldSeed): Promise<string | null> {
    let at: Awaited<ReturnType<SnapshotManager['foldUntil']>>;
    try {
      at = await this.foldUntil(until, seed);
    } catch (err) {
      this.folded = null;
      throw err;
    }
    if (!at.fold) return null;
    const state = at.fold.exportState();
    const path = await writeSnapshot(this.dir, this.logPath, this.taskId, { logOffset: until, logVersion: at.version, records: state.events, prefix: at.hash }, state);
    await this.cleanup();
    return path;
  }

  /**
   * The fold of the log's first `until` bytes. The first save restores it from the newest snapshot
   * (or the log); later saves of the same manager (one task's driver) go on from where the last
   * one stopped, reading only the log in between: the fold only ever advances by the log's bytes.
   */
  private async foldUntil(until: number, seed: () => FoldSeed): Promise<{ fold: ReplayFold; version: number; hash: RunningChecksum } | { fold: null; version: number }> {
    const last = this.folded;
    if (last && last.offset < until) {
      const log = await readLog(this.logPath, (r) => last.fold.add(r), {
        ...this.readOptions(this.options.log),
        from: { offset: last.offset, header: last.header, version: last.version },
        until,
        onBytes: (b) => last.hash.update(b),
      });
      if (log.validBytes !== until || log.torn || log.missingNewline) {
        this.folded = null;
        return { fold: null, version: log.version };
      }
      last.offset = until;
      last.version = log.version;
      return { fold: last.fold, version: log.version, hash: last.hash };
    }
    const folded = await this.restore(seed, { owned: true, until, hash: true });
    if (!folded.fold || !folded.prefixHash || folded.log.validBytes !== until || folded.log.torn || folded.log.missingNewline) return { fold: null, version: folded.log.version };
    this.folded = { fold: folded.fold, offset: until, header: folded.log.header, version: folded.log.version, hash: folded.prefixHash };
    if (folded.snapshot?.logOffset === until) return { fold: null, version: folded.log.version };
    return { fold: folded.fold, version: folded.log.version, hash: folded.prefixHash };
  }

  /** Keeps the newest N snapshots (default 3) and removes temp files of writers that died. Never throws. */
  async cleanup(): Promise<void> {
    await removeOldSnapshots(this.dir, this.options.keep ?? SNAPSHOTS_KEPT);
  }

  private readOptions(log: StoreLogger | undefined) {
    return {
      ...(this.options.migrations ? { migrations: this.options.migrations } : {}),
      ...(log ? { log } : {}),
      ...(this.options.sliceMs ? { sliceMs: this.options.sliceMs } : {}),
    };
  }
}
