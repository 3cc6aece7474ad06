import { describe, expect, it } from 'vitest';
import { forTerminal, forTerminalLine } from '../../../src/cli/terminalText';

describe('text from files printed to a terminal', () => {
  it('shows control characters, escape sequences and bidi overrides as text; keeps line feeds, tabs and other Unicode', () => {
    expect(forTerminal('\u001b]8;;http://evil.test\u0007click\u001b]8;;\u0007')).toBe('\\x1b]8;;http://evil.test\\x07click\\x1b]8;;\\x07');
    expect(forTerminal('a\rb\bc\u009b2J\u007f')).toBe('a\\x0db\\x08c\\x9b2J\\x7f');
    expect(forTerminal('exe.\u202egnp')).toBe('exe.\\u202egnp');
    expect(forTerminal('line 1\n\tline 2 — café ✓')).toBe('line 1\n\tline 2 — café ✓');
    expect(forTerminalLine('a\nb\tc')).toBe('a\\nb\\tc');
  });
});
