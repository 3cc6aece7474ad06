import { deserialize, serialize } from 'node:v8';
import type { ConversationMessage } from '../../shared/domain/messages';
import type { TranscriptItem } from '../../shared/domain/transcript';
import { runningChecksum, type ChecksumKind } from './checksum';
import type { FoldState } from './replay';

/**
 * A snapshot's body, written and read in slices so that neither a host writing a snapshot of a
 * long task nor one resuming it blocks its event loop for long (the extension host runs both).
 * Frames, each a 4-byte little-endian length and a value in V8's serialization format
 * (`v8.serialize`: documented as safe to store, and read back ~1.5× faster than JSON.parse of
 * the same data — the body is most of a resume's work): first everything but the two long lists
 * with their lengths, then the conversation messages and the transcript items, CHUNK to a frame.
 * A body another V8 cannot read is refused like a damaged one (the log is read instead).
 */
const SLICE_MS = 5;
/** Messages or items per frame: ~1 MB of a typical transcript, a few ms to read (fewer, larger frames read faster). */
const CHUNK = 2048;

const tick = () => new Promise<void>((r) => setImmediate(r));

interface CoreFrame extends Omit<FoldState, 'conversation' | 'transcript'> {
  transcript: Omit<FoldState['transcript'], 'items'>;
  conversationCount: number;
  itemCount: number;
}

/** The body's bytes, built between yields. */
export async function encodeBody(state: FoldState): Promise<Buffer> {
  const { conversation, transcript, ...rest } = state;
  const { items, ...head } = transcript;
  const core: CoreFrame = { ...rest, transcript: head, conversationCount: conversation.length, itemCount: items.length };
  const frames: Buffer[] = [];
  const add = (value: unknown) => {
    const data = serialize(value);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(data.length);
    frames.push(length, data);
  };
  add(core);
  let t0 = performance.now();
  for (const list of [conversation, items] as unknown[][]) {
    for (let i = 0; i < list.length; i += CHUNK) {
      add(list.slice(i, i + CHUNK));
      if (performance.now() - t0 > SLICE_MS) {
        await tick();
        t0 = performance.now();
      }
    }
  }
  return Buffer.concat(frames);
}

/** The checksum of `data`, 1 MB at a time between yields (a SHA-256 of a long body takes a while). */
export async function checksumSliced(data: Buffer, kind: ChecksumKind): Promise<string> {
  const sum = runningChecksum(kind);
  for (let i = 0; i < data.length; i += 1 << 20) {
    sum.update(data.subarray(i, Math.min(data.length, i + (1 << 20))));
    if (kind === 'sha256' && i + (1 << 20) < data.length) await tick();
  }
  return sum.digest();
}

/** The fold state of a body, read a frame at a time between yields; null when it is not one. */
export async function decodeBody(body: Buffer): Promise<FoldState | null> {
  const values: unknown[] = [];
  let t0 = performance.now();
  for (let at = 0; at < body.length; ) {
    if (at + 4 > body.length) return null;
    const length = body.readUInt32LE(at);
    if (at + 4 + length > body.length) return null;
    try {
      values.push(deserialize(body.subarray(at + 4, at + 4 + length)));
    } catch {
      return null;
    }
    at += 4 + length;
    if (performance.now() - t0 > SLICE_MS) {
      await tick();
      t0 = performance.now();
    }
  }
  const [core, ...chunks] = values as [CoreFrame, ...unknown[]];
  if (typeof core !== 'object' || core === null || typeof core.conversationCount !== 'number' || typeof core.itemCount !== 'number') return null;
  if (!chunks.every(Array.isArray) || typeof core.transcript !== 'object' || core.transcript === null) return null;
  // A format-2 body also holds the transcript's tool index: the items say the same (transcriptBuilder.ts).
  const { conversationCount, itemCount, transcript: withIndex, ...fields } = core;
  const { toolIndex: _formerIndex, ...transcript } = withIndex as typeof withIndex & { toolIndex?: unknown };
  const conversation: ConversationMessage[] = [];
  const items: TranscriptItem[] = [];
  for (const chunk of chunks as unknown[][]) {
    for (const v of chunk) {
      if (conversation.length < conversationCount) conversation.push(v as ConversationMessage);
      else items.push(v as TranscriptItem);
    }
  }
  if (items.length !== itemCount) return null;
  const state: FoldState = { ...fields, conversation, transcript: { ...transcript, items } };
  return isFoldState(state) ? state : null;
}

function isFoldState(s: FoldState): boolean {
  return (
    Array.isArray(s.calls) &&
    typeof s.events === 'number' &&
    typeof s.status === 'string' &&
    Array.isArray(s.transcript.items) &&
    typeof s.transcript.lastAssistant === 'number' &&
    typeof s.transcript.header === 'object' &&
    s.transcript.header !== null
  );
}
