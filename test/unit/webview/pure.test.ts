import { describe, expect, it } from 'vitest';
import { diffLines, withContext } from '../../../webview/diff';
import { formatSeconds, tailLines } from '../../../webview/format';
import { highlight } from '../../../webview/highlight';
import { activeMention, insertMention } from '../../../webview/mentions';

describe('webview helpers', () => {
  it('diffLines aligns changed lines and folds unchanged runs', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join('\n');
    const after = ['a', 'b', 'c', 'd', 'E', 'f', 'g', 'h', 'i', 'j', 'k'].join('\n');
    const d = diffLines(before, after);
    expect(d.filter((l) => l.kind !== 'same')).toEqual([
      { kind: 'del', text: 'e' },
      { kind: 'add', text: 'E' },
      { kind: 'add', text: 'k' },
    ]);
    expect(withContext(d, 1).map((l) => (l ? `${l.kind[0]}${l.text}` : '…'))).toEqual(['…', 'sd', 'de', 'aE', 'sf', '…', 'sj', 'ak']);
    expect(diffLines(null, 'x\ny')).toEqual([{ kind: 'add', text: 'x' }, { kind: 'add', text: 'y' }]);
  });

  it('highlight only emits escaped text inside its own spans', () => {
    const html = highlight('const s = "<img src=x onerror=alert(1)>"; // </span><script>', 'ts');
    expect(html).toContain('<span class="tok-kw">const</span>');
    expect(html).toContain('<span class="tok-str">&quot;&lt;img src=x onerror=alert(1)&gt;&quot;</span>');
    expect(html).toContain('<span class="tok-com">// &lt;/span&gt;&lt;script&gt;</span>');
    expect(html.replace(/<span class="tok-(kw|str|com|num|fn)">|<\/span>/g, '')).not.toMatch(/[<>]/);
    expect(highlight('x = 1 # note', 'python')).toContain('<span class="tok-com"># note</span>');
  });

  it('mentions: the @word before the caret, and picking a file replaces it', () => {
    expect(activeMention('look at @src/gr', 15)).toEqual({ start: 8, query: 'src/gr' });
    expect(activeMention('mail me@example.com', 19)).toBeUndefined();
    expect(activeMention('@', 1)).toEqual({ start: 0, query: '' });
    expect(insertMention('look at @src/gr please', 8, 15, 'src/greet.ts')).toEqual({ text: 'look at @src/greet.ts  please', caret: 22 });
  });

  it('tailLines keeps the last lines of long output; formatSeconds rounds up to a second', () => {
    const out = Array.from({ length: 10 }, (_, i) => `line ${i}`).join('\n');
    expect(tailLines(out, 3)).toEqual({ text: 'line 7\nline 8\nline 9', dropped: 7 });
    expect(tailLines('a\nb', 5)).toEqual({ text: 'a\nb', dropped: 0 });
    expect(formatSeconds(200)).toBe('1 s');
    expect(formatSeconds(12_400)).toBe('12 s');
    expect(formatSeconds(65_000)).toBe('1 min 5 s');
  });
});

describe('slash commands in the composer', () => {
  it('a / at the start of the message is a command query while the caret is in it', async () => {
    const { activeSlash, insertSlash, argumentHint } = await import('../../../webview/slashCommands');
    expect(activeSlash('/', 1)).toEqual({ query: '' });
    expect(activeSlash('/mcp__ev', 8)).toEqual({ query: 'mcp__ev' });
    expect(activeSlash('/mcp__ev more', 12)).toBeUndefined();
    expect(activeSlash('see /mcp', 8)).toBeUndefined();
    expect(activeSlash(' /mcp', 5)).toBeUndefined();
    expect(insertSlash('/mcp__ev', 8, 'mcp__everything__args-prompt')).toEqual({ text: '/mcp__everything__args-prompt ', caret: 30 });
    expect(insertSlash('/mc Paris', 3, 'mcp__e__p')).toEqual({ text: '/mcp__e__p Paris', caret: 11 });
    expect(argumentHint([{ name: 'city', required: true }, { name: 'state', required: false }])).toBe('city [state]');
  });
});
