// @vitest-environment happy-dom
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { taskStateTags } from '../../../src/core/machines/task/taskTags';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { applyTaskEvent, type TaskTranscript, type TranscriptItem } from '../../../src/shared/domain/transcript';
import type { FromWebviewMessage } from '../../../src/shared/protocol/fromWebview';
import type { LoopPageView } from '../../../src/shared/protocol/loopMessages';
import type { StoredTaskState } from '../../../src/shared/protocol/chatMessages';
import type { TaskWorker } from '../../../src/shared/protocol/toWebview';
import { App } from '../../../webview/components/App';
import { ToolCard } from '../../../webview/components/ToolCard';
import { ChatStore } from '../../../webview/store';
import { CONFIG, transcript } from '../protocol/fixtures';

/**
 * The chat page rendered into a real DOM (happy-dom) from what the host sends: what the header,
 * the empty state, the pages, a denied card and the loop page say in words.
 */

/** A raw machine name: camelCase ("runnerRunning", "awaitingUser") or a dotted path. */
const RAW = /\b[a-z]+[A-Z][A-Za-z]*\b|\b[a-z]+\.[a-z]+[A-Z]/;

/** The text a person reads in `el`: its text nodes, each a word group of its own. */
function shown(el: Element): string {
  const out: string[] = [];
  const walk = document.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) if (n.textContent?.trim()) out.push(n.textContent.trim());
  return out.join(' | ');
}

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
  const snapshot = (t: TaskTranscript | null, extra: { worker?: TaskWorker; stored?: StoredTaskState } = {}) => send({ type: 'snapshot', transcript: t, config: CONFIG, ...extra });
  const event = (e: TaskEvent) => send({ type: 'event', event: e });
  const q = (sel: string) => el.querySelector<HTMLElement>(sel);
  return { el, store, posted, send, snapshot, event, q };
}

/** A task in `state`, with the tags the task machine gives it (as the host's transcript has them). */
function taskIn(state: string, over: Partial<TaskTranscript> = {}): TaskTranscript {
  return { ...transcript(), state, tags: taskStateTags(state), ...over };
}

