import type { AnyMachineSnapshot } from 'xstate';
import type { ProviderEvent } from '../../../src/core/providers/types';
import type { ConversationMessage } from '../../../src/shared/domain/messages';
import { taskMachine } from '../../../src/core/machines/task/task.machine';
import { start, textTurn, toolTurn } from '../helpers/scriptedEvents';
import { dedupe, doneEvent, errorEvent, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { emptyScript, LIMITS, TASK_ID, type ReplayResult, type Script, type Trigger } from './system';
import { dedupIndex } from './turnModel';

/**
 * The task machine's model: the host's intents (START, USER_MESSAGE, CANCEL, RETRY, ABANDON,
 * MARK_INTERRUPTED, RESUME), the completions of what it invokes (initialize, the turn loop with
 * each of its outcomes, reconstruct) and the subtask events its children send. The turn loop's
 * outcomes are offered only where a real turn can produce them (in waitingForSubtask the turn
 * waits for the subtask, so only a cancel can end it). Replayed through the wired task system,
 * its turn loops in process; the same run on a worker (running.loop.onWorker) is replayed with
 * real worker processes in modelBased.test.ts.
 */
const turnOut = (status: 'done' | 'error', code: string | null) => ({ status, stopReason: status === 'done' ? 'end_turn' : null, messages: [], error: code ? { code, message: code, retryable: code !== 'cancelled' } : null, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, compactionFailures: 0 });

/** A run whose turn loop (in this process) is not waiting for a sub-agent. */
const TURNING = { running: { loop: 'inProcess', subtasks: 'turn' } };

function events(s: AnyMachineSnapshot): ModelEvent[] {
  const out: ModelEvent[] = [];
  const v = JSON.stringify(s.value);
  for (const node of s._nodes) {
    for (const inv of node.invoke) {
      if (inv.src === 'initialize' || inv.src === 'reconstruct') out.push(doneEvent(inv.id, [], 'ok'), errorEvent(inv.id, { code: 'no_api_key', message: 'no key', retryable: true }));
      // A UserPromptSubmit hook blocks the prompt just sent (the runtime's initialize rejects so).
      if (inv.src === 'initialize') out.push(errorEvent(inv.id, { code: 'blocked_by_hook', message: 'blocked', retryable: false }, 'blocked'));
      // A settled run's finishing ends (its phases and record over): its `done` is published.
      if (inv.src === 'finishRun') out.push(doneEvent(inv.id, undefined, 'ok'));
      if (inv.src === 'turnLoop') {
        out.push(doneEvent(inv.id, turnOut('error', 'cancelled'), 'cancelled'));
        if (v === JSON.stringify(TURNING)) out.push(doneEvent(inv.id, turnOut('done', null), 'done'), doneEvent(inv.id, turnOut('error', 'auth_failed'), 'error'));
      }
    }
  }
  if (s.matches('created')) out.push({ type: 'START', text: 'hi' }, { type: 'MARK_INTERRUPTED' });
  if (s.matches({ running: { subtasks: 'turn' } })) out.push({ type: 'SUBTASK_STARTED', toolCallId: 'k1', description: 'd', prompt: 'p' });
  if (s.matches({ running: { subtasks: 'waitingForSubtask' } })) out.push({ type: 'SUBTASK_DONE', toolCallId: 'k1', result: { type: 'tool_result', tool_use_id: 'k1', content: 'sub' }, summary: 's' });
  if (s.matches('awaitingUser')) out.push({ type: 'RETRY' }, { type: 'ABANDON' });
  if (s.matches('awaitingUser') || s.matches('completed') || s.matches('aborted')) out.push({ type: 'USER_MESSAGE', text: 'more' });
  if (s.matches('interrupted')) out.push({ type: 'RESUME', note: 'resumed' });
  // The owner ends (INTERRUPT), the record fails (RECORD_FAILED, in any state), the owner lets the
  // task go or cancels while a run finishes (CLOSE, CANCEL).
  if (s.hasTag('running')) out.push({ type: 'INTERRUPT' });
  if (s.status === 'active') out.push({ type: 'RECORD_FAILED', failure: 'the disk is full (scripted)' });
  if (v.includes('"finishing"')) out.push({ type: 'CLOSE' }, { type: 'CANCEL' });
  // What changes no state: the mode chosen for what comes next, a model call outside the runs
  // (the gatekeeper's) charged to the task, a subtask result nobody awaits, a message while a run
  // is under way (refused with an error event).
  if (s.matches('created') || s.matches({ running: { subtasks: 'turn' } })) out.push({ type: 'SET_MODE', mode: 'plan' });
  if (s.matches('completed')) out.push({ type: 'CHARGE', usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.25 }, LATE_SUBTASK);
  if (s.matches({ running: { subtasks: 'turn' } })) out.push({ type: 'USER_MESSAGE', text: 'meanwhile', tag: 'busy' });
  return out;
}

export function taskPaths(): ModelPath[] {
  return transitionPaths(taskMachine, { input: { taskId: TASK_ID, title: 't', model: 'test-model', mode: 'default', limits: LIMITS }, events });
}

const LATE_SUBTASK: ModelEvent = { type: 'SUBTASK_DONE', toolCallId: 'late', result: { type: 'tool_result', tool_use_id: 'late', content: 'late' }, summary: 'late', tag: 'late' };

const fatal: ProviderEvent[] = [start(), { type: 'provider_error', error: { code: 'auth_failed', message: 'bad key (scripted)', phase: 'mid-stream', retryable: false } }];
const EXTERNAL = new Set(['START', 'MARK_INTERRUPTED', 'RETRY', 'ABANDON', 'USER_MESSAGE', 'RESUME', 'SET_MODE', 'CHARGE', 'INTERRUPT', 'RECORD_FAILED', 'CLOSE', 'CANCEL']);

export function compileTask(path: ModelPath): { script: Script; triggers: Trigger[]; expected: string[] } {
  const script = emptyScript();
  const triggers: Trigger[] = [];
  path.events.forEach((e, i) => {
    const t = e.type;
    const at = dedupIndex(path.values, i);
    if (EXTERNAL.has(t) || (t === 'SUBTASK_DONE' && e.tag === 'late')) {
      // A message sent while a run is under way: the run must be in flight (a hung request) to refuse it.
      if (t === 'USER_MESSAGE' && e.tag === 'busy') script.provider.push({ events: [], hang: true });
      const { tag: _tag, ...event } = e;
      triggers.push({ at, send: event as Trigger['send'], ...(e.tag === 'busy' ? { whenHung: true } : {}) });
    } else if (t.includes('task.initializing')) script.init.push(t.startsWith('xstate.error') ? (e.tag === 'blocked' ? 'blocked' : 'fail') : 'ok');
    else if (t.includes('task.reconstructing')) script.reconstruct.push(t.startsWith('xstate.error') ? 'fail' : 'ok');
    else if (t.includes('.finishing')) script.finish.push('ok');
    else if (t === 'SUBTASK_STARTED') {
      script.provider.push({ events: toolTurn(`k1`, 'Task', { description: 'd', prompt: 'p' }) });
      script.subtasks.push(path.events[i + 1]?.type === 'SUBTASK_DONE' ? 'resolve' : 'hang');
    } else if (t === 'xstate.done.actor.turnLoop') {
      if (e.tag === 'done') script.provider.push({ events: textTurn('answer') });
      else if (e.tag === 'error') script.provider.push({ events: fatal });
      else {
        const waiting = JSON.stringify(path.values[i]) === JSON.stringify({ running: { loop: 'inProcess', subtasks: 'waitingForSubtask' } });
        if (!waiting) script.provider.push({ events: [], hang: true });
        triggers.push({ at, send: { type: 'CANCEL' }, whenHung: !waiting });
      }
    }
  });
  return { script, triggers, expected: dedupe(path.values) };
}

/** The text of a user message's text blocks (or its string content). */
function userTextOf(m: ConversationMessage | undefined): string {
  if (!m || m.role !== 'user') return '';
  return typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/**
 * What a person and the model would notice of a task path, beside its states: what was said reaches
 * the model in the request that answers it, every request is a well-formed conversation (roles
 * alternate from the user's; each tool call answered once, in the next message), a message sent
 * while a run is under way is refused with an error (and never sent), a charge outside the runs
 * shows as a usage event with the task's new total, a result nobody awaits changes nothing, and a
 * blocked prompt is never sent. Returns what is wrong (nothing: []).
 */
export function taskOutputProblems(path: ModelPath, r: ReplayResult): string[] {
  const problems: string[] = [];
  const said = r.events.filter((e) => e.type === 'user_message').map((e) => (e as { text: string }).text);
  const sent = path.events.filter((e) => e.type === 'START' || (e.type === 'USER_MESSAGE' && e.tag !== 'busy')).map((e) => String(e.text));
  if (JSON.stringify(said) !== JSON.stringify(sent)) problems.push(`user_message events ${JSON.stringify(said)}, but the person said ${JSON.stringify(sent)}`);
  for (const [i, req] of r.provider.requests.entries()) {
    const roles = req.messages.map((m) => m.role);
    if (roles.some((role, k) => role !== (k % 2 === 0 ? 'user' : 'assistant'))) problems.push(`request ${i}: roles ${roles.join(',')} do not alternate from the user's`);
    req.messages.forEach((m, k) => {
      const prev = req.messages[k - 1];
      const calls = prev && prev.role === 'assistant' && typeof prev.content !== 'string' ? prev.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : [];
      const answers = m.role === 'user' && typeof m.content !== 'string' ? m.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id) : [];
      if (JSON.stringify([...calls].sort()) !== JSON.stringify([...answers].sort())) problems.push(`request ${i}, message ${k}: answers ${answers.join(',') || 'nothing'} to the calls ${calls.join(',') || 'none'}`);
    });
    if (req.messages.some((m) => userTextOf(m).includes('meanwhile'))) problems.push(`request ${i} carries the message that was refused while the run was under way`);
  }
  const firstAnswered = r.provider.requests[0];
  if (firstAnswered && sent[0] !== undefined && userTextOf(firstAnswered.messages[0]) !== sent[0]) problems.push(`the first request opens with ${JSON.stringify(userTextOf(firstAnswered.messages[0]))}, not what the person said`);
  if (path.events.some((e) => e.tag === 'busy') && !r.events.some((e) => e.type === 'error')) problems.push('a message sent while the run was under way was not refused with an error event');
  if (path.events.some((e) => e.type === 'CHARGE')) {
    const usage = r.events.filter((e) => e.type === 'usage').at(-1) as { costUsd?: number; totalCostUsd?: number } | undefined;
    if (!usage || usage.costUsd !== 0.25 || (usage.totalCostUsd ?? 0) < 0.25) problems.push(`the charge outside the runs shows as ${JSON.stringify(usage)}`);
  }
  if (path.events.at(-1)?.tag === 'blocked' && r.provider.requests.some((q) => userTextOf(q.messages.at(-1)) === sent.at(-1))) {
    problems.push(`the prompt a hook blocked (${JSON.stringify(sent.at(-1))}) was sent to the model`);
  }
  return problems;
}
