import { closeSync, fdatasync, fsyncSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import type { TaskEvent } from '../../shared/domain/events';
import type { LogHeader, LogRecord } from './types';

export interface EventLogWriterOptions {
  /** Streamed deltas wait at most this long in memory before they are written (default 250 ms). */
  flushIntervalMs?: number;
  now?: () => number;
  /** A write failed (disk full, folder removed). Called once; later appends are dropped. */
  onError?: (err: Error) => void;
}

type DeltaEvent = Extract<TaskEvent, { type: 'text' | 'thinking' | 'tool_output' }>;

function isDelta(e: TaskEvent): e is DeltaEvent {
  return e.type === 'text' || e.type === 'thinking' || e.type === 'tool_output';
}

function sameStream(a: DeltaEvent, b: DeltaEvent): boolean {
  if (a.type !== b.type) return false;
  return a.type !== 'tool_output' || (b.type === 'tool_output' && a.id === b.id);
}

/**
 * The append side of one task's `events.jsonl`. Contract:
 * - `append` never throws and costs O(1) in the size of the log (one line written at the end;
 *   nothing is ever rewritten);
 * - every event other than a streamed delta (`text`, `thinking`, `tool_output`) is handed to the
 *   OS before `append` returns, so it survives the process being killed;
 * - consecutive deltas of one stream are merged into one line and written at the next other
 *   event, or after `flushIntervalMs` at the latest: a crash loses at most that much streamed text;
 * - `sync()` resolves once everything appended before it is on disk (fdatasync); hosts call it at
 *   turn boundaries and before a tool runs, so power loss cannot lose those either.
 */
export class EventLogWriter {
  private pending: { at: number; event: DeltaEvent } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failed = false;
  private closed = false;
  private syncsInFlight = 0;
  private closeWhenIdle = false;
  private readonly flushIntervalMs: number;
  private readonly now: () => number;
  /** Bytes in the file, as far as this writer knows (it is the file's only writer). */
  private bytes: number;

  private constructor(
    private readonly fd: number,
    private readonly options: EventLogWriterOptions,
    initialBytes: number,
  ) {
    this.bytes = initialBytes;
    this.flushIntervalMs = options.flushIntervalMs ?? 250;
    this.now = options.now ?? Date.now;
  }

  /** Creates a new log holding just its header, on disk (fsynced) before returning. Throws on I/O errors. */
  static create(path: string, header: LogHeader, options: EventLogWriterOptions = {}): EventLogWriter {
    const fd = openSync(path, 'wx');
    const text = `${JSON.stringify(header)}\n`;
    writeSync(fd, text);
    fsyncSync(fd);
    return new EventLogWriter(fd, options, Buffer.byteLength(text));
  }

  /**
   * Opens an existing log for appending. `validBytes` is where its last good line ends (from the
   * reader): a torn tail beyond it is cut off first, so new lines never join a broken one.
   */
  static openExisting(path: string, at: { validBytes: number; missingNewline: boolean; upgradeHeader: LogHeader | null }, options: EventLogWriterOptions = {}): EventLogWriter {
    if (statSync(path).size > at.validBytes) {
      const fd = openSync(path, 'r+');
      try {
        ftruncateSync(fd, at.validBytes);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    const writer = new EventLogWriter(openSync(path, 'a'), options, at.validBytes);
    // A last line without its newline is ended; an older log gets a current-version header.
    const head = (at.missingNewline ? '\n' : '') + (at.upgradeHeader ? `${JSON.stringify(at.upgradeHeader)}\n` : '');
    if (head) writer.write(head);
    return writer;
  }

  append(event: TaskEvent): void {
    if (this.closed || this.failed) return;
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
   * line boundary a snapshot may refer to. Meaningless once a write failed (`healthy` is false).
   */
  get size(): number {
    return this.bytes;
  }

  /** No write has failed and the log is open. */
  get healthy(): boolean {
    return !this.failed && !this.closed;
  }

  /** Writes any merged deltas still in memory. Never throws. */
  flush(): void {
    if (this.closed || this.failed) return;
    const head = this.takePending();
    if (head) this.write(head);
  }

  /** Flushes, then resolves when the log is on disk. Never rejects (a failure is reported through onError). */
  sync(): Promise<void> {
    this.flush();
    if (this.closed || this.failed) return Promise.resolve();
    this.syncsInFlight++;
    return new Promise((resolve) => {
      fdatasync(this.fd, (err) => {
        this.syncsInFlight--;
        if (err) this.fail(err);
        if (this.closeWhenIdle && this.syncsInFlight === 0) closeSync(this.fd);
        resolve();
      });
    });
  }

  /** Flushes, fsyncs and closes. Idempotent; later appends are ignored. */
  close(): void {
    if (this.closed) return;
    if (!this.failed) {
      this.flush();
      try {
        fsyncSync(this.fd);
      } catch (err) {
        this.fail(err as Error);
      }
    }
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.syncsInFlight === 0) closeSync(this.fd);
    else this.closeWhenIdle = true;
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
      let done = 0;
      while (done < buf.length) done += writeSync(this.fd, buf, done);
      this.bytes += buf.length;
    } catch (err) {
      this.fail(err as Error);
    }
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.options.onError?.(err);
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
