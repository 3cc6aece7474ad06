import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor, type EventObject } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ConversationMessage } from '../../../src/shared/domain/messages';
import type { CommandRun } from '../../../src/core/commands/commandRun';
import { queryMachine, type QueryInput, type WorkerLease } from '../../../src/core/machines/query/query.machine';
import { taskMachine, type AttachedImage, type RunStartInput } from '../../../src/core/machines/task/task.machine';

/**
 * RESUME of an interrupted task: the resume note is a user message like any other — the
 * follow-up's images first, then the note, then its mentions' contents; what was typed is shown;
 * its command narrows the run answering it. The turn loop (a query that never answers) and the
 * rebuilt conversation are stood in for (the machine's actors); the CLI's
 * resumeInterruptedMessage test drives the same path for real.
 */
const image: AttachedImage = { block: { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }, info: { name: 'shot.png', mediaType: 'image/png', bytes: 3 } };
const command: CommandRun = { narrowing: { command: '/look', rules: ['Read'] }, model: 'haiku' };

function resumable() {
  const seen: TaskEvent[] = [];
  const rebuilt: ConversationMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'answer slowly' }] }];
  const worker = queryMachine.provide({
    actors: {
      acquire: fromPromise<WorkerLease, { queryId: string; taskId: string }>(async () => ({ workerId: 'w1', pid: null })),
      execute: fromCallback<EventObject, { queryId: string; lease: WorkerLease; input: QueryInput }>(() => undefined),
    },
  });
  const machine = taskMachine.provide({
    actors: {
      initialize: fromPromise<void, RunStartInput>(async () => undefined),
      reconstruct: fromPromise<ConversationMessage[], { taskId: string }>(async () => rebuilt),
      workerTurn: worker,
    },
    actions: {
      publish: (_, e) => void (e && seen.push(e)),
    },
  });
  const actor = createActor(machine, {
    input: { taskId: 't', title: 't', model: 'm', mode: 'default', limits: { maxTurns: 5, maxTokens: 100, contextLimit: 1e9, retryLimit: 0, retryBaseMs: 1, lockTimeoutMs: 0 }, runner: 'worker' },
  });
  actor.start();
  actor.send({ type: 'MARK_INTERRUPTED' });
  // The command the run under way answers, as the task machine holds it.
  const runCommand = (): CommandRun | undefined => actor.getSnapshot().context.runCommand;
  return { actor, seen, runCommand };
}

describe('RESUME with a follow-up', () => {
  it('publishes the note as a full user message (images, note, mentions), shows what was typed, and applies the command to the run', async () => {
    const t = resumable();
    const note = '[Keel: this task was interrupted 3 minutes ago.]\n\nLook around';
    const attachment = { kind: 'file' as const, label: 'a.txt', content: 'hello' };
    t.actor.send({ type: 'RESUME', note, typed: '/look', images: [image], attachments: [attachment], command });
    await waitFor(t.actor, (s) => s.matches('running'));
    expect(t.seen.find((e) => e.type === 'user_message')).toMatchObject({ text: note, typed: '/look', images: [image.info], attachments: [{ kind: 'file', label: 'a.txt' }] });
    const logged = t.seen.filter((e) => e.type === 'message').at(-1);
    const content = logged?.type === 'message' ? logged.message.content : [];
    expect(content[0]).toEqual(image.block);
    expect(content[1]).toEqual({ type: 'text', text: note });
    expect(JSON.stringify(content.slice(2))).toContain('hello');
    // The conversation the run answers ends with that same message; the run is narrowed by the command.
    expect(t.actor.getSnapshot().context.messages.at(-1)).toEqual(logged?.type === 'message' ? logged.message : null);
    expect(t.runCommand()).toEqual(command);
  });

  it('with no follow-up, the note is plain text and the run is not narrowed', async () => {
    const t = resumable();
    t.actor.send({ type: 'RESUME', note: 'Continue from where you stopped.' });
    await waitFor(t.actor, (s) => s.matches('running'));
    expect(t.seen.find((e) => e.type === 'user_message')).toEqual({ type: 'user_message', taskId: 't', id: 't-u1', text: 'Continue from where you stopped.' });
    expect(t.actor.getSnapshot().context.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Continue from where you stopped.' }] });
    expect(t.runCommand()).toBeUndefined();
  });
});
