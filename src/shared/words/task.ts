import type { RunPhase } from '../domain/events';
import type { TaskStateTag } from '../domain/stateTags';

/**
 * What people read for a task: the task machine's states (the header's badge), the store's
 * statuses (history rows, the banner of a reopened task) and a run's phases, in one table. Raw
 * names such as "awaitingUser" or "processingToolEvents" never reach the screen. A state this
 * table does not know yet reads by its tags (stateTags.ts: a new running state reads "Working"),
 * and only a state without tags is spelled out from its name ("someNewState" → "Some new state").
 */

/** How a state looks: a short label, a codicon, and a tone the CSS colours the badge by. */
export interface StateLook {
  label: string;
  /** Codicon classes (without the leading `codicon`). */
  icon: string;
  tone: 'busy' | 'done' | 'attention' | 'error' | 'paused';
  /** The end of "This task …", for a task shown from the store. */
  sentence: string;
}

const SPIN = 'codicon-loading codicon-modifier-spin';

const WORKING: StateLook = { label: 'Working', icon: SPIN, tone: 'busy', sentence: 'is working' };
const NEEDS_YOU: StateLook = { label: 'Needs you', icon: 'codicon-warning', tone: 'attention', sentence: 'stopped and needs you: Retry, or send a message' };
const DONE: StateLook = { label: 'Done', icon: 'codicon-check', tone: 'done', sentence: 'is done' };
const CANCELLED: StateLook = { label: 'Cancelled', icon: 'codicon-debug-stop', tone: 'paused', sentence: 'was cancelled' };
const FAILED: StateLook = { label: 'Failed', icon: 'codicon-error', tone: 'error', sentence: 'failed' };
const INTERRUPTED: StateLook = { label: 'Interrupted', icon: 'codicon-debug-pause', tone: 'paused', sentence: 'was interrupted' };
/** A task paused before a request its budget could not pay for (docs/cli.md, "Budget"). */
const BUDGET_REACHED: StateLook = { label: 'Budget reached', icon: 'codicon-credit-card', tone: 'attention', sentence: 'paused at its budget: raise the budget to continue' };
/** A running task whose tool call waits for the person's Allow or Deny. */
export const NEEDS_APPROVAL: StateLook = { label: 'Needs your approval', icon: 'codicon-shield', tone: 'attention', sentence: 'waits for your approval' };
/** A task another window or process runs: what the header and the history row say. */
export const RUNNING_ELSEWHERE: StateLook = { label: 'Running in another window', icon: 'codicon-lock', tone: 'busy', sentence: 'is running in another window' };

const LOOKS: Readonly<Record<string, StateLook>> = {
  created: { label: 'Starting', icon: SPIN, tone: 'busy', sentence: 'is starting' },
  initializing: { label: 'Starting', icon: SPIN, tone: 'busy', sentence: 'is starting' },
  running: WORKING,
  waitingForSubtask: { label: 'Waiting for a subtask', icon: SPIN, tone: 'busy', sentence: 'is waiting for a subtask' },
  reconstructing: { label: 'Resuming', icon: SPIN, tone: 'busy', sentence: 'is resuming' },
  awaitingUser: NEEDS_YOU,
  pausedForBudget: BUDGET_REACHED,
  completed: DONE,
  aborted: CANCELLED,
  failed: FAILED,
  interrupted: INTERRUPTED,
  'running elsewhere': RUNNING_ELSEWHERE,
};

/** "awaitingUser.retrying" → "Awaiting user retrying": the last resort for a state with no entry and no tags. */
function spelledOut(state: string): string {
  const words = state
    .replace(/[._-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : 'Unknown';
}

/** The look a state's tags give it (a state the table does not name). */
function lookOfTags(tags: readonly TaskStateTag[]): StateLook | undefined {
  if (tags.includes('running')) return WORKING;
  if (tags.includes('budgetReached')) return BUDGET_REACHED;
  if (tags.includes('waitingForPerson')) return NEEDS_YOU;
  if (tags.includes('completed')) return DONE;
  if (tags.includes('aborted')) return CANCELLED;
  if (tags.includes('interrupted')) return INTERRUPTED;
  if (tags.includes('failed')) return FAILED;
  return undefined;
}

/**
 * The look of a task state (a dotted machine path such as "running.waitingForSubtask" is read by
 * its most specific known part) or of a stored status; `tags` (the state's tags, when known)
 * give the words of a state the table does not name. Never returns a raw state name.
 */
export function stateLook(state: string, tags: readonly TaskStateTag[] = []): StateLook {
  const known = LOOKS[state];
  if (known) return known;
  const parts = state.split('.');
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = LOOKS[parts[i] ?? ''];
    if (part) return part;
  }
  const tagged = lookOfTags(tags);
  if (tagged) return tagged;
  const label = spelledOut(state);
  return { label, icon: 'codicon-circle-outline', tone: 'paused', sentence: `is ${label.toLowerCase()}` };
}

/** Each run phase in words (the runPhases machine's states; `idle` is no phase). */
const PHASE_WORDS: Readonly<Record<RunPhase, string>> = {
  idle: '',
  initializing: 'Preparing',
  memorySearch: 'Searching memory',
  runnerStarting: 'Starting',
  runnerRunning: 'Working',
  processingToolEvents: 'Working',
  gatekeeperEvaluating: 'Weighing a lesson to remember',
  memoryPersisting: 'Saving a memory',
  completed: 'Done',
  failed: 'Failed',
};

/** A run phase in words ("Searching memory"); '' for none. */
export function phaseWords(phase: RunPhase): string {
  return PHASE_WORDS[phase] ?? spelledOut(phase);
}

/**
 * What a running task's badge says while a run phase is under way: the phase's words when they
 * say more than "Working" (memory is searched, a lesson weighed or saved), else undefined.
 */
export function phaseLabel(phase: RunPhase | undefined): string | undefined {
  if (phase === 'memorySearch' || phase === 'gatekeeperEvaluating' || phase === 'memoryPersisting') return PHASE_WORDS[phase];
  return undefined;
}

/** "Preparing 12 ms, Searching memory 40 ms, Working 1.2 s": the time a run spent in each phase, in words. */
export function phaseTimes(durations: Partial<Record<RunPhase, number>>): string {
  const total = new Map<string, number>();
  for (const [phase, ms] of Object.entries(durations) as [RunPhase, number | undefined][]) {
    const words = phaseWords(phase);
    if (words) total.set(words, (total.get(words) ?? 0) + (ms ?? 0));
  }
  return [...total].map(([words, ms]) => `${words} ${ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`}`).join(', ');
}
