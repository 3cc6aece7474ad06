import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { applyTaskEvent, emptyTranscript } from '../../../src/shared/domain/transcript';

/** What the chat and `keel tasks show` fold from a run's context, gatekeeper and phase events. */
const fold = (events: TaskEvent[]) => events.reduce(applyTaskEvent, emptyTranscript('t1', 'x', 'm'));

describe('the transcript of a run with instructions, memories and phases', () => {
  it('one context item per run says which instructions files and memories were used', () => {
    const t = fold([
      { type: 'instructions', taskId: 't1', run: 1, files: ['CLAUDE.md', 'KEEL.md'] },
      { type: 'memory', taskId: 't1', run: 1, hits: [{ file: 'a.md', title: 'A', score: 12 }, { file: 'b.md', title: 'B', score: 9 }], tokens: 80 },
      { type: 'memory', taskId: 't1', run: 2, hits: [{ file: 'c.md', title: 'C', score: 10 }], tokens: 20 },
    ]);
    expect(t.items).toEqual([
      { kind: 'context', id: 'ctx-0', run: 1, instructions: ['CLAUDE.md', 'KEEL.md'], memories: [{ file: 'a.md', title: 'A' }, { file: 'b.md', title: 'B' }] },
      { kind: 'context', id: 'ctx-1', run: 2, instructions: [], memories: [{ file: 'c.md', title: 'C' }] },
    ]);
  });

  it('a saved or rejected lesson is shown; a skipped decision stays in the log only', () => {
    const t = fold([
      { type: 'gatekeeper', taskId: 't1', run: 1, decision: 'skipped', rule: 'real-model', reasons: ['the demo model ran this task'] },
      { type: 'gatekeeper', taskId: 't1', run: 2, decision: 'rejected', rule: 'secret', reasons: ['it contains what looks like a secret (aws)'] },
      { type: 'gatekeeper', taskId: 't1', run: 3, decision: 'saved', rule: 'accepted', reasons: ['ok'], file: 'x.md', title: 'X' },
    ]);
    expect(t.items.map((i) => (i.kind === 'gatekeeper' ? `${i.decision} ${i.rule}` : i.kind))).toEqual(['rejected secret', 'saved accepted']);
  });

  it('the header holds the current run, its phase and the time spent in each phase', () => {
    const t = fold([
      { type: 'phase', taskId: 't1', run: 1, phase: 'initializing', previous: 'idle', ms: 0 },
      { type: 'phase', taskId: 't1', run: 1, phase: 'memorySearch', previous: 'initializing', ms: 5 },
      { type: 'phase', taskId: 't1', run: 1, phase: 'runnerRunning', previous: 'memorySearch', ms: 3 },
      { type: 'phase', taskId: 't1', run: 1, phase: 'processingToolEvents', previous: 'runnerRunning', ms: 100 },
      { type: 'phase', taskId: 't1', run: 1, phase: 'runnerRunning', previous: 'processingToolEvents', ms: 40 },
      { type: 'phase', taskId: 't1', run: 1, phase: 'failed', previous: 'runnerRunning', ms: 10, failure: 'runnerRunning: overloaded' },
    ]);
    expect(t.phases).toEqual({ run: 1, phase: 'failed', durations: { initializing: 5, memorySearch: 3, runnerRunning: 110, processingToolEvents: 40 }, failure: 'runnerRunning: overloaded' });
    const next = applyTaskEvent(t, { type: 'phase', taskId: 't1', run: 2, phase: 'initializing', previous: 'idle', ms: 0 });
    expect(next.phases).toEqual({ run: 2, phase: 'initializing', durations: {} });
  });
});