describe('the chat header in words', () => {
  it('a working task on a worker: state and phase in words, no machine names, no pid in the text; the worker in a tooltip', () => {
    const m = mount();
    m.snapshot(taskIn('running', { phases: { run: 1, phase: 'processingToolEvents', durations: { initializing: 12, memorySearch: 40, runnerRunning: 900 } } }), { worker: { id: 'w2', state: 'busy', pid: 4242 } });
    const header = m.q('.keel-header')!;
    expect(m.q('[data-testid="task-state"]')!.textContent).toBe('Working');
    expect(shown(header)).not.toMatch(RAW);
    expect(header.textContent).not.toMatch(/pid|worker/i);
    const worker = m.q('[data-testid="task-worker"]')!;
    expect(worker.getAttribute('title')).toBe('Runs in worker w2 (pid 4242), running this task. Keel: Show Workers lists every worker.');
    expect(worker.dataset.pid).toBe('4242');
    // The run's phases, in words, where they help: the badge's tooltip.
    const tip = m.q('[data-testid="task-state"]')!.parentElement!.getAttribute('title')!;
    expect(tip).toBe('Task state. Run 1: Preparing 12 ms, Searching memory 40 ms, Working 900 ms');
    expect(tip).not.toMatch(RAW);
    // Two lines at most: the title row and one meta line (model, tokens, context), no third.
    expect(header.querySelectorAll(':scope > div')).toHaveLength(2);
    expect(m.q('[data-testid="context-meter"]')!.textContent).toBe('0% context');
    expect(m.q('[data-testid="cancel"]')).not.toBeNull();
  });

  it('the badge says what a run phase does when it says more than "Working", and every state reads as words', () => {
    const m = mount();
    m.snapshot(taskIn('running', { phases: { run: 1, phase: 'memorySearch', durations: {} } }));
    expect(m.q('[data-testid="task-state"]')!.textContent).toBe('Searching memory');
    m.event({ type: 'phase', taskId: 't1', run: 1, phase: 'gatekeeperEvaluating', previous: 'runnerRunning', ms: 5 });
    expect(m.q('[data-testid="task-state"]')!.textContent).toBe('Weighing a lesson to remember');
    m.event({ type: 'phase', taskId: 't1', run: 2, phase: 'runnerRunning', previous: 'runnerStarting', ms: 5 });
    for (const [state, words] of [['awaitingUser', 'Needs you'], ['waitingForSubtask', 'Waiting for a subtask'], ['completed', 'Done'], ['aborted', 'Cancelled']] as const) {
      m.event({ type: 'task', taskId: 't1', state, tags: taskStateTags(state) });
      expect(m.q('[data-testid="task-state"]')!.textContent, state).toBe(words);
      expect(shown(m.q('.keel-header')!)).not.toMatch(RAW);
    }
  });

  it('a running task whose call waits for the person reads "Needs your approval"', () => {
    const m = mount();
    m.snapshot(taskIn('running'));
    m.send({ type: 'permissionRequest', request: { requestId: 'r1', taskId: 't1', toolCallId: 'c1', tool: 'Bash', input: { command: 'ls' }, summary: 'ls', reason: 'a command' } });
    expect(m.q('[data-testid="task-state"]')!.textContent).toBe('Needs your approval');
    m.send({ type: 'permissionResolved', requestId: 'r1', decision: 'allow', source: 'card' });
    expect(m.q('[data-testid="task-state"]')!.textContent).toBe('Working');
  });

  it('busy is what the tags say: Cancel while running, Send once settled', () => {
    const m = mount();
    m.snapshot(taskIn('running'));
    expect(m.q('[data-testid="cancel"]')).not.toBeNull();
    m.event({ type: 'task', taskId: 't1', state: 'completed', tags: ['settled', 'completed'] });
    m.event({ type: 'done', taskId: 't1', status: 'completed', stopReason: 'end_turn' });
    expect(m.q('[data-testid="cancel"]')).toBeNull();
    expect(m.q('[data-testid="send"]')).not.toBeNull();
  });

  it('History, Memory, Settings and Loops keep only their title and the way back: no task header, no composer', () => {
    const m = mount();
    m.snapshot(taskIn('completed'), { worker: { id: 'w1', state: 'ready', pid: 7 } });
    for (const page of ['history', 'memory', 'settings', 'loop'] as const) {
      m.send({ type: 'navigate', page });
      expect(m.q('.keel-header-meta'), page).toBeNull();
      expect(m.q('[data-testid="task-state"]'), page).toBeNull();
      expect(m.q('[data-testid="task-worker"]'), page).toBeNull();
      expect(m.q('[data-testid="prompt-input"]'), page).toBeNull();
      expect(m.q('[data-testid="nav-chat"]'), page).not.toBeNull();
    }
    m.send({ type: 'navigate', page: 'chat' });
    expect(m.q('.keel-header-meta')).not.toBeNull();
    expect(m.q('[data-testid="prompt-input"]')).not.toBeNull();
  });

  it('the empty state names the provider and model, not "mode default" (the selector below says the mode in words)', () => {
    const m = mount();
    m.snapshot(null);
    const empty = m.q('[data-testid="empty-state"]')!;
    expect(empty.textContent).toContain('Demo · demo model');
    expect(empty.textContent).not.toMatch(/mode \w/i);
    expect(m.q('[data-testid="mode-select"] option[value="default"]')!.textContent).toBe('Ask before edits');
  });

  it('a task another window still runs: "Running in another window", that window in words, and the composer off', () => {
    const m = mount();
    const stored: StoredTaskState = { status: 'running', resumable: true, heldElsewhere: 'another VS Code window (since 10:31)' };
    // The log read from the other window may lag behind it; the header says what the lock says.
    m.snapshot({ ...taskIn('completed'), done: true }, { stored });
    expect(m.q('[data-testid="task-state"]')!.textContent).toBe('Running in another window');
    expect(m.q('[data-testid="stored-banner"]')!.textContent).toContain('Running in another VS Code window (since 10:31)');
    expect(m.q('[data-testid="stored-banner"]')!.textContent).not.toMatch(/pid/);
    const input = m.q('[data-testid="prompt-input"]') as HTMLTextAreaElement;
    expect(input.disabled).toBe(true);
    expect(input.placeholder).toMatch(/another VS Code window runs this task/i);
    expect((m.q('[data-testid="send"]') as HTMLButtonElement).disabled).toBe(true);
  });

  it('a denied call says so once', () => {
    let t = taskIn('running');
    for (const e of [
      { type: 'tool_call', taskId: 't1', id: 'c1', name: 'Edit', input: { file_path: 'a.ts', old_string: 'a', new_string: 'b' } },
      { type: 'permission', taskId: 't1', requestId: 'r1', toolCallId: 'c1', tool: 'Edit', decision: 'deny', reason: 'denied by the user' },
      { type: 'tool_result', taskId: 't1', id: 'c1', is_error: true, summary: 'denied: denied by the user' },
      { type: 'tool_call', taskId: 't1', id: 'c2', name: 'Bash', input: { command: 'rm -rf build' } },
      { type: 'permission', taskId: 't1', requestId: 'r2', toolCallId: 'c2', tool: 'Bash', decision: 'deny', reason: 'plan mode refuses commands that change things' },
      { type: 'tool_result', taskId: 't1', id: 'c2', is_error: true, summary: 'denied: plan mode refuses commands that change things' },
    ] satisfies TaskEvent[]) t = applyTaskEvent(t, e);
    root = document.createElement('div');
    document.body.appendChild(root);
    const el = root;
    const card = (item: TranscriptItem) => {
      act(() => render(h(ToolCard, { item: item as Extract<TranscriptItem, { kind: 'tool' }>, awaitingPermission: false, onOpenDiff: () => undefined, onOpenSubtask: () => undefined }), el));
      return el.querySelector<HTMLElement>('[data-testid="tool-card"]')!;
    };
    const edit = card(t.items[0]!);
    expect(edit.dataset.status).toBe('denied');
    expect(edit.textContent!.match(/denied/gi)).toHaveLength(1);
    expect(edit.querySelector('[data-testid="tool-denied"]')!.textContent!.trim()).toBe('Denied by the user');
    const bash = card(t.items[1]!);
    expect(bash.textContent!.match(/denied/gi)).toHaveLength(1);
    expect(bash.querySelector('[data-testid="tool-denied"]')!.textContent!.trim()).toBe('Denied: plan mode refuses commands that change things');
    expect(bash.querySelector('[data-testid="exit-code"]')).toBeNull();
  });
});

