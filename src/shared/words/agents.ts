import type { AgentRow } from '../domain/agents';
import type { LoopStatus } from '../domain/loop';

/**
 * The status board's rows and the loops in people's words (the Agents view, `keel status`, the
 * loop page): never the agentStatus or loopMode machine's state names.
 */

const AGENT_WORDS: Readonly<Record<AgentRow['status'], string>> = {
  waiting: 'waiting',
  working: 'working',
  attention: 'needs you',
  compacting: 'compacting',
  done: 'done',
  error: 'failed',
};

/** "working", "needs you (permission)": what an agent row is doing. */
export function agentStatusWords(r: Pick<AgentRow, 'status' | 'attention' | 'note'>): string {
  return r.status === 'attention' && r.attention ? `needs you (${r.attention})` : (r.note ?? AGENT_WORDS[r.status]);
}

/** What the loop page's status badge says of a loop, and who drives it. Pure. */
export function loopStatusWords(l: { status: LoopStatus; driver: 'here' | 'elsewhere' | 'none'; heldBy?: string | undefined }): string {
  if (l.driver === 'elsewhere') return `${l.status === 'stalled' ? 'stalled' : 'running'} in ${l.heldBy ?? 'another process'}`;
  if ((l.status === 'active' || l.status === 'continuing') && l.driver === 'none') return 'interrupted';
  if (l.status === 'active' || l.status === 'continuing') return 'running';
  if (l.status === 'stopped') return 'stopped: iteration limit reached';
  // complete, stalled, cancelled: words already.
  return l.status;
}

/** How the model's answer ended, for a loop iteration's stop reason (provider stop reasons). */
const ANSWER_ENDS: Readonly<Record<string, string>> = {
  end_turn: 'Ended with',
  max_tokens: 'Cut off at the answer length limit',
  stop_sequence: 'Stopped at a stop sequence',
  tool_use: 'Stopped at a tool call',
  pause_turn: 'Paused',
  refusal: 'Refused',
};

const TASK_ENDS: Readonly<Record<string, string>> = { failed: 'Failed', aborted: 'Cancelled', interrupted: 'Interrupted', running: 'Still running', completed: 'Completed' };

/**
 * A loop iteration's stop reason in words. The judge records it as "<provider stop reason>:
 * <the answer's end>" or "<task status>[: <error code>: <message>]" (core/loop/judge.ts); people
 * read "Ended with: Iteration two finished." or "Failed: No Anthropic API key is set." (the
 * error code left out). Anything else is shown as it is.
 */
export function loopStopWords(stopReason: string): string {
  const answer = /^([a-z_]+): ([\s\S]*)$/.exec(stopReason);
  if (answer && ANSWER_ENDS[answer[1]!]) return `${ANSWER_ENDS[answer[1]!]}: ${answer[2]}`;
  const task = /^([a-z]+)(?:: [a-z_]+: ([\s\S]*))?$/.exec(stopReason);
  if (task && TASK_ENDS[task[1]!]) return task[2] ? `${TASK_ENDS[task[1]!]}: ${task[2]}` : TASK_ENDS[task[1]!]!;
  return stopReason;
}
