import type { AnyMachineSnapshot } from 'xstate';
import type { ProviderEvent } from '../../../src/core/providers/types';
import type { ConversationMessage } from '../../../src/shared/domain/messages';
import type { TaskEvent } from '../../../src/shared/domain/events';
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
        if (v === JSON.stringify(TURNING)) {
          out.push(doneEvent(inv.id, turnOut('done', null), 'done'), doneEvent(inv.id, turnOut('error', 'auth_failed'), 'error'));
          // The task's budget refuses the next request: the run pauses for it.
          out.push(doneEvent(inv.id, turnOut('error', 'budget_exceeded'), 'budget'));
        }
      }
    }
  }
  // A stored task paused at its budget goes on (CONTINUE) once its budget was raised.
  if (s.matches('created')) out.push({ type: 'START', text: 'hi' }, { type: 'MARK_INTERRUPTED' }, { type: 'CONTINUE' });
  if (s.matches({ running: { subtasks: 'turn' } })) out.push({ type: 'SUBTASK_STARTED', toolCallId: 'k1', description: 'd', prompt: 'p' });
  if (s.matches({ running: { subtasks: 'waitingForSubtask' } })) out.push({ type: 'SUBTASK_DONE', toolCallId: 'k1', result: { type: 'tool_result', tool_use_id: 'k1', content: 'sub' }, summary: 's' });
  if (s.matches('awaitingUser') || s.matches('pausedForBudget')) out.push({ type: 'RETRY' }, { type: 'ABANDON' });
  if (s.matches('awaitingUser') || s.matches('pausedForBudget') || s.matches('completed') || s.matches('aborted')) out.push({ type: 'USER_MESSAGE', text: 'more' });
  if (s.matches('interrupted')) out.push({ type: 'RESUME', note: 'resumed' });
  // The owner ends (INTERRUPT), the record fails (RECORD_FAILED, in any state), the owner lets the
  // task go or cancels while a run finishes (CLOSE, CANCEL).
  if (s.hasTag('running')) out.push({ type: 'INTERRUPT' });
  if (s.status === 'active') out.push({ type: 'RECORD_FAILED', failure: 'the disk is full (scripted)' });
  if (v.includes('"finishing"')) out.push({ type: 'CLOSE' }, { type: 'CANCEL' });
  // What changes no state: the mode chosen for what comes next, a model call outside the runs
  // (the gatekeeper's) charged to the task, a subtask result nobody awaits, a message while a run
  // is under way (queued: it is sent as the next run when this one ends).
  if (s.matches('created') || s.matches({ running: { subtasks: 'turn' } })) out.push({ type: 'SET_MODE', mode: 'plan' }, { type: 'SET_MODEL', model: 'other-model' });
  if (s.matches('completed')) out.push({ type: 'CHARGE', usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.25 }, LATE_SUBTASK);
  if (s.matches({ running: { subtasks: 'turn' } })) out.push({ type: 'USER_MESSAGE', text: 'meanwhile', tag: 'busy' });
  // While a run starts (or a task is rebuilt), a message waits for it too.
  if (s.matches('initializing') || s.matches('reconstructing')) out.push({ type: 'USER_MESSAGE', text: 'meanwhile', tag: 'early' });
  // The person cancels the message they queued.
  if ((s.context as { queued: unknown[] }).queued.length > 0) out.push({ type: 'UNQUEUE', id: QUEUED_ID, tag: 'withdraw' });
  return out;
}

export function taskPaths(): ModelPath[] {
  return transitionPaths(taskMachine, { input: { taskId: TASK_ID, title: 't', model: 'test-model', mode: 'default', limits: LIMITS }, events });
}

const LATE_SUBTASK: ModelEvent = { type: 'SUBTASK_DONE', toolCallId: 'late', result: { type: 'tool_result', tool_use_id: 'late', content: 'late' }, summary: 'late', tag: 'late' };

const fatal: ProviderEvent[] = [start(), { type: 'provider_error', error: { code: 'auth_failed', message: 'bad key (scripted)', phase: 'mid-stream', retryable: false } }];
const EXTERNAL = new Set(['START', 'MARK_INTERRUPTED', 'CONTINUE', 'RETRY', 'ABANDON', 'USER_MESSAGE', 'UNQUEUE', 'RESUME', 'SET_MODE', 'SET_MODEL', 'CHARGE', 'INTERRUPT', 'RECORD_FAILED', 'CLOSE', 'CANCEL']);
/** The id the task machine gives the first message queued. */
const QUEUED_ID = `${TASK_ID}-q1`;

/** The model's answer to the run that a queued message starts. */
const QUEUED_ANSWER = 'answer to the queued message';