describe('the loop page', () => {
  const loop = (over: Partial<LoopPageView> = {}): LoopPageView => ({
    name: 'port-the-parser',
    goal: 'Port the parser, **keep** the `api`',
    status: 'active',
    iteration: 2,
    settings: { maxIterations: 3, stopWord: 'DONE', checkpoints: false },
    reasons: ['the stop word **DONE** is not in the progress file'],
    initialProgress: '',
    iterations: [
      { n: 1, taskId: 'a', startedAt: 1, endedAt: 2, reasons: ['**no** stop word'], verdict: 'continue', status: 'completed' },
      { n: 2, taskId: 'b', startedAt: 3, endedAt: 4, reasons: [], verdict: 'continue', status: 'aborted', stopReason: 'end_turn: It said **almost** done.' },
      { n: 3, taskId: 'c', startedAt: 5, reasons: [] },
    ],
    driver: 'here',
    ...over,
  });

  it('renders Markdown (no literal **), counts the running iteration, and says statuses in words', () => {
    const m = mount();
    m.snapshot(null);
    m.send({ type: 'navigate', page: 'loop' });
    m.send({ type: 'loops', state: { loops: [loop()], problems: [], available: true } });
    const page = m.q('[data-testid="loop-page"]')!;
    expect(page.textContent).not.toContain('**');
    expect(m.q('[data-testid="loop-goal"] strong')!.textContent).toBe('keep');
    expect(m.q('[data-testid="loop-goal"] code')!.textContent).toBe('api');
    expect(m.q('[data-testid="loop-progress"]')!.textContent).toMatch(/^iteration 3 of at most 3 ·/);
    expect(m.q('[data-testid="loop-stop-reason"] strong')!.textContent).toBe('almost');
    expect(m.q('[data-testid="loop-stop-reason"]')!.textContent).toBe('Ended with: It said almost done.\n');
    expect(m.q('[data-n="2"] [data-testid="loop-verdict"]')!.textContent).toBe('continue');
    expect(shown(page)).not.toMatch(RAW);
    m.send({ type: 'loops', state: { loops: [loop({ status: 'complete', iteration: 3, iterations: loop().iterations.map((i) => ({ ...i, endedAt: i.endedAt ?? 6 })) })], problems: [], available: true } });
    expect(m.q('[data-testid="loop-progress"]')!.textContent).toMatch(/^3 of at most 3 iterations ·/);
  });

  it('HTML in a goal is shown as text and a link goes to the host', () => {
    const m = mount();
    m.snapshot(null);
    m.send({ type: 'navigate', page: 'loop' });
    m.send({ type: 'loops', state: { loops: [loop({ goal: 'See [the docs](https://example.com) <img src=x onerror="document.body.dataset.pwned=1">' })], problems: [], available: true } });
    expect(m.q('[data-testid="loop-page"] img')).toBeNull();
    expect(m.q('[data-testid="loop-goal"]')!.textContent).toContain('<img');
    act(() => m.q('[data-testid="loop-goal"] a')!.click());
    expect(m.posted).toContainEqual({ type: 'openLink', href: 'https://example.com' });
  });
});

describe('the todo checklist', () => {
  it('is one line under the header while closed and the whole list when opened, updated live', () => {
    const m = mount();
    m.snapshot(taskIn('running'));
    expect(m.q('[data-testid="todos"]')).toBeNull();
    m.event({ type: 'todos', taskId: 't1', todos: [{ content: 'Read the code', status: 'completed' }, { content: 'Run the tests', status: 'in_progress', activeForm: 'Running the tests' }, { content: 'Fix', status: 'pending' }] });
    const box = m.q('[data-testid="todos"]') as HTMLDetailsElement;
    expect(box.open).toBe(false);
    expect(m.q('[data-testid="todos-count"]')!.textContent).toBe(' Todos 1/3');
    expect(m.q('[data-testid="todos-current"]')!.textContent).toBe(' · Running the tests');
    expect([...box.querySelectorAll('[data-testid="todo"]')].map((li) => li.getAttribute('data-status'))).toEqual(['completed', 'in_progress', 'pending']);
    expect(shown(box)).toContain('Run the tests | (in progress)');
    m.event({ type: 'todos', taskId: 't1', todos: [{ content: 'Read the code', status: 'completed' }, { content: 'Run the tests', status: 'completed' }, { content: 'Fix', status: 'completed' }] });
    expect(m.q('[data-testid="todos-count"]')!.textContent).toBe(' Todos 3/3');
  });
});
