import { mkdir, open, readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomicFile';
import { PRIVATE_DIR, PRIVATE_FILE } from './privateFiles';
import { canCheck, CHECKSUM, runningChecksum, type ChecksumKind, type RunningChecksum } from './checksum';
import { checksumSliced, decodeBody, encodeBody } from './snapshotBody';
import type { FoldState } from './replay';
import { SCHEMA_VERSION } from './types';
import { errorMessage } from '../../shared/domain/errors';
import { processAlive } from '../locks/processAlive';

/**
 * One snapshot file, `tasks/<id>/snapshots/<offset>.snap`: the folded state of a task's log up to
 * a byte offset (docs/persistence.md, "Snapshots"). A head line (JSON, below), then the body
 * (the FoldState, in frames: snapshotBody.ts). The head says which log and which prefix of it the body folds, so a
 * reader can tell, without reading that prefix, whether the snapshot still agrees with the log.
 */
export const SNAPSHOT_FORMAT = 4;
/**
 * Formats this Keel reads: 4 only. A snapshot is the log folded by the rules of the Keel that
 * wrote it, so when the rules change, so does the format, and older snapshots are passed over
 * (the log is folded again, and the task's next driver writes a new one): format 3 and 2 read an
 * attempt given up for a retry as interrupted, with Resume (28 Nov 2026); format 1 held JSON lines
 * and a sampled prefix.
 */
const READABLE_FORMATS: readonly number[] = [SNAPSHOT_FORMAT];

export interface SnapshotHead {
  type: 'keel.task-snapshot';
  /** The file format (SNAPSHOT_FORMAT). */
  format: number;
  /** The log schema the body's state was folded with (SCHEMA_VERSION when it was written). */
  schemaVersion: number;
  taskId: string;
  /** Bytes of events.jsonl folded into the body: the tail is read from here. A line boundary. */
  logOffset: number;
  /** The log's schema version in effect at `logOffset` (a later header line may change it). */
  logVersion: number;
  /** Event records folded. */
  records: number;
  /** The checksum used below (checksum.ts): `crc32` where this Node has it, else `sha256`. */
  checksum: ChecksumKind;
  /** Of the log's first `logOffset` bytes, its header line included: any edit of the folded prefix, even one that keeps its length, differs. */
  prefixChecksum: string;
  /** Length and checksum of the body: a truncated or altered body is refused. */
  bodyBytes: number;
  bodyChecksum: string;
  createdAt: number;
}

export const SNAPSHOT_DIR = 'snapshots';
const NAME = /^(\d{16})\.snap$/;
const TMP = /^\d{16}\.snap\.(\d+)\.[a-z0-9]+\.tmp$/;
/** How much of the log is read (and checked) at a time when a snapshot is checked against it: few reads, each a turn of the event loop. */
const HASH_CHUNK = 4 << 20;

export function snapshotName(offset: number): string {
  return `${String(offset).padStart(16, '0')}.snap`;
}

/** Snapshot files of a task folder, newest (largest offset) first. Never throws. */
export async function listSnapshots(taskDir: string): Promise<{ name: string; offset: number }[]> {
  let names: string[];
  try {
    names = await readdir(join(taskDir, SNAPSHOT_DIR));
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, m: NAME.exec(name) }))
    .filter((x): x is { name: string; m: RegExpExecArray } => x.m !== null)
    .map((x) => ({ name: x.name, offset: Number(x.m[1]) }))
    .sort((a, b) => b.offset - a.offset);
}

/**
 * What a snapshot must agree with, read from the log itself: its first line, and the checksum of
 * its first `offset` bytes, read HASH_CHUNK at a time into two buffers in turn, so that the next
 * chunk is read (on the thread pool) while this one is checksummed (on the event loop); the header
 * line and the byte before `offset` are taken from those chunks, not read again. The running
 * checksum comes back so a task's driver can go on with the log after it. Cost: one read of the
 * prefix and, with CRC-32, ~0.2 ms of CPU per MB (`snapshot_prefix_check_ms` in the store bench).
 * Returns null when the log is shorter than `offset`, `offset` is not the end of a line, or no
 * line ends before it.
 */
