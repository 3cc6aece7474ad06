import { createHash, type Hash } from 'node:crypto';
import * as zlib from 'node:zlib';

/**
 * The checksum a snapshot keeps of the log prefix it folds and of its own body
 * (docs/persistence.md, "Snapshots"). CRC-32 (zlib's, ~3 GB/s here) where this Node has it
 * (`zlib.crc32`, Node ≥ 20.15 and every VS Code since 1.92), else SHA-256 (~0.7 GB/s). Either
 * catches an edit a person or a broken disk makes — any change of up to 32 consecutive bits,
 * and all but one in 2³² of the rest; neither is a defence against someone who may write Keel's
 * files, who could rewrite the snapshot as easily. A snapshot names the one it used; a reader
 * without it passes the snapshot over.
 */
export type ChecksumKind = 'crc32' | 'sha256';

const crc32 = typeof zlib.crc32 === 'function' ? zlib.crc32 : null;

/** The checksum this process writes. */
export const CHECKSUM: ChecksumKind = crc32 ? 'crc32' : 'sha256';

/** Whether this process can check a snapshot made with `kind`. */
export function canCheck(kind: unknown): kind is ChecksumKind {
  return kind === 'sha256' || (kind === 'crc32' && crc32 !== null);
}

/** A checksum fed a buffer at a time; `digest` may be taken any number of times as it goes. */
export interface RunningChecksum {
  readonly kind: ChecksumKind;
  update(data: Buffer): void;
  digest(): string;
}

export function runningChecksum(kind: ChecksumKind = CHECKSUM): RunningChecksum {
  if (kind === 'crc32') {
    const fn = crc32;
    if (!fn) throw new Error('CRC-32 is not available in this Node');
    let value = 0;
    return {
      kind,
      update: (data) => {
        value = fn(data, value);
      },
      digest: () => value.toString(16).padStart(8, '0'),
    };
  }
  const hash: Hash = createHash('sha256');
  return {
    kind,
    update: (data) => {
      hash.update(data);
    },
    digest: () => hash.copy().digest('hex'),
  };
}
