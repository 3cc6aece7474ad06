import type { AnyMachineSnapshot } from 'xstate';
import type { ProviderEvent } from '../../../src/core/providers/types';
import { taskMachine } from '../../../src/core/machines/task/task.machine';
import { start, textTurn, toolTurn } from '../helpers/scriptedEvents';
import { dedupe, doneEvent, errorEvent, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { emptyScript, LIMITS, TASK_ID, type Script, type Trigger } from './system';
import { dedupIndex } from './turnModel';

/**
 * The task machine's model: the host's intents (START, USER_MESSAGE, CANCEL, RETRY, ABANDON,
 * MARK_INTERRUPTED, RESUME), the completions of what it invokes (initialize, the turn loop with
 * each of its outcomes, reconstruct) and the subtask events its children send. The turn loop's
 * outcomes are offered only where a real turn can produce them (in waitingForSubtask the turn
 * waits for the subtask, so only a cancel can end it). Replayed through the wired task system.
 */
const turnOut = (status: 'done' | 'error', code: string | null) => ({ status, stopReason: status === 'done' ? 'end_turn' : null, messages: [], error: code ? { code, message: code, retryable: code !== 'cancelled' } : null, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, compactionFailures: 0 });

function events(s: AnyMachineSnapshot): ModelEvent[] {
  const out: ModelEvent[] = [];
  const v = JSON.stringify(s.value);
  for (const node of s._nodes) {
    for (const inv of node.invoke) {
      if (inv.src === 'initialize' || inv.src === 'reconstruct') out.push(doneEvent(inv.id, [], 'ok'), errorEvent(inv.id, { code: 'no_api_key', message: 'no key', retryable: true }));
      if (inv.src === 'turnLoop') {
        out.push(doneEvent(inv.id, turnOut('error', 'cancelled'), 'cancelled'));
        if (v === JSON.stringify({ running: 'turn' })) out.push(doneEvent(inv.id, turnOut('done', null), 'done'), doneEvent(inv.id, turnOut('error', 'auth_failed'), 'error'));
      }
    }
  }
  if (s.matches('created')) out.push({ type: 'START', text: 'hi' }, { type: 'MARK_INTERRUPTED' });
  if (s.matches({ running: 'turn' })) out.push({ type: 'SUBTASK_STARTED', toolCallId: 'k1', description: 'd', prompt: 'p' });
  if (s.matches({ running: 'waitingForSubtask' })) out.push({ type: 'SUBTASK_DONE', toolCallId: 'k1', result: { type: 'tool_result', tool_use_id: 'k1', content: 'sub' }, summary: 's' });
  if (s.matches('awaitingUser')) out.push({ type: 'RETRY' }, { type: 'ABANDON' });
  if (s.matches('awaitingUser') || s.matches('completed') || s.matches('aborted')) out.push({ type: 'USER_MESSAGE', text: 'more' });
  if (s.matches('interrupted')) out.push({ type: 'RESUME', note: 'resumed' });
  return out;
}

export function taskPaths(): ModelPath[] {
  return transitionPaths(taskMachine, { input: { taskId: TASK_ID, title: 't', model: 'test-model', mode: 'default', limits: LIMITS }, events });
}

const fatal: ProviderEvent[] = [start(), { type: 'provider_error', error: { code: 'auth_failed', message: 'bad key (scripted)', phase: 'mid-stream', retryable: false } }];
const EXTERNAL = new Set(['START', 'MARK_INTERRUPTED', 'RETRY', 'ABANDON', 'USER_MESSAGE', 'RESUME']);

export function compileTask(path: ModelPath): { script: Script; triggers: Trigger[]; expected: string[] } {
  const script = emptyScript();
  const triggers: Trigger[] = [];
  path.events.forEach((e, i) => {
    const t = e.type;
    const at = dedupIndex(path.values, i);
    if (EXTERNAL.has(t)) {
      const { tag: _tag, ...event } = e;
      triggers.push({ at, send: event as Trigger['send'] });
    } else if (t.includes('task.initializing')) script.init.push(t.startsWith('xstate.error') ? 'fail' : 'ok');
    else if (t.includes('task.reconstructing')) script.reconstruct.push(t.startsWith('xstate.error') ? 'fail' : 'ok');
    else if (t === 'SUBTASK_STARTED') {
      script.provider.push({ events: toolTurn(`k1`, 'Task', { description: 'd', prompt: 'p' }) });
      script.subtasks.push(path.events[i + 1]?.type === 'SUBTASK_DONE' ? 'resolve' : 'hang');
    } else if (t === 'xstate.done.actor.turnLoop') {
      if (e.tag === 'done') script.provider.push({ events: textTurn('answer') });
      else if (e.tag === 'error') script.provider.push({ events: fatal });
      else {
        const waiting = JSON.stringify(path.values[i]) === JSON.stringify({ running: 'waitingForSubtask' });
        if (!waiting) script.provider.push({ events: [], hang: true });
        triggers.push({ at, send: { type: 'CANCEL' }, whenHung: !waiting });
      }
    }
  });
  return { script, triggers, expected: dedupe(path.values) };
}
