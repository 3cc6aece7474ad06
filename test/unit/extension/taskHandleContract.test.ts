import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedEvents } from '../../../src/core/providers/scripted';
import type { ModelProvider, ProviderEvent, ProviderRequest } from '../../../src/core/providers/types';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { TaskHandle } from '../../../src/core/runtime/types';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { FakeRuntime, type FakeTask } from './fakes';
import { Changes } from '../helpers/changes';

/**
 * One contract for every TaskHandle the chat is tested with: the same scenarios run against the
 * runtime's LiveTask (the real task machine, fed by a model the test releases step by step) and
 * against the FakeTask the extension's unit tests use, and both must give the same trace of what
 * a host sees. If LiveTask changes what hosts see, the fake fails here until it follows.
 */

/** How each implementation is driven: the test plays the model; the task does the rest. */
interface Subject {
  start(prompt: string): TaskHandle;
  /** The model answers the current request with `text` (the run then completes). */
  answer(task: TaskHandle, text: string): void;
  /** The current request fails with an error that is not retried (the task then waits for the user). */
  fail(task: TaskHandle, message: string): void;
  dispose(): void;
}

/**
 * A model whose every request waits until the test answers it (the scripted provider's event
 * grammar) or the request is aborted (then it ends `cancelled`, as the real providers do).
 */
class ReleasedModel implements ModelProvider {
  readonly id = 'scripted' as const;
  readonly label = 'released model';
  private readonly waiting: ((step: { text: string } | { error: string }) => void)[] = [];

  get pending(): number {
    return this.waiting.length;
  }

  /** Steps released before their request came: the next request takes the first. */
  private readonly early: ({ text: string } | { error: string })[] = [];

  /** Answers the request waiting for the model, or the next one to come (the test need not race it). */
  release(step: { text: string } | { error: string }): void {
    const next = this.waiting.shift();
    if (next) next(step);
    else this.early.push(step);
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent, void, undefined> {
    const step = await new Promise<{ text: string } | { error: string } | null>((resolve) => {
      const early = this.early.shift();
      if (early) return resolve(early);
      this.waiting.push(resolve);
      signal.addEventListener(
        'abort',
        () => {
          this.waiting.splice(this.waiting.indexOf(resolve), 1);
          resolve(null);
        },
        { once: true },
      );
    });
    if (step === null || signal.aborted) {
      yield { type: 'provider_error', error: { code: 'cancelled', message: 'The request was cancelled.', phase: 'connect', retryable: false } };
      return;
    }
    if ('error' in step) {
      yield { type: 'provider_error', error: { code: 'auth_failed', message: step.error, phase: 'pre-stream', retryable: false } };
      return;
    }
    yield* scriptedEvents({ blocks: [{ type: 'text', text: step.text }] }, request.model);
  }
}


function live(): Subject {
  const model = new ReleasedModel();
  const runtime = new TaskRuntime({ workspace: mkdtempSync(join(tmpdir(), 'keel-contract-')), providerFactory: () => model, limits: { retryBaseMs: 1 } });
  return {
    start: (prompt) => runtime.startTask({ prompt, provider: { provider: 'anthropic', model: 'claude-sonnet-5-5', apiKey: 'k' } }),
    answer: (_task, text) => model.release({ text }),
    fail: (_task, message) => model.release({ error: message }),
    dispose: () => runtime.dispose(),
  };
}

function fake(): Subject {
  const runtime = new FakeRuntime();
  return {
    start: (prompt) => runtime.startTask({ prompt, provider: { provider: 'anthropic', model: 'claude-sonnet-5-5', apiKey: 'k' } }),
    answer: (task, text) => (task as FakeTask).answer(text),
    fail: (task, message) => (task as FakeTask).fail('auth_failed', message),
    dispose: () => runtime.dispose(),
  };
}

/**
 * What a host sees, without what only the real machines produce (turn and stream states, usage,
 * conversation records) or what differs by construction (ids, titles, how text is chunked).
 */
function trace(events: TaskEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    switch (e.type) {
      case 'user_message':
        out.push(`user_message ${e.text}`);
        break;
      case 'queued':
        out.push(`queued ${e.message.text}`);
        break;
      case 'unqueued':
        out.push(`unqueued ${e.outcome} ${e.ids.length}`);
        break;
      case 'task':
        out.push(`task ${e.state}`);
        break;
      case 'assistant_start':
        out.push('assistant_start');
        break;
      case 'text':
        if (out.at(-1)?.startsWith('text ')) out[out.length - 1] += e.delta;
        else out.push(`text ${e.delta}`);
        break;
      case 'error':
        out.push(`error ${e.code} ${e.retryable ? 'retryable' : 'final'}: ${e.message}`);
        break;
      case 'done':
        out.push(`done ${e.status} ${e.stopReason ?? '-'}`);
        break;
      default:
        break;
    }
  }
  return out;
}

