import { createHash } from 'node:crypto';
import type { ConversationMessage } from '../../shared/domain/messages';
import type { TranscriptItem } from '../../shared/domain/transcript';
import type { FoldState } from './replay';

/**
 * A snapshot's body, written and read in slices so that neither a host writing a snapshot of a
 * long task nor one resuming it blocks its event loop for long (the extension host runs both):
 * one line with everything but the two long lists, then one line per conversation message, then
 * one line per transcript item. JSON.stringify/parse of one 6 MB value would block for tens of ms.
 */
const SLICE_MS = 5;

const tick = () => new Promise<void>((r) => setImmediate(r));

interface CoreLine extends Omit<FoldState, 'conversation' | 'transcript'> {
  transcript: Omit<FoldState['transcript'], 'items'>;
  conversationLines: number;
  itemLines: number;
}

/** The body's text, built between yields. */
export async function encodeBody(state: FoldState): Promise<string> {
  const { conversation, transcript, ...rest } = state;
  const { items, ...head } = transcript;
  const core: CoreLine = { ...rest, transcript: head, conversationLines: conversation.length, itemLines: items.length };
  const parts: string[] = [JSON.stringify(core)];
  let t0 = performance.now();
  for (const v of [...conversation, ...items]) {
    parts.push(JSON.stringify(v));
    if (performance.now() - t0 > SLICE_MS) {
      await tick();
      t0 = performance.now();
    }
  }
  return parts.join('\n');
}

/** sha256 of `data`, hashed 1 MB at a time between yields. */
export async function sha256Sliced(data: Buffer): Promise<string> {
  const h = createHash('sha256');
  for (let i = 0; i < data.length; i += 1 << 20) {
    h.update(data.subarray(i, Math.min(data.length, i + (1 << 20))));
    if (i + (1 << 20) < data.length) await tick();
  }
  return h.digest('hex');
}

/** The fold state of a body, parsed a line at a time between yields; null when it is not one. */
export async function decodeBody(body: Buffer): Promise<FoldState | null> {
  const lines: unknown[] = [];
  let t0 = performance.now();
  for (let start = 0; start <= body.length; ) {
    let nl = body.indexOf(10, start);
    if (nl < 0) nl = body.length;
    try {
      lines.push(JSON.parse(body.toString('utf8', start, nl)));
    } catch {
      return null;
    }
    start = nl + 1;
    if (performance.now() - t0 > SLICE_MS) {
      await tick();
      t0 = performance.now();
    }
  }
  const [core, ...rest] = lines as [CoreLine, ...unknown[]];
  if (typeof core !== 'object' || core === null || typeof core.conversationLines !== 'number' || typeof core.itemLines !== 'number') return null;
  if (rest.length !== core.conversationLines + core.itemLines || typeof core.transcript !== 'object' || core.transcript === null) return null;
  const { conversationLines, itemLines: _items, transcript, ...fields } = core;
  const state: FoldState = {
    ...fields,
    conversation: rest.slice(0, conversationLines) as ConversationMessage[],
    transcript: { ...transcript, items: rest.slice(conversationLines) as TranscriptItem[] },
  };
  return isFoldState(state) ? state : null;
}

function isFoldState(s: FoldState): boolean {
  return (
    Array.isArray(s.calls) &&
    typeof s.events === 'number' &&
    typeof s.status === 'string' &&
    Array.isArray(s.transcript.toolIndex) &&
    typeof s.transcript.header === 'object' &&
    s.transcript.header !== null
  );
}
