import type { TaskEvent } from '../../shared/domain/events';
import type { TaskTranscript } from '../../shared/domain/transcript';
import type { ActivitySource } from '../events/activityFeed';
import type { IterationEnd } from '../machines/loopMode/loopMode.machine';
import { taskEventHasTag } from '../machines/task/taskTags';
import type { TaskHandle } from '../runtime/types';
import { createCheckpoint } from './checkpoint';
import { judgeSettings, keepProgress, loopPaths, readText, saveState, type IterationRecord, type LoopState } from './files';
import { appendGuardrails, countErrors, ErrorCollector } from './guardrails';
import { judge, progressDigest, stopReasonOf, type Judgement } from './judge';
import { iterationPrompt } from './prompt';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The two things a loop does per iteration, as plain async functions the loop runner gives the
 * loop-mode machine as actors: run the iteration as a fresh task, then judge and record it.
 */
export interface LoopTaskHost {
  /**
   * Starts one iteration as a new task (a fresh conversation) whose only message is `prompt`.
   * The host lets it write `progressFile` without a prompt in every mode but plan.
   */
  startIteration(prompt: string, opts: { loopName: string; iteration: number; progressFile: string }): TaskHandle;
}

export interface IterationContext {
  workspace: string;
  state: LoopState;
  host: LoopTaskHost;
  /** Hook events: the iteration's Stop event carries its final message. */
  feed?: ActivitySource;
  /** Called once the iteration's task exists (the view shows it). */
  started(taskId: string): void;
  guardrail(pattern: string): void;
  checkpoint(ref: string, commit: string): void;
  log(level: 'info' | 'warn', message: string): void;
}

/** Starts iteration `n` and resolves when its task settles. Aborting `signal` cancels the task. */
export async function runIteration(c: IterationContext, n: number, signal: AbortSignal): Promise<IterationEnd> {
  const paths = loopPaths(c.workspace, c.state.name);
  const prompt = iterationPrompt({
    workspace: c.workspace,
    paths,
    iteration: n,
    settings: c.state.settings,
    anchor: readText(c.workspace, paths.anchor),
    progress: readText(c.workspace, paths.progress),
    guardrails: readText(c.workspace, paths.guardrails),
  });
  const task = c.host.startIteration(prompt, { loopName: c.state.name, iteration: n, progressFile: paths.progress });
  const record: IterationRecord = { n, taskId: task.id, startedAt: Date.now(), reasons: [] };
  // An iteration cut off (a reload, a signal, a budget pause) is started again as a new task: it
  // replaces the old record, whose spend is carried (a loop's budget counts every priced call).
  const cutOff = c.state.iterations.filter((i) => i.n >= n).reduce((sum, i) => sum + (i.costUsd ?? 0), 0);
  if (cutOff > 0) c.state.cutOffCostUsd = (c.state.cutOffCostUsd ?? 0) + cutOff;
  c.state.iterations = [...c.state.iterations.filter((i) => i.n < n), record];
  c.state.status = 'active';
  saveState(c.workspace, c.state);
  c.started(task.id);

  const errors = new ErrorCollector();
  let cost = 0;
  let stopMessage: string | undefined;
  let lastError: { code: string; message: string } | undefined;
  const unsubscribe = task.subscribe((e: TaskEvent) => {
    if (e.type === 'message') errors.message(e.message);
    else if (e.type === 'error') {
      errors.error(e.code, e.message);
      lastError = { code: e.code, message: e.message };
    } else if (e.type === 'usage') {
      cost = e.totalCostUsd;
      // Kept on the record as it grows: the runner saves it if the iteration is cut off.
      record.costUsd = cost;
    }
    else if (e.type === 'task' && taskEventHasTag(e, 'running')) lastError = undefined;
  });
  const unfeed = c.feed?.subscribe((a) => {
    if (a.kind === 'hook' && a.input.hook_event_name === 'Stop' && a.input.session_id === task.id) stopMessage = a.input.last_assistant_message;
  });
  const cancel = () => task.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const done = await task.settled();
    // A failed task waits for someone to retry it; the loop's answer is a fresh iteration.
    if (done.status === 'failed') task.abandon();
    return {
      taskId: task.id,
      status: done.status === 'running' ? 'interrupted' : done.status,
      stopReason: done.stopReason,
      ...(done.status !== 'completed' && lastError ? { error: lastError } : {}),
      finalMessage: stopMessage ?? lastAssistantText(task.transcript()),
      errors: errors.signatures,
      costUsd: cost,
    };
  } finally {
    signal.removeEventListener('abort', cancel);
    unsubscribe();
    unfeed?.();
  }
}

