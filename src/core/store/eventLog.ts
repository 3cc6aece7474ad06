import { closeSync, fdatasync, fstat, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import type { TaskEvent } from '../../shared/domain/events';
import { overwriteInPlace, writeFileAtomic } from './atomicFile';
import { PRIVATE_FILE } from './privateFiles';
import type { LogHeader, LogRecord } from './types';

export interface EventLogWriterOptions {
  /** Streamed deltas wait at most this long in memory before they are written (default 250 ms). */
  flushIntervalMs?: number;
  now?: () => number;
}

type DeltaEvent = Extract<TaskEvent, { type: 'text' | 'thinking' | 'tool_output' }>;

function isDelta(e: TaskEvent): e is DeltaEvent {
  return e.type === 'text' || e.type === 'thinking' || e.type === 'tool_output';
}

function sameStream(a: DeltaEvent, b: DeltaEvent): boolean {
  if (a.type !== b.type) return false;
  return a.type !== 'tool_output' || (b.type === 'tool_output' && a.id === b.id);
}

/** One step of the writer's queue, and the promise of whoever waits for it. */
interface Step {
  run: () => Promise<void>;
  /** Runs even after a failure (closing the file). */
  always: boolean;
  done: Promise<void>;
  settle: (err: Error | null) => void;
}

/**
 * The one writer of a task's record: its `events.jsonl` and its `meta.json`. Contract:
 * - `append` never throws and costs O(1) in the size of the log: the line is handed to the OS
 *   (`writeSync` into the page cache, microseconds) before `append` returns, so a listener never
 *   sees an event a killed process did not leave in its log; consecutive deltas of one stream
 *   (`text`, `thinking`, `tool_output`) are merged into one line, written at the next other event
 *   or after `flushIntervalMs` at the latest;
 * - everything that waits on the device — `fdatasync` of the log, replacing `meta.json` (temp
 *   file, fdatasync, rename, fsync of the folder), making a new task's files durable — runs one
 *   step at a time on a queue, off the event loop (libuv's thread pool): the host never waits on
 *   the disk. Steps run in the order asked; a meta write asked while another waits replaces it;
 * - `sync()` resolves once everything appended before it is on disk and the log is still the
 *   task's (a log whose folder was removed is a failure), and rejects once the record has failed;
 * - the first failure (a full disk, a file over its size limit, the folder removed) is final:
 *   nothing more is written, every listener of `onFailure` hears it once, and no temp file is
 *   left behind.
 */
export class EventLogWriter {
  private pending: { at: number; event: DeltaEvent } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failure: Error | null = null;
  private readonly failureListeners: ((err: Error) => void)[] = [];
  private closed: Promise<void> | null = null;
  private readonly steps: Step[] = [];
  private running = false;
  /** The sync step not started yet (a later `sync()` shares it: it covers what was appended since). */
  private nextSync: Step | null = null;
  /** The meta write not started yet, and the text it will write (a later write replaces the text). */
  private nextMeta: { step: Step; text: string } | null = null;
  private readonly flushIntervalMs: number;
  private readonly now: () => number;
  /** Bytes in the file, as far as this writer knows (it is the file's only writer). */
  private bytes: number;

  private constructor(
    private readonly fd: number,
    readonly path: string,
    options: EventLogWriterOptions,
    initialBytes: number,
  ) {
    this.bytes = initialBytes;
    this.flushIntervalMs = options.flushIntervalMs ?? 250;
    this.now = options.now ?? Date.now;
  }

  /**
   * Creates a new log holding just its header, handed to the OS before returning (throws on I/O
   * errors: a full disk, a folder that cannot be written). Making it durable — with whatever
   * `alsoDurable` makes durable (the new task's meta and folders) — is the first step of the
   * queue, so the first `sync()` (before any tool runs) includes it.
   */
  static create(path: string, header: LogHeader, options: EventLogWriterOptions = {}, alsoDurable: () => Promise<void> = async () => undefined): EventLogWriter {
    const fd = openSync(path, 'wx', PRIVATE_FILE);
    const text = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8');
    try {
      for (let done = 0; done < text.length; ) done += writeSync(fd, text, done, text.length - done, done);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    const writer = new EventLogWriter(fd, path, options, text.length);
    writer
      .enqueue(async () => {
        await writer.datasync();
        await alsoDurable();
      })
      .done.catch(() => undefined);
    return writer;
  }

  /**
   * Opens an existing log for appending. `validBytes` is where its last good line ends (from the
   * reader): a torn tail beyond it is cut off first, so new lines never join a broken one.
   */
  static openExisting(path: string, at: { validBytes: number; missingNewline: boolean; upgradeHeader: LogHeader | null }, options: EventLogWriterOptions = {}): EventLogWriter {
    const torn = statSync(path).size > at.validBytes;
    const fd = openSync(path, 'r+');
    if (torn) ftruncateSync(fd, at.validBytes);
    const writer = new EventLogWriter(fd, path, options, at.validBytes);
    // The cut is made durable by the first sync, before anything is built on it.
    if (torn) void writer.sync().catch(() => undefined);
    // A last line without its newline is ended; an older log gets a current-version header.
    const head = (at.missingNewline ? '\n' : '') + (at.upgradeHeader ? `${JSON.stringify(at.upgradeHeader)}\n` : '');
    if (head) writer.write(head);
    return writer;
  }

  append(event: TaskEvent): void {
    if (this.closed || this.failure) return;
    const at = this.now();
    if (isDelta(event)) {
      const p = this.pending;
      if (p && sameStream(p.event, event)) {
        p.event = mergeDelta(p.event, event);
        return;
      }
      if (p) this.write(line(p));
      this.pending = { at, event: { ...event } };
      if (!this.timer) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.flush();
        }, this.flushIntervalMs);
        this.timer.unref();
      }
      return;
    }
    const head = this.takePending();
    this.write(head + line({ at, event }));
  }

  /**
   * The end of the last line handed to the OS (call `flush` first to include merged deltas): a
   * line boundary a snapshot may refer to. Meaningless once the record failed (`healthy` is false).
   */
  get size(): number {
    return this.bytes;
  }

  /** No write has failed and the log is open. */
  get healthy(): boolean {
    return !this.failure && !this.closed;
  }

  /** Why the record failed, or null. */
  get failed(): Error | null {
    return this.failure;
  }

  /** Calls `listener` once with the record's first failure (at once if it failed already). */
  onFailure(listener: (err: Error) => void): void {
    if (this.failure) listener(this.failure);
    else this.failureListeners.push(listener);
  }

  /** Writes any merged deltas still in memory. Never throws. */
  flush(): void {
    if (this.closed || this.failure) return;
    const head = this.takePending();
    if (head) this.write(head);
  }

  /**
   * Flushes, then resolves when everything appended so far is on disk (fdatasync) and the log is
   * still linked in its folder. Rejects with the failure once the record failed.
   */
  sync(): Promise<void> {
    this.flush();
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return this.closed;
    if (this.nextSync) return this.nextSync.done;
    const step = this.enqueue(async () => {
      // Started: a later sync() needs a step of its own, for what is appended from now on.
      if (this.nextSync === step) this.nextSync = null;
      await this.datasync();
    });
    this.nextSync = step;
    return step.done;
  }

  /**
   * Replaces `metaPath` with `text` atomically, after the steps already asked for. A meta write
   * not started yet is given the new text instead (only the latest meta matters). Never throws;
   * a failure is the record's failure.
   */
  writeMeta(metaPath: string, text: string): void {
    if (this.failure || this.closed) return;
    if (this.nextMeta) {
      this.nextMeta.text = text;
      return;
    }
    const step: Step = this.enqueue(async () => {
      const next = this.nextMeta;
      // Started: the text is final; a later write needs a step of its own.
      this.nextMeta = null;
      await writeFileAtomic(metaPath, next?.step === step ? next.text : text, PRIVATE_FILE);
    });
    this.nextMeta = { step, text };
    step.done.catch(() => undefined);
  }

  /** Resolves once every step asked for so far has run; rejects once the record has failed. */
  drained(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const last = this.steps[this.steps.length - 1];
    return last ? last.done : Promise.resolve();
  }

  /**
   * Fails the record from outside (the task's lock was lost): nothing more is written. No-op once failed.
   */
  halt(err: Error): void {
    this.fail(err);
  }

  /**
   * After the record failed: says so in `meta.json` as well as the disk allows — replaced
   * atomically if there is room for a new file, else overwritten where it stands — once the step
   * running now has ended (so no earlier meta write lands after it). Never rejects; resolves true
   * when meta.json now says it.
   */
  markFailed(metaPath: string, text: string): Promise<boolean> {
    let marked = false;
    const step = this.enqueue(async () => {
      try {
        await writeFileAtomic(metaPath, text, PRIVATE_FILE);
        marked = true;
      } catch {
        marked = await overwriteInPlace(metaPath, text).then(
          () => true,
          () => false,
        );
      }
    }, true);
    return step.done.then(
      () => marked,
      () => marked,
    );
  }

  /**
   * Flushes the merged deltas (at once, into the page cache), then — on the queue, after every
   * step asked for — writes `finalMeta`, fdatasyncs the log and closes it. Later appends are
   * ignored. Idempotent; the promise resolves when the file is closed, and never rejects.
   */
  close(finalMeta?: { path: string; text: string }): Promise<void> {
    if (this.closed) return this.closed;
    this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.failure) void this.sync().catch(() => undefined);
    if (finalMeta) this.writeMeta(finalMeta.path, finalMeta.text);
    const closing = this.enqueue(async () => undefined, true).done.then(
      () => undefined,
      () => undefined,
    );
    this.closed = closing.then(() => {
      try {
        closeSync(this.fd);
      } catch {
        // Closed already, or the disk failed at the very end: the record's failure says so if it matters.
      }
    });
    return this.closed;
  }

  private takePending(): string {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const p = this.pending;
    this.pending = null;
    return p ? line(p) : '';
  }

  private write(text: string): void {
    try {
      const buf = Buffer.from(text, 'utf8');
      // At the end this writer knows of (the file is opened r+, so a cut tail is written over).
      let done = 0;
      while (done < buf.length) done += writeSync(this.fd, buf, done, buf.length - done, this.bytes + done);
      this.bytes += buf.length;
    } catch (err) {
      this.fail(err as Error);
    }
  }

  /** fdatasync of the log, then a check that it is still linked (a removed task folder is a failure, not a success). */
  private datasync(): Promise<void> {
    return new Promise((resolve, reject) => {
      fdatasync(this.fd, (err) => {
        if (err) return reject(err);
        fstat(this.fd, (e, st) => {
          if (e) return reject(e);
          if (st.nlink === 0) return reject(Object.assign(new Error(`${this.path} was deleted (its task folder was removed or moved)`), { code: 'ENOENT' }));
          resolve();
        });
      });
    });
  }

  private enqueue(run: () => Promise<void>, always = false): Step {
    let settle!: (err: Error | null) => void;
    const done = new Promise<void>((resolve, reject) => {
      settle = (err) => (err ? reject(err) : resolve());
    });
    const step: Step = { run, always, done, settle };
    this.steps.push(step);
    // Started on a microtask: whoever asked holds the step (and may share it) before it runs.
    if (!this.running) {
      this.running = true;
      queueMicrotask(() => void this.drain());
    }
    return step;
  }

  private async drain(): Promise<void> {
    while (this.steps.length > 0) {
      const step = this.steps[0]!;
      if (this.failure && !step.always) {
        this.steps.shift();
        step.settle(this.failure);
        continue;
      }
      try {
        await step.run();
        this.steps.shift();
        step.settle(null);
      } catch (err) {
        this.steps.shift();
        this.fail(err as Error);
        step.settle(this.failure);
      }
    }
    this.running = false;
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const l of this.failureListeners.splice(0)) l(err);
  }
}

function line(r: LogRecord): string {
  return `${JSON.stringify(r)}\n`;
}

function mergeDelta(a: DeltaEvent, b: DeltaEvent): DeltaEvent {
  if (a.type === 'tool_output' && b.type === 'tool_output') return { ...a, chunk: a.chunk + b.chunk };
  if (a.type === 'text' && b.type === 'text') return { ...a, delta: a.delta + b.delta };
  if (a.type === 'thinking' && b.type === 'thinking') return { ...a, delta: a.delta + b.delta };
  return a;
}
