import { createActor, createMachine, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { statusChanges } from '../../../src/core/agents/statusEvents';
import { stateTagTable, tagsOfState } from '../../../src/core/machines/stateTags';
import { taskMachine } from '../../../src/core/machines/task/task.machine';
import { taskEventHasTag, taskStateTags, taskStatusOfState } from '../../../src/core/machines/task/taskTags';
import { turnMachine } from '../../../src/core/machines/turn/turn.machine';
import { turnStateTags } from '../../../src/core/machines/turn/turnTags';
import { DEFAULT_LIMITS } from '../../../src/core/runtime/limits';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { ReplayFold } from '../../../src/core/store/replay';
import type { ToolDefinition } from '../../../src/core/providers/types';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { PermissionMode } from '../../../src/shared/domain/permissionModes';
import { TASK_STATE_TAGS } from '../../../src/shared/domain/stateTags';
import { ListProvider, textTurn } from '../helpers/scriptedEvents';

const STATUSES = ['completed', 'failed', 'aborted', 'interrupted'] as const;

describe('state tags: read from the definitions, not from copied lists', () => {
  it('tagsOfState: by dotted path or by a unique key, with the ancestors’ tags; an ambiguous key or an unknown state has none', () => {
    const m = createMachine({
      initial: 'a',
      states: {
        a: { tags: ['busy'], initial: 'inner', states: { inner: { tags: ['deep'] }, same: {} } },
        b: { initial: 'same', states: { same: { tags: ['other'] } } },
      },
    });
    expect(tagsOfState(m, 'a.inner')).toEqual(['busy', 'deep']);
    expect(tagsOfState(m, 'inner')).toEqual(['busy', 'deep']);
    expect(tagsOfState(m, 'b.same')).toEqual(['other']);
    expect(tagsOfState(m, 'a.same')).toEqual(['busy']);
    expect(tagsOfState(m, 'same')).toEqual([]);
    expect(tagsOfState(m, 'nowhere')).toEqual([]);
    // What a live actor's snapshot says agrees.
    const a = createActor(m).start();
    expect(a.getSnapshot().hasTag('busy') && a.getSnapshot().hasTag('deep')).toBe(true);
    a.stop();
  });

  it('every task state is running or settled (never both); a settled one names exactly one stored status', () => {
    const table = stateTagTable(taskMachine);
    expect(table.size).toBeGreaterThanOrEqual(11);
    for (const [state, tags] of table) {
      for (const t of tags) expect(TASK_STATE_TAGS, `${state}: ${t}`).toContain(t);
      const running = tags.includes('running');
      const settled = tags.includes('settled');
      expect(running !== settled, `${state}: ${tags.join(',')}`).toBe(true);
      const statuses = STATUSES.filter((s) => tags.includes(s));
      expect(statuses, state).toHaveLength(settled ? 1 : 0);
      expect(taskStatusOfState(state), state).toBe(settled ? statuses[0] : 'running');
    }
  });

  it('says what the states mean: a subtask wait runs, a failed run waits for the person and is stored as failed', () => {
    expect(taskStateTags('waitingForSubtask')).toEqual(['running']);
    expect(taskStateTags('running.subtasks.waitingForSubtask')).toEqual(['running']);
    expect(taskStateTags('running.loop.onWorker')).toEqual(['running']);
    expect(taskStateTags('reconstructing')).toContain('running');
    expect(taskStateTags('awaitingUser')).toEqual(expect.arrayContaining(['settled', 'failed', 'waitingForPerson']));
    expect(taskStatusOfState('awaitingUser')).toBe('failed');
    expect(taskStatusOfState('interrupted')).toBe('interrupted');
    expect(taskStatusOfState('noSuchState')).toBeNull();
    expect(turnStateTags('compacting')).toEqual(['compacting']);
    expect(turnStateTags('streaming.requesting')).toEqual(['working']);
    expect(turnStateTags('permissionCheck')).toEqual([]);
  });

  it('a live task actor: each `task` event carries the tags its snapshot has in that state', async () => {
    const events: TaskEvent[] = [];
    // The turn loop fails at once (its system prompt cannot be prepared): the task waits for the person.
    const machine = taskMachine.provide({
      actors: { turnLoop: turnMachine.provide({ actors: { prepareSystemPrompt: fromPromise<{ system: string[]; tools: ToolDefinition[] }, { taskId: string; mode: PermissionMode }>(() => Promise.reject(new Error('no prompt'))) } }) },
      actions: { publish: (_, e: TaskEvent | null) => void (e && events.push(e)) },
    });
    const actor = createActor(machine, { input: { taskId: 't', title: 'T', model: 'm', mode: 'default', limits: DEFAULT_LIMITS } });
    const seen = new Map<string, string[]>();
    actor.subscribe((s) => seen.set(typeof s.value === 'string' ? s.value : Object.keys(s.value)[0]!, [...s.tags].sort()));
    const settle = () => new Promise<void>((resolve) => {
      const sub = actor.subscribe((s) => {
        if (s.hasTag('settled')) {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    actor.start();
    let settled = settle();
    actor.send({ type: 'START', text: 'go' });
    await settled;
    settled = settle();
    actor.send({ type: 'RETRY' });
    await settled;
    actor.send({ type: 'ABANDON' });
    const stateEvents = events.filter((e): e is Extract<TaskEvent, { type: 'task' }> => e.type === 'task');
    expect(stateEvents.map((e) => e.state)).toEqual(['initializing', 'running', 'awaitingUser', 'initializing', 'running', 'awaitingUser', 'failed']);
    for (const e of stateEvents) expect([...(e.tags ?? [])].sort(), e.state).toEqual(seen.get(e.state));
    expect(stateEvents[2]!.tags).toContain('waitingForPerson');
    actor.stop();
  });

  it('a real run through TaskRuntime: running events while it works, then settled and completed', async () => {
    const runtime = new TaskRuntime({ workspace: process.cwd(), providerFactory: () => new ListProvider([textTurn('Hi.')], 0), limits: { retryBaseMs: 1 } });
    const task = runtime.startTask({ prompt: 'hi', provider: { provider: 'anthropic', model: 'm' } });
    const events: TaskEvent[] = [];
    task.subscribe((e) => events.push(e));
    await task.settled();
    const tagged = events.filter((e): e is Extract<TaskEvent, { type: 'task' }> => e.type === 'task');
    expect(tagged.length).toBeGreaterThanOrEqual(3);
    for (const e of tagged.slice(0, -1)) expect(e.tags, e.state).toContain('running');
    expect(tagged.at(-1)!.tags).toEqual(expect.arrayContaining(['settled', 'completed']));
    expect(task.transcript().tags).toEqual(expect.arrayContaining(['settled', 'completed']));
    const turns = events.filter((e): e is Extract<TaskEvent, { type: 'turn' }> => e.type === 'turn');
    expect(turns.find((e) => e.state === 'streaming')?.tags).toEqual(['working']);
  });

  it('a log written before events carried tags is read by the definition’s tags', () => {
    const untagged = (state: string): Extract<TaskEvent, { type: 'task' }> => ({ type: 'task', taskId: 't', state, title: 'T' });
    expect(taskEventHasTag(untagged('waitingForSubtask'), 'running')).toBe(true);
    const fold = new ReplayFold('t', 'T', 'm');
    fold.add({ at: 1, event: untagged('initializing') });
    fold.add({ at: 2, event: untagged('awaitingUser') });
    expect(fold.finish().status).toBe('failed');
    const board = statusChanges({ kind: 'task', at: 1, event: untagged('reconstructing') });
    expect(board[0]?.event).toEqual({ type: 'ACTIVITY' });
    const compacting = statusChanges({ kind: 'task', at: 1, event: { type: 'turn', taskId: 't', state: 'compacting', turn: 1 } });
    expect(compacting[0]?.event).toEqual({ type: 'COMPACTING' });
  });
});
