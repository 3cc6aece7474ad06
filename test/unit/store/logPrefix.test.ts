import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { runningChecksum } from '../../../src/core/store/checksum';
import { hashLogPrefix } from '../../../src/core/store/snapshotFile';

// What a snapshot is checked against (snapshotFile.ts): the log's header line and the checksum of
// every byte of its first `offset` bytes, read a few MB at a time.
const dir = mkdtempSync(join(tmpdir(), 'keel-prefix-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A log of `lines` lines after its header, each `width` bytes with its newline. */
function log(name: string, lines: number, width: number): { path: string; bytes: Buffer; ends: number[] } {
  const header = '{"type":"keel.task-log","schemaVersion":1,"taskId":"t"}\n';
  const parts = [header];
  for (let i = 0; i < lines; i++) parts.push(`${JSON.stringify({ at: i, event: { type: 'text', delta: 'x'.repeat(Math.max(0, width - 40)) } })}\n`);
  const bytes = Buffer.from(parts.join(''));
  const ends: number[] = [];
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) ends.push(i + 1);
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return { path, bytes, ends };
}

const sumOf = (b: Buffer) => {
  const s = runningChecksum();
  s.update(b);
  return s.digest();
};

describe('hashLogPrefix', () => {
  it('checksums every byte of a prefix longer than one read (several chunks) and returns the header line', async () => {
    // ~9 MB: three reads of 4 MB into two buffers in turn.
    const { path, bytes, ends } = log('long.jsonl', 9000, 1000);
    for (const at of [ends[0]!, ends[4200]!, ends[8500]!, bytes.length]) {
      const got = await hashLogPrefix(path, at);
      expect(got?.sum.digest()).toBe(sumOf(bytes.subarray(0, at)));
      expect(got?.header.toString()).toBe('{"type":"keel.task-log","schemaVersion":1,"taskId":"t"}');
    }
    if (typeof zlib.crc32 === 'function') expect((await hashLogPrefix(path, bytes.length))?.sum.digest()).toBe(zlib.crc32(bytes).toString(16).padStart(8, '0'));
  });

  it('goes on from where it stopped: the running checksum of the prefix, then the rest, is that of the whole', async () => {
    const { path, bytes, ends } = log('go-on.jsonl', 200, 300);
    const got = await hashLogPrefix(path, ends[100]!);
    got!.sum.update(bytes.subarray(ends[100]!));
    expect(got!.sum.digest()).toBe(sumOf(bytes));
  });

  it('is null when the offset is not the end of a line, lies past the end of the log, or no line ends before it', async () => {
    const { path, bytes, ends } = log('short.jsonl', 50, 200);
    expect(await hashLogPrefix(path, ends[20]! - 1)).toBeNull();
    expect(await hashLogPrefix(path, bytes.length + 200)).toBeNull();
    expect(await hashLogPrefix(path, 0)).toBeNull();
    const noLine = join(dir, 'no-line.jsonl');
    writeFileSync(noLine, 'x'.repeat(100));
    expect(await hashLogPrefix(noLine, 50)).toBeNull();
    // A log longer than one read cut short of the offset: every read in flight ends before it closes.
    const big = log('cut.jsonl', 6000, 1000);
    writeFileSync(big.path, big.bytes.subarray(0, big.ends[5000]!));
    expect(await hashLogPrefix(big.path, big.ends[5500]!)).toBeNull();
  });
});