export async function hashLogPrefix(logPath: string, offset: number, kind: ChecksumKind = CHECKSUM): Promise<{ header: Buffer; sum: RunningChecksum } | null> {
  if (offset < 1) return null;
  const fh = await open(logPath, 'r');
  const size = Math.min(HASH_CHUNK, offset);
  // The second buffer is made when a second read is needed (a long prefix, or a short read).
  const bufs: (Buffer | null)[] = [Buffer.allocUnsafe(size), null];
  let pending: Promise<{ bytesRead: number; buffer: Buffer }> | null = fh.read(bufs[0]!, 0, size, 0);
  try {
    const sum = runningChecksum(kind);
    const headParts: Buffer[] = [];
    let header: Buffer | null = null;
    for (let pos = 0, turn = 0; pos < offset; ) {
      const { bytesRead, buffer } = await pending!;
      pending = null;
      if (bytesRead === 0) return null;
      const chunk = buffer.subarray(0, bytesRead);
      const next: number = pos + bytesRead;
      if (next < offset) {
        turn ^= 1;
        const into = (bufs[turn] ??= Buffer.allocUnsafe(size));
        pending = fh.read(into, 0, Math.min(size, offset - next), next);
      } else if (chunk[bytesRead - 1] !== 10) return null;
      if (!header) {
        const nl = chunk.indexOf(10);
        // Copied: the buffer is read into again.
        headParts.push(Buffer.from(nl >= 0 ? chunk.subarray(0, nl) : chunk));
        if (nl >= 0) header = Buffer.concat(headParts);
      }
      sum.update(chunk);
      pos = next;
    }
    return header ? { header, sum } : null;
  } finally {
    // A read still in flight (the log ended early) finishes before the file is closed.
    await pending?.catch(() => undefined);
    await fh.close();
  }
}

/**
 * Writes a snapshot atomically (temp file, fsync, rename, fsync of the folder): a crash leaves the
 * old set of snapshots or the new one, never a partial file under a snapshot's name. The caller
 * makes sure the log is durable up to `at.logOffset` first and gives the running checksum of those bytes
 * (a driver hashes them as it folds them). Throws on I/O errors.
 */