/**
 * The index of the run's end that follows a message queued during it (the model's answer, the
 * run's failure, or its start failing or blocked by a hook: each sends the queue); -1: none.
 */
function queuedThenEnded(path: ModelPath): number {
  const at = path.events.findIndex((e) => e.tag === 'busy' || e.tag === 'early');
  if (at < 0) return -1;
  return path.events.findIndex((e, i) => i > at && (answerOf(e) !== null || (e.type.startsWith('xstate.error') && e.type.includes('task.initializing'))));
}

/** The provider's answer that ends a run as `done:turnLoop[tag]` (done or error), or null for another end. */
function answerOf(e: ModelEvent | undefined): ProviderEvent[] | null {
  if (e?.type !== 'xstate.done.actor.turnLoop') return null;
  return e.tag === 'done' ? textTurn('answer') : e.tag === 'error' ? fatal : null;
}

export function compileTask(path: ModelPath): { script: Script; triggers: Trigger[]; expected: string[] } {
  const script = emptyScript();
  const triggers: Trigger[] = [];
  const expected = dedupe(path.values);
  // The run whose answer was held until a message was sent during it (its end is scripted already).
  let heldAnswer = -1;
  path.events.forEach((e, i) => {
    const t = e.type;
    const at = dedupIndex(path.values, i);
    if (EXTERNAL.has(t) || (t === 'SUBTASK_DONE' && e.tag === 'late')) {
      // A message sent while a run is under way: the run must be in flight (a request held or hung)
      // when it arrives. When the run then ends, the held request answers after the message is sent.
      let release = false;
      if (t === 'USER_MESSAGE' && e.tag === 'busy') {
        const answer = answerOf(path.events[i + 1]);
        if (answer) {
          script.provider.push({ events: answer, held: true });
          heldAnswer = i + 1;
          release = true;
        } else script.provider.push({ events: [], hang: true });
      }
      const { tag: _tag, ...event } = e;
      triggers.push({ at, send: event as Trigger['send'], ...(e.tag === 'busy' ? { whenHung: true } : {}), ...(release ? { release: true } : {}) });
    } else if (i === heldAnswer) {
      // Scripted with the message sent during the run (a held request).
    } else if (t.includes('task.initializing')) script.init.push(t.startsWith('xstate.error') ? (e.tag === 'blocked' ? 'blocked' : 'fail') : 'ok');
    else if (t.includes('task.reconstructing')) script.reconstruct.push(t.startsWith('xstate.error') ? 'fail' : 'ok');
    else if (t.includes('.finishing')) script.finish.push('ok');
    else if (t === 'SUBTASK_STARTED') {
      script.provider.push({ events: toolTurn(`k1`, 'Task', { description: 'd', prompt: 'p' }) });
      script.subtasks.push(path.events[i + 1]?.type === 'SUBTASK_DONE' ? 'resolve' : 'hang');
    } else if (t === 'xstate.done.actor.turnLoop') {
      if (e.tag === 'done') script.provider.push({ events: textTurn('answer') });
      else if (e.tag === 'error') script.provider.push({ events: fatal });
      else if (e.tag === 'budget') {
        // Every request before this one was let go (one admission each); this one is refused.
        while (script.admit.length < script.provider.length) script.admit.push('ok');
        script.admit.push('refuse');
      }
      else {
        const waiting = JSON.stringify(path.values[i]) === JSON.stringify({ running: { loop: 'inProcess', subtasks: 'waitingForSubtask' } });
        if (!waiting) script.provider.push({ events: [], hang: true });
        triggers.push({ at, send: { type: 'CANCEL' }, whenHung: !waiting });
      }
    }
  });
  // The run ended with a message queued: it starts the next run at once. That run is replayed too,
  // so the model answers the queued message: it starts (running) and completes (its record then
  // waits: finishing).
  if (queuedThenEnded(path) === path.events.length - 1 && expected.at(-1) === JSON.stringify('initializing')) {
    script.init.push('ok');
    script.provider.push({ events: textTurn(QUEUED_ANSWER) });
    expected.push(JSON.stringify(TURNING), JSON.stringify({ completed: 'finishing' }));
  }
  return { script, triggers, expected };
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
 * while a run is under way is queued (a `queued` event, no error, not sent during that run) and,
 * when the run ends, sent as the next run's message (after that run's `done`, answered by the
 * model), a charge outside the runs shows as a usage event with the task's new total, a result
 * nobody awaits changes nothing, and a blocked prompt is never sent. Returns what is wrong (nothing: []).
 */
