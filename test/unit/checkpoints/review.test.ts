import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hunksOf } from '../../../src/shared/diff/lineDiff';
import { choicesFromText, reviewOf } from '../../../src/shared/domain/review';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { PermissionAsker, PermissionRequest } from '../../../src/core/permissions/gate';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { ListProvider, textTurn, toolTurn } from '../helpers/scriptedEvents';

const BEFORE = ['function greet(name) {', '  return "Hello, " + name;', '}', '', 'function part(name) {', '  return "Bye, " + name;', '}', ''].join('\n');
const AFTER = BEFORE.replace('"Hello, "', '"Hi, "').replace('"Bye, "', '"Farewell, "');

describe('a proposed edit reviewed hunk by hunk', () => {
  it('applies, leaves out or replaces each change exactly', () => {
    expect(hunksOf(BEFORE, AFTER)).toHaveLength(2);
    const r = reviewOf(BEFORE, AFTER, [{ kind: 'accept' }, { kind: 'reject' }]);
    expect(r.content).toBe(BEFORE.replace('"Hello, "', '"Hi, "'));
    expect([r.accepted, r.rejected, r.edited]).toEqual([[1], [2], []]);
    const e = reviewOf(BEFORE, AFTER, [{ kind: 'reject' }, { kind: 'edit', lines: ['  return "See you, " + name;'] }]);
    expect(e.content).toBe(BEFORE.replace('"Bye, "', '"See you, "'));
    expect(e.edits).toEqual([{ hunk: 2, lines: ['  return "See you, " + name;'] }]);
  });

  it('reads a freely edited proposal back as the choices that make it (property)', () => {
    const line = fc.constantFrom('a', 'b', 'c', 'd', 'e', '');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(line, { maxLength: 12 }), fc.array(fc.constantFrom('accept', 'reject'), { maxLength: 12 }), (a, b, picks) => {
        const before = a.join('\n');
        const after = b.join('\n');
        const hunks = hunksOf(before, after);
        const choices = hunks.map((h) => ({ kind: (picks[h.index] ?? 'accept') as 'accept' | 'reject' }));
        const text = reviewOf(before, after, choices).content;
        const back = choicesFromText(before, after, text);
        if (back) expect(reviewOf(before, after, back).content).toBe(text);
      }),
      { numRuns: 400 },
    );
  });

  it('a text typed freely (the diff editor) is read back, when it can be, as choices that write exactly it (property)', () => {
    const line = fc.constantFrom('a', 'b', 'c', 'd', 'e', '');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(line, { maxLength: 12 }), fc.array(line, { maxLength: 12 }), (a, b, c) => {
        const before = a.join('\n');
        const after = b.join('\n');
        const typed = c.join('\n');
        const back = choicesFromText(before, after, typed);
        if (back) expect(reviewOf(before, after, back).content).toBe(typed);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('the partial outcome, in a run', () => {
  it('writes exactly the accepted hunk, records the decision and tells the model which change did not land', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'keel-review-ws-'));
    writeFileSync(join(ws, 'greet.js'), BEFORE);
    const storage = mkdtempSync(join(tmpdir(), 'keel-review-st-'));
    const provider = new ListProvider([toolTurn('toolu_edit', 'Write', { file_path: 'greet.js', content: AFTER }), textTurn('ok')]);
    const asked: PermissionRequest[] = [];
    const asker: PermissionAsker = {
      async ask(req) {
        asked.push(req);
        const diff = req.subject.kind === 'write' ? req.subject.diff! : null;
        return { decision: 'allow', review: reviewOf(diff!.before, diff!.after, [{ kind: 'accept' }, { kind: 'reject' }]) };
      },
    };
    const runtime = new TaskRuntime({ workspace: ws, storageDir: storage, providerFactory: () => provider, asker, ownerLabel: 'test' });
    const task = runtime.startTask({ prompt: 'shorten the greetings', provider: { provider: 'anthropic', model: 'claude-sonnet-4-5' }, mode: 'default' });
    const events: TaskEvent[] = [];
    task.subscribe((e) => events.push(e));
    await task.settled();
    runtime.dispose();
    expect(asked).toHaveLength(1);
    expect(readFileSync(join(ws, 'greet.js'), 'utf8')).toBe(BEFORE.replace('"Hello, "', '"Hi, "'));
    const decision = events.find((e) => e.type === 'permission' && e.decision === 'allow');
    expect(decision).toMatchObject({ reason: 'allowed in part by the user after a review of each change: change 1 applied, change 2 left out (of 2)' });
    const told = JSON.stringify(provider.requests[1]!.messages.at(-1));
    expect(told).toContain('1 of 2 applied as you proposed');
    expect(told).toContain('Change 2 (old lines 6–6): NOT applied');
    expect(told).toContain('Bye, ');
  });
});
