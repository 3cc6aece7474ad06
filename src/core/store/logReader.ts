import { open } from 'node:fs/promises';
import { migrator, MIGRATIONS, type MigrationTable } from './migrations';
import { SCHEMA_VERSION, StoreError, type LogHeader, type LogRecord, type StoreLogger } from './types';
import { errorMessage } from '../../shared/domain/errors';

export interface ReadLogOptions {
  /** Longest stretch of parsing between two yields to the event loop (default 5 ms). */
  sliceMs?: number;
  chunkBytes?: number;
  migrations?: MigrationTable;
  /** The version records are upgraded to (default SCHEMA_VERSION; tests of the hook set a later one). */
  targetVersion?: number;
  log?: StoreLogger;
  /**
   * Start reading at a line boundary after the header (a snapshot's offset) instead of at byte 0:
   * `header` and `version` are those in effect there. `records` then counts only the lines read.
   */
  from?: { offset: number; header: LogHeader; version: number };
  /** Stop at this byte offset (a line boundary): what a snapshot being written folds. */
  until?: number;
  /** Every byte read, in order, as read (from `from.offset` or 0): a snapshot's driver hashes the log's prefix with them. */
  onBytes?: (chunk: Buffer) => void;
}

export interface ReadLogResult {
  header: LogHeader;
  records: number;
  /** Byte offset where the last good line ends: an appender truncates the file here first. */
  validBytes: number;
  /** The last good line has no newline yet: an appender writes one first. */
  missingNewline: boolean;
  /** The schema version of the last lines (an appender writes a new header if it is older). */
  version: number;
  /** A torn last line that was dropped. */
  torn: { offset: number; bytes: number } | null;
}

const NEWLINE = 10;

/**
 * Reads `events.jsonl` in chunks, calling `onRecord` for each event line in order, and yields to
 * the event loop at least every `sliceMs` of work so a large log never blocks the host.
 * A torn last line (a crash in the middle of a write) is dropped and logged. Throws
 * StoreError('corrupt') for a missing or unreadable header or an unreadable line that is not the
 * last one, StoreError('unsupported') for a version this build cannot read, and StoreError('io')
 * when the file cannot be opened.
 */
export async function readLog(path: string, onRecord: (r: LogRecord) => void, options: ReadLogOptions = {}): Promise<ReadLogResult> {
  const sliceMs = options.sliceMs ?? 5;
  const chunkBytes = options.chunkBytes ?? 1 << 20;
  const table = options.migrations ?? MIGRATIONS;
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    throw new StoreError((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'not_found' : 'io', `cannot open ${path}: ${errorMessage(err)}`);
  }
  try {
    let header: LogHeader | null = options.from?.header ?? null;
    let version = options.from?.version ?? SCHEMA_VERSION;
    let upgrade: ((v: unknown) => unknown) | null = options.from ? migrator('record', version, table, options.targetVersion ?? SCHEMA_VERSION) : null;
    let records = 0;
    let offset = options.from?.offset ?? 0; // file offset of the first byte of `carry`
    let validBytes = offset;
    const until = options.until ?? Infinity;
    // The start of a line not finished yet, as read: joined once its newline comes (joining it
    // with each chunk read was quadratic in a long line: a 50 MB answer's message is one line).
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let sliceStart = performance.now();
    // Held in an object: TypeScript does not see assignments made inside `handleLine`.
    const bad: { line: { offset: number; bytes: number; reason: string } | null } = { line: null };

    const handleLine = (text: string, lineOffset: number, byteLength: number): void => {
      if (bad.line) throw new StoreError('corrupt', `${path}: unreadable line at byte ${bad.line.offset} (${bad.line.reason})`);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        bad.line = { offset: lineOffset, bytes: byteLength, reason: errorMessage(err) };
        return;
      }
      if (isHeader(value)) {
        if (header && value.taskId !== header.taskId) {
          bad.line = { offset: lineOffset, bytes: byteLength, reason: 'header of another task' };
          return;
        }
        header ??= value;
        version = value.schemaVersion;
        upgrade = migrator('record', version, table, options.targetVersion ?? SCHEMA_VERSION);
        return;
      }
      if (!header) throw new StoreError('corrupt', `${path}: the first line is not a Keel task-log header`);
      const rec = upgrade ? upgrade(value) : value;
      if (!isRecord(rec)) {
        bad.line = { offset: lineOffset, bytes: byteLength, reason: 'not an event record' };
        return;
      }
      records++;
      onRecord(rec);
    };

    for (;;) {
      const want = Math.min(chunkBytes, until - (offset + carryBytes));
      if (want <= 0) break;
      const buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await fh.read(buf, 0, want, offset + carryBytes);
      sliceStart = performance.now(); // the read itself was a wait, not work
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      options.onBytes?.(chunk);
      if (chunk.indexOf(NEWLINE) === -1) {
        carry.push(chunk);
        carryBytes += bytesRead;
        if (performance.now() - sliceStart > sliceMs) await yieldToLoop(); // `onBytes` is work
        continue;
      }
      const data = carry.length ? Buffer.concat([...carry, chunk], carryBytes + bytesRead) : chunk;
      let start = 0;
      let n = 0;
      for (let nl = data.indexOf(NEWLINE, start); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
        if (nl > start) {
          handleLine(data.toString('utf8', start, nl), offset + start, nl - start);
          if (!bad.line) validBytes = offset + nl + 1;
        } else if (!bad.line) validBytes = offset + nl + 1;
        start = nl + 1;
        if ((++n & 63) === 0 && performance.now() - sliceStart > sliceMs) {
          await yieldToLoop();
          sliceStart = performance.now();
        }
      }
      offset += start;
      // A copy (at most one chunk: the last newline is in this chunk), so a long line just joined is freed.
      carryBytes = data.length - start;
      carry = carryBytes > 0 ? [Buffer.from(data.subarray(start))] : [];
      if (performance.now() - sliceStart > sliceMs) await yieldToLoop();
    }

    // What is left has no newline: a complete record (kept) or a torn write (dropped).
    let missingNewline = false;
    if (carryBytes > 0) {
      handleLine(Buffer.concat(carry, carryBytes).toString('utf8'), offset, carryBytes);
      if (!bad.line) {
        validBytes = offset + carryBytes;
        missingNewline = true;
      }
    }
    const torn = bad.line;
    if (!header) throw new StoreError('corrupt', `${path}: empty or headerless task log`);
    if (torn) options.log?.('warn', `${path}: dropped a torn last line (${torn.bytes} bytes at byte ${torn.offset}); every earlier event was kept`);
    return { header, records, validBytes, missingNewline, version, torn: torn ? { offset: torn.offset, bytes: torn.bytes } : null };
  } finally {
    await fh.close();
  }
}

/** One turn of the event loop (setImmediate), so other work runs between slices of reading. */
function yieldToLoop(): Promise<void> {
  return new Promise<void>((r) => setImmediate(r));
}

function isHeader(v: unknown): v is LogHeader {
  return typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'keel.task-log' && typeof (v as LogHeader).schemaVersion === 'number' && typeof (v as LogHeader).taskId === 'string';
}

function isRecord(v: unknown): v is LogRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as { at?: unknown; event?: unknown };
  return typeof r.at === 'number' && typeof r.event === 'object' && r.event !== null && typeof (r.event as { type?: unknown }).type === 'string';
}
