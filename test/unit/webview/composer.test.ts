// @vitest-environment happy-dom
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { TaskTranscript } from '../../../src/shared/domain/transcript';
import type { FromWebviewMessage } from '../../../src/shared/protocol/fromWebview';
import type { MentionItem } from '../../../src/shared/protocol/toWebview';
import { App } from '../../../webview/components/App';
import { UserMessage } from '../../../webview/components/Messages';
import { ChatStore } from '../../../webview/store';
import { admitImages } from '../../../webview/images';
import { CONFIG, transcript } from '../protocol/fixtures';

/**
 * The composer rendered into a real DOM (happy-dom) and driven from the keyboard as a person
 * would: `@` opens the list, arrows move, Enter or Tab pick, Escape closes; each mention is a chip
 * with a remove button; queued messages show as pending, each with a cancel button.
 */
let root: HTMLElement | undefined;
afterEach(() => {
  if (root) render(null, root);
  root?.remove();
  root = undefined;
});

function mount() {
  const posted: FromWebviewMessage[] = [];
  const store = new ChatStore({ schedule: (f) => f() });
  root = document.createElement('div');
  document.body.appendChild(root);
  const el = root;
  act(() => render(h(App, { store, post: (m: FromWebviewMessage) => posted.push(m) }), el));
  let seq = 0;
  const send = (m: Record<string, unknown>) => act(() => store.receive({ ...m, seq: ++seq }));
  const input = () => el.querySelector<HTMLTextAreaElement>('[data-testid="prompt-input"]')!;
  const type = (value: string) =>
    act(() => {
      const box = input();
      box.value = value;
      box.setSelectionRange(value.length, value.length);
      box.dispatchEvent(new Event('input', { bubbles: true }));
    });
  const key = (k: string, init: KeyboardEventInit = {}) => act(() => void input().dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true, ...init })));
  const lastQuery = () => posted.filter((m): m is Extract<FromWebviewMessage, { type: 'mentionQuery' }> => m.type === 'mentionQuery').at(-1);
  const answer = (items: MentionItem[]) => send({ type: 'mentionResults', queryId: lastQuery()!.queryId, items });
  const all = (sel: string) => [...el.querySelectorAll<HTMLElement>(sel)];
  return { el, store, posted, send, input, type, key, lastQuery, answer, all };
}

const ITEMS: MentionItem[] = [
  { kind: 'problems', insert: 'problems', label: 'problems', detail: 'errors and warnings of the workspace' },
  { kind: 'problems', insert: 'problems:src/a.ts', label: 'problems in src/a.ts', detail: 'errors and warnings of the open file' },
  { kind: 'folder', insert: 'src/', label: 'src/' },
];

function working(over: Partial<TaskTranscript> = {}): TaskTranscript {
  return { ...transcript(), state: 'running', tags: taskStateTags('running'), ...over };
}