export function taskOutputProblems(path: ModelPath, r: ReplayResult): string[] {
  const problems: string[] = [];
  const said = r.events.filter((e) => e.type === 'user_message').map((e) => (e as { text: string }).text);
  const busyAt = path.events.findIndex((e) => e.tag === 'busy' || e.tag === 'early');
  // The queued message is said when the run under way ends, if it does.
  const endAt = queuedThenEnded(path);
  const runEnds = endAt >= 0;
  const sent = path.events.flatMap((e, i) => (e.type === 'START' || (e.type === 'USER_MESSAGE' && ((e.tag !== 'busy' && e.tag !== 'early') || runEnds)) ? [{ text: String(e.text), i }] : []));
  if (runEnds) sent.sort((a, b) => (a.i === busyAt ? endAt : a.i) - (b.i === busyAt ? endAt : b.i));
  const sentTexts = sent.map((x) => x.text);
  if (JSON.stringify(said) !== JSON.stringify(sentTexts)) problems.push(`user_message events ${JSON.stringify(said)}, but the person said ${JSON.stringify(sentTexts)}`);
  for (const [i, req] of r.provider.requests.entries()) {
    const roles = req.messages.map((m) => m.role);
    if (roles.some((role, k) => role !== (k % 2 === 0 ? 'user' : 'assistant'))) problems.push(`request ${i}: roles ${roles.join(',')} do not alternate from the user's`);
    req.messages.forEach((m, k) => {
      const prev = req.messages[k - 1];
      const calls = prev && prev.role === 'assistant' && typeof prev.content !== 'string' ? prev.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : [];
      const answers = m.role === 'user' && typeof m.content !== 'string' ? m.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id) : [];
      if (JSON.stringify([...calls].sort()) !== JSON.stringify([...answers].sort())) problems.push(`request ${i}, message ${k}: answers ${answers.join(',') || 'nothing'} to the calls ${calls.join(',') || 'none'}`);
    });
    // The run under way never sends the message queued during it: only the run after it (the last request) may.
    const afterRun = runEnds && i === r.provider.requests.length - 1;
    if (!afterRun && req.messages.some((m) => userTextOf(m).includes('meanwhile'))) problems.push(`request ${i}, of the run under way, carries the message queued during it`);
  }
  const firstAnswered = r.provider.requests[0];
  const blockedAt = path.events.findIndex((e) => e.tag === 'blocked');
  // (A prompt a hook blocked leaves the conversation: the first request then opens with the next.)
  if (blockedAt < 0 && firstAnswered && sentTexts[0] !== undefined && !userTextOf(firstAnswered.messages[0]).startsWith(sentTexts[0])) problems.push(`the first request opens with ${JSON.stringify(userTextOf(firstAnswered.messages[0]))}, not what the person said`);
  if (busyAt >= 0) problems.push(...queueProblems(r, runEnds, path.events.some((e) => e.tag === 'withdraw')));
  if (path.events.at(-1)?.tag === 'budget') {
    const paused = r.events.find((e) => e.type === 'error');
    if (paused?.type !== 'error' || paused.code !== 'budget_exceeded') problems.push(`a run the budget refused ended with ${JSON.stringify(paused)}, not a budget_exceeded error`);
    if (r.provider.requests.length > 0) problems.push('a request the budget refused was sent');
  }
  if (path.events.some((e) => e.type === 'CHARGE')) {
    const usage = r.events.filter((e) => e.type === 'usage').at(-1) as { costUsd?: number; totalCostUsd?: number } | undefined;
    if (!usage || usage.costUsd !== 0.25 || (usage.totalCostUsd ?? 0) < 0.25) problems.push(`the charge outside the runs shows as ${JSON.stringify(usage)}`);
  }
  problems.push(...phaseProblems(path, r));
  const blocked = sent.filter((x) => x.i < blockedAt && x.i !== busyAt).at(-1)?.text;
  const saysBlocked = (m: ConversationMessage) => m.role === 'user' && (typeof m.content === 'string' ? m.content === blocked : m.content.some((b) => b.type === 'text' && b.text === blocked));
  if (blocked !== undefined && r.provider.requests.some((q) => q.messages.some(saysBlocked))) {
    problems.push(`the prompt a hook blocked (${JSON.stringify(blocked)}) was sent to the model`);
  }
  return problems;
}

/**
 * What the run's phases (the task machine's child) show of a path, fed by nobody but the task
 * machine as its turn loop tells it: the turn's tool call is followed at once by the phases'
 * `processingToolEvents`, its result by `runnerRunning`; and a completed run whose finishing ran
 * its course (no CLOSE, CANCEL or RECORD_FAILED) publishes its `done` only after its phases
 * reached `completed` (the gatekeeper's decision published) and its record was saved.
 */