function watch(task: TaskHandle) {
  const events: TaskEvent[] = [];
  const changes = new Changes();
  const unsubscribe = task.subscribe((e) => {
    events.push(e);
    changes.notify();
  });
  const seen = (line: string) => trace(events).includes(line);
  /** Waits until `line` has been seen `n` times (at each event: no clock). */
  const wait = (line: string, n = 1) => changes.until(() => trace(events).filter((l) => l === line).length >= n, () => `${line} ×${n} in ${trace(events).join(' | ')}`);
  return { events, unsubscribe, seen, wait, trace: () => trace(events) };
}

const SUBJECTS: [string, () => Subject][] = [
  ['LiveTask (task machine, released model)', live],
  ['FakeTask', fake],
];

let subject: Subject | undefined;
afterEach(() => {
  subject?.dispose();
  subject = undefined;
});

describe.each(SUBJECTS)('TaskHandle contract: %s', (_name, make) => {
  it('nothing happens inside startTask; a listener subscribed right away sees the whole run', async () => {
    subject = make();
    const task = subject.start('hello');
    const w = watch(task);
    expect(w.events).toEqual([]);
    expect(task.transcript().items).toEqual([]);
    await w.wait('task running');
    expect(task.transcript().items.map((i) => i.kind)).toEqual(['user']);
    subject.answer(task, 'Hi there, how can I help?');
    expect((await task.settled()).status).toBe('completed');
    expect(w.trace()).toEqual(['user_message hello', 'task initializing', 'task running', 'assistant_start', 'text Hi there, how can I help?', 'task completed', 'done completed end_turn']);
    expect(task.transcript().items.map((i) => i.kind)).toEqual(['user', 'assistant']);
  });

  it('messages while a run is under way are queued, then sent together as the next run when it ends; after a run a message starts the next at once', async () => {
    subject = make();
    const task = subject.start('first');
    const w = watch(task);
    await w.wait('task running');
    task.sendUserMessage('while working');
    task.sendUserMessage('and this too');
    expect(w.trace().slice(-2)).toEqual(['queued while working', 'queued and this too']);
    expect(task.transcript().queued?.map((q) => q.text)).toEqual(['while working', 'and this too']);
    subject.answer(task, 'one');
    await w.wait('task running', 2);
    expect(task.transcript().queued).toBeUndefined();
    subject.answer(task, 'two');
    await w.wait('done completed end_turn', 2);
    task.sendUserMessage('third');
    await w.wait('task running', 3);
    // settled() waits for the run under way, not the one before it.
    const third = task.settled();
    subject.answer(task, 'three');
    expect((await third).status).toBe('completed');
    expect(w.trace()).toEqual([
      'user_message first',
      'task initializing',
      'task running',
      'queued while working',
      'queued and this too',
      'assistant_start',
      'text one',
      'task completed',
      'done completed end_turn',
      'unqueued sent 2',
      'user_message while working',
      'user_message and this too',
      'task initializing',
      'task running',
      'assistant_start',
      'text two',
      'task completed',
      'done completed end_turn',
      'user_message third',
      'task initializing',
      'task running',
      'assistant_start',
      'text three',
      'task completed',
      'done completed end_turn',
    ]);
    expect(task.transcript().items.filter((i) => i.kind === 'user').map((i) => (i.kind === 'user' ? i.text : ''))).toEqual(['first', 'while working', 'and this too', 'third']);
  });

  it('a queued message the person withdraws is never sent; one queued after a failed run starts the next run', async () => {
    subject = make();
    const task = subject.start('first');
    const w = watch(task);
    await w.wait('task running');
    task.sendUserMessage('never mind');
    task.sendUserMessage('keep this');
    const [withdrawn] = task.transcript().queued ?? [];
    task.withdrawQueued(withdrawn!.id);
    // A second withdrawal of the same message changes nothing.
    task.withdrawQueued(withdrawn!.id);
    expect(task.transcript().queued?.map((q) => q.text)).toEqual(['keep this']);
    subject.fail(task, 'The API key was refused.');
    await w.wait('task running', 2);
    subject.answer(task, 'ok');
    await w.wait('done completed end_turn');
    expect(w.trace()).toEqual([
      'user_message first',
      'task initializing',
      'task running',
      'queued never mind',
      'queued keep this',
      'unqueued withdrawn 1',
      'task awaitingUser',
      'error auth_failed final: The API key was refused.',
      'done failed -',
      'unqueued sent 1',
      'user_message keep this',
      'task initializing',
      'task running',
      'assistant_start',
      'text ok',
      'task completed',
      'done completed end_turn',
    ]);
  });

  it('cancel gives queued messages back unsent', async () => {
    subject = make();
    const task = subject.start('long job');
    const w = watch(task);
    await w.wait('task running');
    task.sendUserMessage('after that, this');
    task.cancel();
    expect((await task.settled()).status).toBe('aborted');
    expect(w.trace()).toEqual(['user_message long job', 'task initializing', 'task running', 'queued after that, this', 'unqueued returned 1', 'task aborted', 'done aborted -']);
    expect(task.transcript().queued).toBeUndefined();
  });

  it('cancel ends the run aborted, and a message then starts the next run', async () => {
    subject = make();
    const task = subject.start('long job');
    const w = watch(task);
    await w.wait('task running');
    task.cancel();
    expect((await task.settled()).status).toBe('aborted');
    expect(w.trace()).toEqual(['user_message long job', 'task initializing', 'task running', 'task aborted', 'done aborted -']);
    task.sendUserMessage('again');
    await w.wait('task running', 2);
    subject.answer(task, 'done now');
    await w.wait('done completed end_turn');
  });

  it('a failed run waits for the user: Retry runs it again; abandon ends the task failed', async () => {
    subject = make();
    const task = subject.start('try');
    const w = watch(task);
    await w.wait('task running');
    subject.fail(task, 'The API key was refused.');
    expect((await task.settled()).status).toBe('failed');
    task.retry();
    await w.wait('task running', 2);
    subject.fail(task, 'The API key was refused.');
    await w.wait('done failed -', 2);
    task.abandon();
    await w.wait('task failed');
    expect(w.trace()).toEqual([
      'user_message try',
      'task initializing',
      'task running',
      'task awaitingUser',
      'error auth_failed final: The API key was refused.',
      'done failed -',
      'task initializing',
      'task running',
      'task awaitingUser',
      'error auth_failed final: The API key was refused.',
      'done failed -',
      'task failed',
    ]);
  });

  it('an unsubscribed listener hears nothing more', async () => {
    subject = make();
    const task = subject.start('quiet');
    const w = watch(task);
    await w.wait('task running');
    w.unsubscribe();
    const before = w.events.length;
    subject.answer(task, 'unheard');
    await task.settled();
    expect(w.events).toHaveLength(before);
  });
});
