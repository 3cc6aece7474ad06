// @vitest-environment happy-dom
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { applyTaskEvent } from '../../../src/shared/domain/transcript';
import type { FromWebviewMessage } from '../../../src/shared/protocol/fromWebview';
import { App } from '../../../webview/components/App';
import { sentLabel, UserMessage } from '../../../webview/components/Messages';
import { ChatStore } from '../../../webview/store';
import { CONFIG, transcript } from '../protocol/fixtures';

/**
 * A message typed as `/review src/greet.ts` and sent as its command's text reads, in the chat, as
 * the person typed it; a button under it shows (and hides) what it sent. A queued one shows, and
 * goes back to the box, as typed.
 */
const EXPANDED = 'Review src/greet.ts carefully and list what is wrong.';
let root: HTMLElement | undefined;
let restore: (() => unknown) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  if (root) render(null, root);
  root?.remove();
  root = undefined;
});

function container(): HTMLElement {
  root = document.createElement('div');
  document.body.appendChild(root);
  return root;
}

describe('a message typed as a command', () => {
  it('reads as typed; the disclosure button shows and hides what it sent', () => {
    const el = container();
    act(() => render(h(UserMessage, { text: EXPANDED, typed: '/review src/greet.ts' }), el));
    expect(el.querySelector('[data-testid="message-user-text"]')!.textContent).toBe('/review src/greet.ts');
    expect(el.textContent).not.toContain(EXPANDED);
    const toggle = el.querySelector<HTMLButtonElement>('[data-testid="message-user-sent-toggle"]')!;
    // A real button (focusable, Enter and Space press it) saying what it opens, and whether it is open.
    expect(toggle.tagName).toBe('BUTTON');
    expect(toggle.type).toBe('button');
    expect(toggle.textContent).toBe('Show what /review sent');
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(el.querySelector('[data-testid="message-user-sent"]')).toBeNull();

    act(() => toggle.click());
    const sent = el.querySelector<HTMLElement>('[data-testid="message-user-sent"]')!;
    expect(sent.textContent).toBe(EXPANDED);
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(toggle.getAttribute('aria-controls')).toBe(sent.id);
    expect(toggle.textContent).toBe('Hide what /review sent');

    act(() => toggle.click());
    expect(el.querySelector('[data-testid="message-user-sent"]')).toBeNull();
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
  });

  it('a message sent as typed has no disclosure', () => {
    const el = container();
    act(() => render(h(UserMessage, { text: 'plain words' }), el));
    expect(el.querySelector('[data-testid="message-user-text"]')!.textContent).toBe('plain words');
    expect(el.querySelector('[data-testid="message-user-sent-toggle"]')).toBeNull();
  });

  it('names the command it ran, else "this message"', () => {
    expect(sentLabel('/git:review a.ts "focus"')).toBe('/git:review');
    expect(sentLabel('  /mcp__docs__summary')).toBe('/mcp__docs__summary');
    expect(sentLabel('read @docs:file:///a.md')).toBe('this message');
  });

  it('in the chat: the transcript shows the typed line, and a queued command shows and comes back as typed', () => {
    // happy-dom lays nothing out: the transcript gets a height, so that its rows are rendered.
    const had = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
    Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 600 });
    restore = () => (had ? Object.defineProperty(HTMLElement.prototype, 'clientHeight', had) : Reflect.deleteProperty(HTMLElement.prototype, 'clientHeight'));
    const el = container();
    const posted: FromWebviewMessage[] = [];
    const store = new ChatStore({ schedule: (f) => f() });
    act(() => render(h(App, { store, post: (m: FromWebviewMessage) => posted.push(m) }), el));
    let seq = 0;
    const send = (m: Record<string, unknown>) => act(() => store.receive({ ...m, seq: ++seq }));
    const events: TaskEvent[] = [{ type: 'user_message', taskId: 't1', id: 'u1', text: EXPANDED, typed: '/review src/greet.ts' }];
    const t = { ...events.reduce(applyTaskEvent, transcript()), state: 'running', tags: taskStateTags('running') };
    send({ type: 'snapshot', transcript: t, config: CONFIG });
    const message = el.querySelector('[data-testid="message-user"]')!;
    expect(message.querySelector('[data-testid="message-user-text"]')!.textContent).toBe('/review src/greet.ts');
    act(() => message.querySelector<HTMLButtonElement>('[data-testid="message-user-sent-toggle"]')!.click());
    expect(el.querySelector('[data-testid="message-user-sent"]')!.textContent).toBe(EXPANDED);

    const event = (e: TaskEvent) => send({ type: 'event', event: e });
    event({ type: 'queued', taskId: 't1', message: { id: 'q1', text: 'Review b.ts carefully.', typed: '/review b.ts' } });
    const pending = el.querySelector('[data-testid="queued-message"]')!;
    expect(pending.querySelector('.keel-queued-text')!.textContent).toBe('/review b.ts');
    expect(pending.querySelector('[data-testid="queued-cancel"]')!.getAttribute('aria-label')).toBe('Cancel queued message: /review b.ts');
    // The run is cancelled: the command goes back to the box as typed (sending it again expands it again).
    event({ type: 'unqueued', taskId: 't1', ids: ['q1'], outcome: 'returned' });
    expect(el.querySelector<HTMLTextAreaElement>('[data-testid="prompt-input"]')!.value).toBe('/review b.ts');
  });
});
