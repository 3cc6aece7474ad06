// @vitest-environment happy-dom
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { applyTaskEvent, type TaskTranscript } from '../../../src/shared/domain/transcript';
import type { FromWebviewMessage } from '../../../src/shared/protocol/fromWebview';
import { App } from '../../../webview/components/App';
import { ChatStore } from '../../../webview/store';
import { CONFIG, transcript } from '../protocol/fixtures';

/**
 * What the chat shows of an answer cut off before its end, and of Keel waiting on a quiet answer,
 * as a person sees the page: an attempt given up for a retry reads "Abandoned — retried below"
 * with no Resume; Resume is offered only where it continues something (the last answer of an
 * interrupted task); the waiting line is there while the transcript says so, after a reload too.
 */
const T = 't1';
let root: HTMLElement | undefined;
let restore: (() => unknown) | undefined;

beforeEach(() => {
  // happy-dom lays nothing out: the transcript gets a height, so that its rows are rendered.
  const had = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 600 });
  restore = () => (had ? Object.defineProperty(HTMLElement.prototype, 'clientHeight', had) : Reflect.deleteProperty(HTMLElement.prototype, 'clientHeight'));
});
afterEach(() => {
  restore?.();
  restore = undefined;
  if (root) render(null, root);
  root?.remove();
  root = undefined;
});

/** A chat page showing `t`; `event` folds more events in, as the host sends them. */
function page(t: TaskTranscript) {
  if (root) render(null, root);
  root?.remove();
  root = document.createElement('div');
  document.body.appendChild(root);
  const el = root;
  const posted: FromWebviewMessage[] = [];
  const store = new ChatStore({ schedule: (f) => f() });
  act(() => render(h(App, { store, post: (m: FromWebviewMessage) => posted.push(m) }), el));
  let seq = 0;
  const send = (m: Record<string, unknown>) => act(() => store.receive({ ...m, seq: ++seq }));
  send({ type: 'snapshot', transcript: t, config: CONFIG });
  return {
    el,
    posted,
    event: (e: TaskEvent) => send({ type: 'event', event: e }),
    text: (testid: string) => Array.from(el.querySelectorAll(`[data-testid="${testid}"]`)).map((n) => n.textContent?.replace(/\s+/g, ' ').trim()),
  };
}

function fold(events: TaskEvent[], state: string): TaskTranscript {
  return { ...events.reduce(applyTaskEvent, transcript(T)), state, tags: taskStateTags(state) };
}

const asked: TaskEvent = { type: 'user_message', taskId: T, id: 'u1', text: 'Tell me about the workspace.' };
const firstAttempt: TaskEvent[] = [asked, { type: 'assistant_start', taskId: T, messageId: 'a1', model: 'm' }, { type: 'text', taskId: T, delta: 'The first words' }];
const retry: TaskEvent = { type: 'retry', taskId: T, attempt: 1, delayMs: 1000, code: 'stream_stalled', message: 'Anthropic sent no part of the answer for 2 s; the answer was abandoned.' };
const answered: TaskEvent[] = [
  { type: 'assistant_start', taskId: T, messageId: 'a2', model: 'm' },
  { type: 'text', taskId: T, delta: 'Answered on the retry.' },
  { type: 'done', taskId: T, status: 'completed', stopReason: 'end_turn' },
];

describe('an answer cut off before its end', () => {
  it('given up for a retry: "Abandoned — retried below", muted, no Resume, the retry’s answer after it', () => {
    const p = page(fold([...firstAttempt, retry, ...answered], 'completed'));
    expect(p.text('retried')).toEqual(['Abandoned — retried below']);
    expect(p.text('interrupted')).toEqual([]);
    expect(p.el.querySelector('[data-testid="resume"]')).toBeNull();
    const answers = Array.from(p.el.querySelectorAll('[data-testid="message-assistant"]'));
    expect(answers.map((a) => a.getAttribute('data-cut-off'))).toEqual(['retried', null]);
    expect(answers[1]!.textContent).toContain('Answered on the retry.');
  });

  it('interrupted, in a task that is interrupted: Resume, which asks the host to resume', () => {
    const p = page(fold(firstAttempt.concat({ type: 'error', taskId: T, code: 'worker_lost', message: 'The worker stopped.', retryable: true }), 'interrupted'));
    expect(p.text('interrupted')).toEqual(['Interrupted Resume']);
    act(() => p.el.querySelector<HTMLButtonElement>('[data-testid="resume"]')!.click());
    expect(p.posted).toContainEqual({ type: 'resume' });
  });

  it('interrupted earlier in a task that went on and is done: said, but no Resume (there is nothing to continue)', () => {
    const interrupted = firstAttempt.concat({ type: 'error', taskId: T, code: 'worker_lost', message: 'The worker stopped.', retryable: true });
    const resumed: TaskEvent[] = [{ type: 'user_message', taskId: T, id: 'u2', text: 'Continue.' }, ...answered];
    const p = page(fold([...interrupted, ...resumed], 'completed'));
    expect(p.text('interrupted')).toEqual(['Interrupted']);
    expect(p.el.querySelector('[data-testid="resume"]')).toBeNull();
  });
});

describe('Keel waiting on a quiet answer', () => {
  const waiting: TaskEvent = { type: 'waiting', taskId: T, quietMs: 500, stallAfterMs: 2000 };
  const NOTICE = 'No part of the answer for 0.5 s; Keel waits up to 2 s of silence, then gives this attempt up as stalled and tries again.';

  it('shows while it is true: gone with the next part of the answer, back with the next silence, gone with the retry', () => {
    const p = page(fold(firstAttempt, 'running'));
    expect(p.text('waiting')).toEqual([]);
    p.event(waiting);
    expect(p.text('waiting')).toEqual([NOTICE]);
    // A line under the answer that streams; no item was added to the conversation.
    expect(p.el.querySelector('[data-testid="message-assistant"] [data-testid="waiting"]')).not.toBeNull();
    expect(p.el.querySelectorAll('.keel-row')).toHaveLength(2);
    p.event({ type: 'text', taskId: T, delta: ', then more' });
    expect(p.text('waiting')).toEqual([]);
    p.event(waiting);
    expect(p.text('waiting')).toEqual([NOTICE]);
    p.event(retry);
    expect(p.text('waiting')).toEqual([]);
  });

  it('survives a reload of the page while it is true (the snapshot carries it), and goes when the answer moves', () => {
    const host = fold([...firstAttempt, waiting], 'running');
    const p = page(host);
    expect(p.text('waiting')).toEqual([NOTICE]);
    p.event({ type: 'waiting_ended', taskId: T });
    expect(p.text('waiting')).toEqual([]);
  });

  it('before any of the answer came (headers, then silence): under the conversation, gone when the answer starts', () => {
    const p = page(fold([asked, waiting], 'running'));
    expect(p.text('waiting')).toEqual([NOTICE]);
    expect(p.el.querySelector('.keel-row [data-testid="waiting"]')).toBeNull();
    p.event({ type: 'assistant_start', taskId: T, messageId: 'a1', model: 'm' });
    expect(p.text('waiting')).toEqual([]);
  });

  it('goes when the task is cancelled', () => {
    const p = page(fold([...firstAttempt, waiting], 'running'));
    p.event({ type: 'done', taskId: T, status: 'aborted', stopReason: null });
    expect(p.text('waiting')).toEqual([]);
  });
});
