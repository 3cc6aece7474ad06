import type { ConversationMessage, ToolResultBlock } from '../../shared/domain/messages';
import type { LoggedToolCall, ReplayedTask } from './replay';

/** How an interrupted task continues: what to add to its conversation, and what to tell the model. */
export interface ResumePlan {
  /**
   * Messages that close what the interruption left open, in order: the cut-off answer (text
   * only) and a result for every tool call whose result was never recorded. They go into the log
   * as `message` events, so a later replay sees the same conversation.
   */
  repairs: ConversationMessage[];
  /** The conversation with the repairs, as the model will see it before the note. */
  conversation: ConversationMessage[];
  /** The next user message: how long ago and what was cut off, then the follow-up if any. */
  note: string;
}

/** The tool_result given to a call whose result was not recorded: it is not run again here. */
export function unconfirmedResult(call: LoggedToolCall): ToolResultBlock {
  const content = call.finished
    ? `This ${call.name} call finished before the task was interrupted (${call.finished.isError ? 'with an error' : 'it reported'}: ${call.finished.summary}), ` +
      'but its output was not recorded. It was not run again; call it again if you need its output.'
    : call.decision === 'deny'
      ? `This ${call.name} call was denied before the task was interrupted. It did not run.`
      : `The task was interrupted (the process running it ended) while this ${call.name} call was pending. It is not confirmed to have run: ` +
        'it may have run partly, completely or not at all, and it was not run again. Check the current state before relying on it; ' +
        'calling it again asks for permission again.';
  return { type: 'tool_result', tool_use_id: call.id, content, is_error: true };
}

/**
 * Plans the resume of a task whose process went away. Pure. Never re-runs anything: a tool call
 * without a recorded result gets a result saying so, and if the model asks for it again, that new
 * call goes through the permission check like any other.
 */
export function planResume(task: ReplayedTask, now: number, followUp?: string): ResumePlan {
  const repairs: ConversationMessage[] = [];
  const cut = task.cutOff;
  const partial = cut?.text.trimEnd() ?? '';
  if (partial) repairs.push({ role: 'assistant', content: [{ type: 'text', text: partial }] });
  // Unanswered calls belong to the last assistant message; results must follow it directly.
  if (task.unanswered.length > 0 && !partial) repairs.push({ role: 'user', content: task.unanswered.map(unconfirmedResult) });

  const ago = describeAgo(now - (task.lastAt || now));
  const what: string[] = [];
  if (partial) what.push(`your answer above was cut off after ${partial.length} characters (it ends at "${tail(partial)}"); the user saw it only up to there`);
  else if (cut) what.push('you were starting an answer, but nothing of it was kept');
  if (cut?.thinking) what.push('your thinking in that answer was lost');
  if (cut?.toolInput) what.push('a tool call you were writing was cut off and was not run');
  const n = task.unanswered.length;
  const names = task.unanswered.map((c) => c.name).join(', ');
  if (n > 0) what.push(`${n === 1 ? 'a tool call' : `${n} tool calls`} (${names}) did not report a result and ${n === 1 ? 'is' : 'are'} not confirmed to have run`);
  if (what.length === 0) what.push('nothing was in progress');
  const note =
    `[Keel: this task was interrupted ${ago} ago (the program running it stopped) and is now resumed. ${capitalize(what.join('; '))}.]` +
    (followUp?.trim() ? `\n\n${followUp.trim()}` : '\n\nContinue from where you stopped.');

  // With a partial answer after unanswered calls, the results still have to come first.
  const conversation = [...task.conversation];
  if (partial && task.unanswered.length > 0) {
    const results: ConversationMessage = { role: 'user', content: task.unanswered.map(unconfirmedResult) };
    repairs.unshift(results);
  }
  conversation.push(...repairs);
  return { repairs, conversation, note };
}

function tail(text: string): string {
  const t = text.slice(-60).replace(/\s+/g, ' ');
  return text.length > 60 ? `…${t}` : t;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** "45 seconds", "3 minutes", "2 hours", "4 days". */
export function describeAgo(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const unit = (n: number, u: string) => `${n} ${u}${n === 1 ? '' : 's'}`;
  if (s < 90) return unit(s, 'second');
  const m = Math.round(s / 60);
  if (m < 90) return unit(m, 'minute');
  const h = Math.round(m / 60);
  if (h < 36) return unit(h, 'hour');
  return unit(Math.round(h / 24), 'day');
}