describe('the composer from the keyboard', () => {
  it('@ lists what can be mentioned; arrows move, Enter picks; the mention becomes a chip; its remove button takes it out of the text', () => {
    const m = mount();
    m.send({ type: 'snapshot', transcript: null, config: CONFIG });
    m.type('look at @pro');
    expect(m.lastQuery()?.query).toBe('pro');
    m.answer(ITEMS);
    const options = () => m.all('[data-testid="mention-option"]');
    expect(options().map((o) => o.getAttribute('aria-selected'))).toEqual(['true', 'false', 'false']);
    expect(m.input().getAttribute('aria-expanded')).toBe('true');
    m.key('ArrowDown');
    expect(options().map((o) => o.getAttribute('aria-selected'))).toEqual(['false', 'true', 'false']);
    expect(m.input().getAttribute('aria-activedescendant')).toBe('keel-mention-1');
    m.key('ArrowUp');
    m.key('ArrowUp');
    // Up from the first wraps to the last.
    expect(options().map((o) => o.getAttribute('aria-selected'))).toEqual(['false', 'false', 'true']);
    m.key('ArrowDown');
    m.key('ArrowDown');
    m.key('Enter');
    // Enter picked (it did not send): the text has the mention, the list is gone, a chip shows it.
    expect(m.posted.some((p) => p.type === 'prompt')).toBe(false);
    expect(m.input().value).toBe('look at @problems:src/a.ts ');
    expect(options()).toHaveLength(0);
    expect(m.all('[data-testid="mention-chip"]').map((c) => c.textContent)).toEqual(['problems in src/a.ts']);

    // Tab picks too; a second mention is a second chip.
    m.type('look at @problems:src/a.ts and @sr');
    m.answer(ITEMS.slice(2));
    m.key('Tab');
    expect(m.input().value).toBe('look at @problems:src/a.ts and @src/ ');
    expect(m.all('[data-testid="mention-chip"]').map((c) => c.textContent)).toEqual(['problems in src/a.ts', 'src/']);

    // Removing a chip (a button: reached with Tab, pressed with Enter or Space) removes its mention.
    const remove = m.all('[data-testid="mention-chip-remove"]')[0]!;
    expect(remove.getAttribute('aria-label')).toBe('Remove problems in src/a.ts');
    act(() => remove.click());
    expect(m.input().value).toBe('look at and @src/ ');
    expect(m.all('[data-testid="mention-chip"]').map((c) => c.textContent)).toEqual(['src/']);

    m.key('Enter');
    expect(m.posted.filter((p) => p.type === 'prompt')).toEqual([{ type: 'prompt', text: 'look at and @src/ ' }]);
    expect(m.input().value).toBe('');
  });

  it('Enter picks a / command; keys typed right after land after it, in order, however late the next frame comes', async () => {
    const m = mount();
    m.send({ type: 'snapshot', transcript: null, config: CONFIG });
    m.type('/revi');
    const query = m.posted.filter((p): p is Extract<FromWebviewMessage, { type: 'commandQuery' }> => p.type === 'commandQuery').at(-1)!;
    expect(query.query).toBe('revi');
    m.send({ type: 'commandResults', queryId: query.queryId, commands: [{ name: 'review', description: 'Review a file', arguments: [], hint: 'FILE' }] });
    m.key('Enter');
    expect(m.input().value).toBe('/review ');
    // A person typing on: each key goes in where the caret is, as a browser puts it.
    const typeKey = (ch: string) =>
      act(() => {
        const box = m.input();
        const at = box.selectionStart ?? box.value.length;
        box.value = box.value.slice(0, at) + ch + box.value.slice(at);
        box.setSelectionRange(at + 1, at + 1);
        box.dispatchEvent(new Event('input', { bubbles: true }));
      });
    for (const ch of 'src') typeKey(ch);
    // Frames and timers run (a late frame used to put the caret back after "/review ").
    await new Promise((r) => setTimeout(r, 50));
    for (const ch of '/greet.ts') typeKey(ch);
    expect(m.input().value).toBe('/review src/greet.ts');
    m.key('Enter');
    expect(m.posted.filter((p) => p.type === 'prompt')).toEqual([{ type: 'prompt', text: '/review src/greet.ts' }]);
  });

  it('Escape closes the list and keeps the text; a second Escape with nothing open does not send', () => {
    const m = mount();
    m.send({ type: 'snapshot', transcript: null, config: CONFIG });
    m.type('see @gi');
    m.answer([{ kind: 'git', insert: 'git', label: 'git' }]);
    expect(m.all('[data-testid="mention-option"]')).toHaveLength(1);
    m.key('Escape');
    expect(m.all('[data-testid="mention-option"]')).toHaveLength(0);
    expect(m.input().value).toBe('see @gi');
    // With the list closed, Enter sends what was typed.
    m.key('Enter');
    expect(m.posted.filter((p) => p.type === 'prompt')).toEqual([{ type: 'prompt', text: 'see @gi' }]);
  });

  it('a message while Keel works shows as pending, with a cancel button that withdraws it; a cancelled run gives the queue back to the box', () => {
    const m = mount();
    const t = working();
    m.send({ type: 'snapshot', transcript: t, config: CONFIG });
    expect(m.el.querySelector('[data-testid="send"]')).toBeNull();
    m.type('and then the tests');
    expect(m.el.querySelector('[data-testid="send"]')!.textContent).toContain('Queue');
    m.key('Enter');
    expect(m.posted.filter((p) => p.type === 'prompt').at(-1)).toEqual({ type: 'prompt', text: 'and then the tests' });
    const event = (e: TaskEvent) => m.send({ type: 'event', event: e });
    event({ type: 'queued', taskId: t.taskId, message: { id: 'q1', text: 'and then the tests' } });
    event({ type: 'queued', taskId: t.taskId, message: { id: 'q2', text: 'also the docs', attachments: [{ kind: 'file', label: 'README.md' }], images: [{ name: 'shot.png', mediaType: 'image/png', bytes: 70 }] } });
    const pending = m.all('[data-testid="queued-message"]');
    expect(pending.map((p) => p.querySelector('.keel-queued-text')!.textContent)).toEqual(['and then the tests', 'also the docs']);
    expect(m.el.querySelector('[data-testid="queued"]')!.textContent).toContain('2 queued — sent together when Keel finishes this turn');
    expect(pending[1]!.querySelector('[data-testid="attachment"]')!.textContent).toContain('README.md');
    expect(pending[1]!.querySelector('[data-testid="message-image"]')!.textContent).toBe('shot.png');
    const cancel = pending[0]!.querySelector<HTMLButtonElement>('[data-testid="queued-cancel"]')!;
    expect(cancel.getAttribute('aria-label')).toBe('Cancel queued message: and then the tests');
    act(() => cancel.click());
    expect(m.posted.at(-1)).toEqual({ type: 'withdrawQueued', id: 'q1' });
    event({ type: 'unqueued', taskId: t.taskId, ids: ['q1'], outcome: 'withdrawn' });
    expect(m.all('[data-testid="queued-message"]')).toHaveLength(1);
    // Cancelling the run gives what is still queued back to the box, before what is being written.
    m.type('half written');
    event({ type: 'unqueued', taskId: t.taskId, ids: ['q2'], outcome: 'returned' });
    expect(m.all('[data-testid="queued-message"]')).toHaveLength(0);
    expect(m.input().value).toBe('also the docs\nhalf written');
  });
});

