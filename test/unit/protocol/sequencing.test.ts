import { describe, expect, it } from 'vitest';
import { INITIAL_SEQUENCE_STATE, type SequenceState, acceptMessage } from '../../../src/shared/protocol/sequencing';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { CONFIG } from './fixtures';

const snap = (seq: number): ToWebviewMessage => ({ type: 'snapshot', seq, transcript: null, config: CONFIG });
const ev = (seq: number): ToWebviewMessage => ({ type: 'event', seq, event: { type: 'text', taskId: 't1', delta: String(seq) } });
const err = (seq: number): ToWebviewMessage => ({ type: 'error', seq, message: 'm' });

/** Runs messages through the rule and returns the seqs that were applied. */
function applied(messages: ToWebviewMessage[], start: SequenceState = INITIAL_SEQUENCE_STATE): number[] {
  let state = start;
  const out: number[] = [];
  for (const m of messages) {
    const v = acceptMessage(state, m);
    state = v.state;
    if (v.apply) out.push(m.seq);
  }
  return out;
}

describe('webview sequencing', () => {
  it('applies an in-order stream', () => {
    expect(applied([snap(1), ev(2), ev(3), err(4)])).toEqual([1, 2, 3, 4]);
  });

  it('drops duplicates', () => {
    expect(applied([snap(1), ev(2), ev(2), ev(3), ev(3), snap(1)])).toEqual([1, 2, 3]);
  });

  it('drops messages that arrive after a later one', () => {
    expect(applied([snap(1), ev(2), ev(4), ev(3), ev(5)])).toEqual([1, 2, 4, 5]);
  });

  it('drops events before the first snapshot', () => {
    expect(applied([ev(1), ev(2), snap(3), ev(4)])).toEqual([3, 4]);
    expect(acceptMessage(INITIAL_SEQUENCE_STATE, ev(1))).toMatchObject({ apply: false, reason: 'beforeSnapshot' });
  });

  it('applies a later snapshot (task switch) and continues from it', () => {
    expect(applied([snap(1), ev(2), snap(3), ev(4)])).toEqual([1, 2, 3, 4]);
  });

  it('reports a gap but still applies the newer event', () => {
    const v = acceptMessage({ lastSeq: 2, hasSnapshot: true }, ev(5));
    expect(v).toEqual({ apply: true, state: { lastSeq: 5, hasSnapshot: true }, gap: 2 });
  });

  it('never mutates the state it is given', () => {
    const s: SequenceState = { lastSeq: 1, hasSnapshot: true };
    acceptMessage(s, ev(2));
    expect(s).toEqual({ lastSeq: 1, hasSnapshot: true });
  });
});
