import { describe, expect, it } from 'vitest';
import { judge, progressDigest, STALL_SAME_REASONS, STALL_UNCHANGED_PROGRESS, stopReasonOf, type JudgeInput } from '../../../src/core/loop/judge';

/** The judge on its own: every verdict and every threshold, at and just below it. */
const settings = { maxIterations: 50, stopWord: 'DONE' };

function input(over: Partial<JudgeInput> & { progresses?: string[] }): JudgeInput {
  // By default each iteration leaves a different progress file.
  const iteration = over.iteration ?? 1;
  const progresses = over.progresses ?? Array.from({ length: iteration + 1 }, (_, i) => `step ${i}`);
  return {
    iteration,
    progress: over.progress ?? progresses.at(-1)!,
    progressDigests: progresses.map(progressDigest),
    stopReasons: over.stopReasons ?? Array.from({ length: iteration }, (_, i) => `end_turn: answer ${i}`),
    finalMessage: over.finalMessage ?? 'Working on it.',
    settings: over.settings ?? settings,
  };
}

describe('judge', () => {
  it('continues while progress changes and nothing says it is done', () => {
    const j = judge(input({ iteration: 2 }));
    expect(j.verdict).toBe('continue');
    expect(j.reasons).toContain('the progress file changed');
  });

  it('is complete when the stop word is in the progress file, as a word and case-sensitively', () => {
    expect(judge(input({ progress: 'All tests pass.\nDONE\n' })).verdict).toBe('complete');
    expect(judge(input({ progress: 'status: DONE.' })).verdict).toBe('complete');
    expect(judge(input({ progress: 'Not done yet' })).verdict).toBe('continue');
    expect(judge(input({ progress: 'ABANDONED plan' })).verdict).toBe('continue');
    expect(judge(input({ progress: 'FINISHED', settings: { ...settings, stopWord: 'FINISHED' } })).verdict).toBe('complete');
  });

  it('is complete when the final message keeps the configured promise, and not for another promise', () => {
    const s = { ...settings, promise: 'ALL TESTS PASS' };
    expect(judge(input({ finalMessage: 'Done. <promise>ALL TESTS PASS</promise>', settings: s })).verdict).toBe('complete');
    expect(judge(input({ finalMessage: '<promise>\n  ALL   TESTS PASS </promise>', settings: s })).verdict).toBe('complete');
    const wrong = judge(input({ finalMessage: '<promise>SOME TESTS PASS</promise>', settings: s }));
    expect(wrong.verdict).toBe('continue');
    expect(wrong.reasons.join(' ')).toContain('does not match');
    // Without a configured promise, a tag completes nothing.
    expect(judge(input({ finalMessage: '<promise>ALL TESTS PASS</promise>' })).verdict).toBe('continue');
  });

  it('stops at max iterations without the goal, not one before: a limit reached is not a goal reached', () => {
    const s = { ...settings, maxIterations: 4 };
    expect(judge(input({ iteration: 3, settings: s })).verdict).toBe('continue');
    const at = judge(input({ iteration: 4, settings: s }));
    expect(at.verdict).toBe('stopped');
    expect(at.reasons).toContain('stopped: iteration limit reached (4 iterations) without reaching the goal');
    // The last iteration that reaches the goal completes the loop.
    expect(judge(input({ iteration: 4, settings: s, progress: 'DONE' })).verdict).toBe('complete');
  });

  it(`is stalled after the same stop reason ${STALL_SAME_REASONS} times in a row, not ${STALL_SAME_REASONS - 1}`, () => {
    const same = (n: number, before: string[] = []) => [...before, ...Array.from({ length: n }, () => 'failed: overloaded: Overloaded')];
    expect(judge(input({ iteration: 4, stopReasons: same(4) })).verdict).toBe('continue');
    const five = judge(input({ iteration: 5, stopReasons: same(5) }));
    expect(five.verdict).toBe('stalled');
    expect(five.reasons[0]).toContain('overloaded');
    // Broken by a different reason: the count starts again.
    expect(judge(input({ iteration: 6, stopReasons: [...same(2), 'other', ...same(3)] })).verdict).toBe('continue');
  });

  it(`is stalled when the progress file did not change for ${STALL_UNCHANGED_PROGRESS} iterations, not ${STALL_UNCHANGED_PROGRESS - 1}`, () => {
    expect(judge(input({ iteration: 2, progresses: ['a', 'a', 'a'] })).verdict).toBe('continue');
    const three = judge(input({ iteration: 3, progresses: ['a', 'a', 'a', 'a'] }));
    expect(three.verdict).toBe('stalled');
    expect(three.reasons[0]).toContain('did not change');
    // Whitespace alone is no change; a change in between resets it.
    expect(judge(input({ iteration: 3, progresses: ['a b', 'a  b', 'a\nb', 'a b '] })).verdict).toBe('stalled');
    expect(judge(input({ iteration: 4, progresses: ['a', 'a', 'b', 'b', 'b'] })).verdict).toBe('continue');
  });

  it('completion wins over a stall', () => {
    expect(judge(input({ iteration: 3, progresses: ['DONE', 'DONE', 'DONE', 'DONE'] })).verdict).toBe('complete');
  });

  it('names stop reasons by failure, or by the final answer', () => {
    expect(stopReasonOf({ status: 'failed', stopReason: null, error: { code: 'max_turns', message: 'Stopped after 3 model calls.\nmore' }, finalMessage: '' })).toBe('failed: max_turns: Stopped after 3 model calls.');
    expect(stopReasonOf({ status: 'completed', stopReason: 'end_turn', finalMessage: 'I  could not\nfind it' })).toBe('end_turn: I could not find it');
    expect(stopReasonOf({ status: 'aborted', stopReason: null, finalMessage: '' })).toBe('aborted');
  });
});