/** A 1×1 PNG. */
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

function paste(target: HTMLElement, files: File[]) {
  const e = new Event('paste', { bubbles: true, cancelable: true });
  Object.defineProperty(e, 'clipboardData', { value: { files, types: ['Files'] } });
  act(() => void target.dispatchEvent(e));
  return e;
}

describe('images in the composer', () => {
  it('only PNG, JPEG, GIF and WebP of at most 5 MB, 20 to a message; each other one is said', () => {
    const f = (name: string, type: string, size = 10) => ({ name, type, size });
    const r = admitImages(18, [f('a.png', 'image/png'), f('b.bmp', 'image/bmp'), f('big.jpg', 'image/jpeg', 6 * 1024 * 1024), f('c.webp', 'image/webp'), f('d.gif', 'image/gif')]);
    expect(r.admitted.map((x) => x.name)).toEqual(['a.png', 'c.webp']);
    expect(r.problems).toEqual([
      'b.bmp is not a PNG, JPEG, GIF or WebP image',
      'big.jpg is 6.0 MB; an image may be at most 5.0 MB',
      'd.gif was not added: a message may carry at most 20 images',
    ]);
  });

  it('a pasted image shows as a thumbnail with a remove button and goes with the message; a wrong file is said and not added', async () => {
    const m = mount();
    m.send({ type: 'snapshot', transcript: null, config: CONFIG });
    paste(m.input(), [new File([PNG], 'shot.png', { type: 'image/png' })]);
    await vi.waitFor(() => expect(m.all('[data-testid="composer-image"]')).toHaveLength(1));
    const thumb = m.el.querySelector<HTMLImageElement>('[data-testid="composer-image"] img')!;
    expect(thumb.getAttribute('alt')).toBe('shot.png');
    expect(thumb.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    paste(m.input(), [new File(['BM'], 'old.bmp', { type: 'image/bmp' })]);
    await vi.waitFor(() => expect(m.el.querySelector('[data-testid="image-problems"]')?.textContent).toBe('old.bmp is not a PNG, JPEG, GIF or WebP image.'));
    expect(m.all('[data-testid="composer-image"]')).toHaveLength(1);
    m.type('what is in this screenshot?');
    m.key('Enter');
    const prompt = m.posted.find((p) => p.type === 'prompt');
    expect(prompt).toMatchObject({ type: 'prompt', text: 'what is in this screenshot?', images: [{ name: 'shot.png', data: btoa(String.fromCharCode(...PNG)) }] });
    expect(m.all('[data-testid="composer-image"]')).toHaveLength(0);

    // Removing one before sending: it does not go.
    paste(m.input(), [new File([PNG], 'again.png', { type: 'image/png' })]);
    await vi.waitFor(() => expect(m.all('[data-testid="composer-image"]')).toHaveLength(1));
    const remove = m.el.querySelector<HTMLButtonElement>('[data-testid="composer-image-remove"]')!;
    expect(remove.getAttribute('aria-label')).toBe('Remove image again.png');
    act(() => remove.click());
    m.type('no image now');
    m.key('Enter');
    expect(m.posted.filter((p) => p.type === 'prompt').at(-1)).toEqual({ type: 'prompt', text: 'no image now' });
  });

  it('the transcript shows a sent message’s images: its preview, else its name', () => {
    const thumb = `data:image/png;base64,${btoa(String.fromCharCode(...PNG))}`;
    root = document.createElement('div');
    document.body.appendChild(root);
    const el = root;
    const images = [{ name: 'a.png', mediaType: 'image/png', bytes: 70, thumbnail: thumb }, { name: 'cli.png', mediaType: 'image/png', bytes: 70 }];
    act(() => render(h(UserMessage, { text: 'look', images }), el));
    const shown = [...el.querySelectorAll('[data-testid="message-image"]')];
    expect(shown).toHaveLength(2);
    expect(shown[0]!.querySelector('img')?.getAttribute('src')).toBe(thumb);
    expect(shown[0]!.querySelector('img')?.getAttribute('alt')).toBe('a.png');
    expect(shown[1]!.textContent).toBe('cli.png');
  });

});