export async function writeSnapshot(
  taskDir: string,
  logPath: string,
  taskId: string,
  at: { logOffset: number; logVersion: number; records: number; prefix: RunningChecksum },
  state: FoldState,
): Promise<string> {
  if (!(await endsLine(logPath, at.logOffset))) throw new Error(`the log is not ${at.logOffset} bytes of whole lines`);
  const body = await encodeBody(state);
  const head: SnapshotHead = {
    type: 'keel.task-snapshot',
    format: SNAPSHOT_FORMAT,
    schemaVersion: SCHEMA_VERSION,
    taskId,
    logOffset: at.logOffset,
    logVersion: at.logVersion,
    records: at.records,
    checksum: at.prefix.kind,
    prefixChecksum: at.prefix.digest(),
    bodyBytes: body.length,
    bodyChecksum: await checksumSliced(body, at.prefix.kind),
    createdAt: Date.now(),
  };
  const dir = join(taskDir, SNAPSHOT_DIR);
  await mkdir(dir, { recursive: false, mode: PRIVATE_DIR }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const path = join(dir, snapshotName(at.logOffset));
  await writeFileAtomic(path, Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`), body]), PRIVATE_FILE);
  return path;
}

/** Whether the log's first `offset` bytes end a line. */
async function endsLine(logPath: string, offset: number): Promise<boolean> {
  const fh = await open(logPath, 'r');
  try {
    if (offset < 1 || offset > (await fh.stat()).size) return false;
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, offset - 1);
    return last[0] === 10;
  } finally {
    await fh.close();
  }
}

/** A snapshot read and checked against the log, or why it cannot be used. */
export type SnapshotCheck = { ok: true; head: SnapshotHead; state: FoldState; header: Buffer; prefix: RunningChecksum } | { ok: false; reason: string };

/**
 * Reads one snapshot and checks it: format and schema version, the body's length and checksum,
 * the task id, and that the log still holds the prefix it folded (the same checksum of
 * its first `logOffset` bytes, which end a line). Never throws.
 */
export async function readSnapshot(taskDir: string, logPath: string, taskId: string, name: string): Promise<SnapshotCheck> {
  let text: Buffer;
  try {
    text = await readFile(join(taskDir, SNAPSHOT_DIR, name));
  } catch (err) {
    return { ok: false, reason: `cannot be read (${errorMessage(err)})` };
  }
  const nl = text.indexOf(10);
  if (nl < 0) return { ok: false, reason: 'is truncated (no body)' };
  let head: SnapshotHead;
  try {
    head = JSON.parse(text.toString('utf8', 0, nl)) as SnapshotHead;
  } catch {
    return { ok: false, reason: 'has an unreadable head' };
  }
  if (typeof head !== 'object' || head === null || head.type !== 'keel.task-snapshot') return { ok: false, reason: 'is not a Keel snapshot' };
  if (!READABLE_FORMATS.includes(head.format)) return { ok: false, reason: `has format ${String(head.format)}, this Keel reads ${READABLE_FORMATS.join(' and ')}` };
  if (head.schemaVersion !== SCHEMA_VERSION) return { ok: false, reason: `was written for log schema ${String(head.schemaVersion)}, this Keel reads ${SCHEMA_VERSION}` };
  if (head.taskId !== taskId) return { ok: false, reason: 'belongs to another task' };
  if (NAME.exec(name)?.[1] !== snapshotName(head.logOffset).slice(0, 16)) return { ok: false, reason: 'is named for another offset' };
  if (!canCheck(head.checksum)) return { ok: false, reason: `uses a checksum this Keel cannot compute (${String(head.checksum)})` };
  const body = text.subarray(nl + 1);
  if (body.length !== head.bodyBytes) return { ok: false, reason: `is truncated or padded (${body.length} of ${head.bodyBytes} bytes)` };
  // The log's prefix is read (on the thread pool) while the body is checked and decoded (here): a
  // resume waits for the longer of the two, not for both. A decoded body is dropped if the log disagrees.
  const printing = hashLogPrefix(logPath, head.logOffset, head.checksum).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
  if ((await checksumSliced(body, head.checksum)) !== head.bodyChecksum) {
    await printing; // no read of the log outlives this call
    return { ok: false, reason: 'fails its checksum' };
  }
  const [print, state] = await Promise.all([printing, decodeBody(body)]);
  if (print instanceof Error) return { ok: false, reason: `cannot be checked against the log (${print.message})` };
  if (!print) return { ok: false, reason: `refers to byte ${head.logOffset}, past the end of the log's last whole line` };
  if (print.sum.digest() !== head.prefixChecksum) return { ok: false, reason: 'does not match the log (the log was edited, rewritten or replaced)' };
  if (!state || state.events !== head.records) return { ok: false, reason: 'has a body of the wrong shape' };
  return { ok: true, head, state, header: print.header, prefix: print.sum };
}

/**
 * Keeps the newest `keep` snapshots of a task and removes the rest, and temp files left by a
 * process that died while writing one (its pid is gone). Never throws.
 */
export async function removeOldSnapshots(taskDir: string, keep: number): Promise<void> {
  const dir = join(taskDir, SNAPSHOT_DIR);
  const all = await listSnapshots(taskDir);
  for (const s of all.slice(Math.max(0, keep))) await unlink(join(dir, s.name)).catch(() => undefined);
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = TMP.exec(name);
    if (m && !processAlive(Number(m[1]))) await unlink(join(dir, name)).catch(() => undefined);
  }
}

/** Removes one snapshot (a damaged one, by the task's driver). Never throws. */
export async function removeSnapshot(taskDir: string, name: string): Promise<void> {
  await unlink(join(taskDir, SNAPSHOT_DIR, name)).catch(() => undefined);
}