/**
 * Judges iteration `n` from what it left behind and records it: the progress file (kept in
 * history/), state.json, the guardrails reached, and a checkpoint when the loop takes them (a
 * failing checkpoint is a reason in the record, not a failure of the loop).
 */
export async function recordIteration(c: IterationContext, n: number, end: IterationEnd): Promise<Judgement> {
  const s = c.state;
  const paths = loopPaths(c.workspace, s.name);
  const progress = readText(c.workspace, paths.progress);
  keepProgress(c.workspace, s.name, n, progress);
  s.progressDigests = [...s.progressDigests.slice(0, n), progressDigest(progress)];
  s.stopReasons = [...s.stopReasons.slice(0, n - 1), stopReasonOf(end)];
  const judgement = judge({ iteration: n, progress, progressDigests: s.progressDigests, stopReasons: s.stopReasons, finalMessage: end.finalMessage, settings: judgeSettings(s.settings) });
  const counted = countErrors(s.errorCounts, end.errors);
  s.errorCounts = counted.counts;
  if (counted.reached.length > 0) {
    try {
      for (const p of appendGuardrails(c.workspace, paths.guardrails, counted.reached, n)) c.guardrail(p);
    } catch (err) {
      c.log('warn', `loop ${s.name}: could not append to ${paths.guardrails}: ${errorMessage(err)}`);
    }
  }
  const reasons = [...judgement.reasons];
  let checkpoint: IterationRecord['checkpoint'];
  if (s.settings.checkpoints) {
    try {
      const parent = [...s.iterations].reverse().find((i) => i.checkpoint)?.checkpoint?.commit;
      const cp = await createCheckpoint(c.workspace, s.name, n, `Keel loop ${s.name}: after iteration ${n} (${judgement.verdict})`, parent);
      checkpoint = { ref: cp.ref, commit: cp.commit };
      c.checkpoint(cp.ref, cp.commit);
    } catch (err) {
      reasons.push(`no checkpoint: ${errorMessage(err)}`);
    }
  }
  const prev = s.iterations.find((i) => i.n === n);
  const record: IterationRecord = {
    n,
    taskId: end.taskId || prev?.taskId || '',
    startedAt: prev?.startedAt ?? Date.now(),
    endedAt: Date.now(),
    status: end.status,
    stopReason: s.stopReasons[n - 1]!,
    finalMessage: end.finalMessage.slice(0, 2000),
    verdict: judgement.verdict,
    reasons,
    ...(checkpoint ? { checkpoint } : {}),
    costUsd: end.costUsd,
  };
  s.iterations = [...s.iterations.filter((i) => i.n !== n), record].sort((a, b) => a.n - b.n);
  s.iteration = n;
  s.reasons = reasons;
  s.status = judgement.verdict === 'continue' ? 'continuing' : judgement.verdict;
  saveState(c.workspace, s);
  return { verdict: judgement.verdict, reasons };
}

export function lastAssistantText(t: TaskTranscript): string {
  for (let i = t.items.length - 1; i >= 0; i--) {
    const it = t.items[i]!;
    if (it.kind === 'assistant' && it.text) return it.text;
  }
  return '';
}