function phaseProblems(path: ModelPath, r: ReplayResult): string[] {
  const problems: string[] = [];
  const name = (e: TaskEvent | undefined) => (e === undefined ? 'nothing' : e.type === 'phase' ? `phase ${e.phase}` : e.type);
  r.events.forEach((e, i) => {
    const next = r.events[i + 1];
    if (e.type === 'tool_call' && !(next?.type === 'phase' && next.phase === 'processingToolEvents')) problems.push(`the tool call ${e.id} was followed by ${name(next)}, not the run's phases processing tool events`);
    if (e.type === 'tool_result' && !(next?.type === 'phase' && next.phase === 'runnerRunning')) problems.push(`the tool result ${e.id} was followed by ${name(next)}, not the run's phases back at runnerRunning`);
  });
  // (A run ended with a message queued goes straight on to the next run: its done comes first.)
  if (finishingCutShort(path) || queuedThenEnded(path) >= 0) return problems;
  let since = 0;
  r.events.forEach((e, i) => {
    if (e.type !== 'done') return;
    const before = r.events.slice(since, i);
    since = i + 1;
    if (e.status !== 'completed') return;
    const phases = before.filter((b) => b.type === 'phase').map((b) => (b.type === 'phase' ? b.phase : ''));
    if (phases.at(-1) !== 'completed' || !before.some((b) => b.type === 'gatekeeper')) problems.push(`a completed run's done came after its phases ${phases.join(' → ') || '(none)'}, not once they completed with the gatekeeper's decision`);
  });
  return problems;
}

/** Whether an event of the path leaves a run's `finishing` before its phases and record are over (its `done` is then published early). */
function finishingCutShort(path: ModelPath): boolean {
  let finishing = false;
  for (const e of path.events) {
    if (e.type === 'xstate.done.actor.turnLoop' || (e.type.startsWith('xstate.error') && e.type.includes('task.initializing'))) finishing = true;
    else if (e.type.includes('.finishing')) finishing = false;
    else if (finishing && EXTERNAL.has(e.type) && e.type !== 'SET_MODE' && e.type !== 'SET_MODEL' && e.type !== 'CHARGE' && e.type !== 'UNQUEUE') return true;
  }
  return false;
}

/**
 * A message sent during a run ('meanwhile'): shown as queued, never refused; once the run ends
 * (`runEnds`), the queue is sent (`unqueued` sent) after the run's `done`, the next request ends
 * with it, and the model's answer to it is published.
 */
function queueProblems(r: ReplayResult, runEnds: boolean, withdrawn: boolean): string[] {
  const problems: string[] = [];
  const queued = r.events.findIndex((e) => e.type === 'queued' && e.message.text === 'meanwhile');
  if (queued < 0) problems.push('a message sent while the run was under way was not shown as queued (no `queued` event)');
  if (withdrawn && !r.events.some((e) => e.type === 'unqueued' && e.outcome === 'withdrawn' && e.ids.includes(QUEUED_ID))) problems.push('the queued message the person cancelled did not leave the queue as withdrawn');
  if (r.events.some((e) => e.type === 'error' && /busy|under way|running/i.test(e.message))) problems.push('a message sent while the run was under way was refused with an error event');
  const sentOut = r.events.findIndex((e) => e.type === 'unqueued' && e.outcome === 'sent');
  if (!runEnds) {
    if (sentOut >= 0 || r.provider.requests.length > 1) problems.push('the queued message was sent while its run was still under way');
    return problems;
  }
  const firstDone = r.events.findIndex((e) => e.type === 'done');
  const said = r.events.findIndex((e) => e.type === 'user_message' && e.text === 'meanwhile');
  if (sentOut < 0) problems.push('the run ended but its queued message never left the queue as sent');
  if (firstDone < 0 || said < firstDone || sentOut < firstDone) problems.push(`the queued message was said (event ${said}) before the run's done (event ${firstDone})`);
  // The run after it sends it: its request (the last) ends with it. (After a run that failed with
  // no answer, it joins that run's prompt in one user message.)
  const next = r.provider.requests.at(-1);
  if (!userTextOf(next?.messages.at(-1)).endsWith('meanwhile')) {
    problems.push(`after the run the model's last request ends with ${JSON.stringify(userTextOf(next?.messages.at(-1)))}, not the queued message`);
  }
  const answered = r.events.some((e) => e.type === 'message' && e.message.role === 'assistant' && JSON.stringify(e.message.content).includes(QUEUED_ANSWER));
  if (!answered) problems.push("the model's answer to the queued message was not published");
  return problems;
}
