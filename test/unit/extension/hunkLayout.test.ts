import { describe, expect, it } from 'vitest';
import { choicesToSend, hunkAtLine, hunkLayout, showsLayout } from '../../../src/extension/permissions/hunkLayout';

/** The diff editor's proposed side while its changes are reviewed one by one: text and lens positions. */
const BEFORE = ['a', 'b', 'c', 'd', 'e', 'f'].join('\n');
// Change 1 replaces b with B1 B2; change 2 removes e; change 3 adds g at the end.
const AFTER = ['a', 'B1', 'B2', 'c', 'd', 'f', 'g'].join('\n');

describe('hunkLayout', () => {
  it('shows the proposal with every change applied, each change where it sits', () => {
    const l = hunkLayout(BEFORE, AFTER, []);
    expect(l.content).toBe(AFTER);
    expect(l.hunks.map((h) => [h.index, h.line, h.lines, h.choice])).toEqual([
      [0, 1, 2, 'accept'],
      [1, 5, 0, 'accept'],
      [2, 6, 1, 'accept'],
    ]);
  });

  it('a change left out shows the old lines in its place, and the changes after it move', () => {
    const l = hunkLayout(BEFORE, AFTER, [{ kind: 'reject' }, { kind: 'reject' }]);
    expect(l.content).toBe(['a', 'b', 'c', 'd', 'e', 'f', 'g'].join('\n'));
    expect(l.hunks.map((h) => [h.line, h.lines])).toEqual([
      [1, 1],
      [4, 1],
      [6, 1],
    ]);
    expect(hunkAtLine(l.hunks, 4)?.index).toBe(1);
    expect(hunkAtLine(l.hunks, 3)).toBeUndefined();
  });

  it('sends choices only when some change is left out, one per change', () => {
    expect(choicesToSend(3, [{ kind: 'accept' }])).toBeUndefined();
    expect(choicesToSend(3, [undefined, { kind: 'reject' }])).toEqual([{ kind: 'accept' }, { kind: 'reject' }, { kind: 'accept' }]);
  });
});

describe('showsLayout (the diff editor\'s proposed side, untouched or typed into)', () => {
  it('an untouched side whose mixed line endings VS Code made one kind still shows the layout', () => {
    const layout = 'a\r\nb\nc\r\n';
    expect(showsLayout(layout, layout)).toBe(true);
    expect(showsLayout('a\r\nb\r\nc\r\n', layout)).toBe(true);
    expect(showsLayout('a\nb\nc\n', layout)).toBe(true);
  });

  it('any typed character, a line added or removed, is an edit', () => {
    expect(showsLayout('a\nb!\nc\n', 'a\nb\nc\n')).toBe(false);
    expect(showsLayout('a\nb\n\nc\n', 'a\nb\nc\n')).toBe(false);
    expect(showsLayout('a\nc\n', 'a\nb\nc\n')).toBe(false);
    expect(showsLayout('a\nb\nc', 'a\nb\nc\n')).toBe(false);
  });
});
