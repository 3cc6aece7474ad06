/**
 * What people read for a task's state: the task machine's states (the header's badge) and the
 * store's statuses (history rows, the banner of a reopened task), in one table. Raw names such
 * as "awaitingUser" never reach the screen; a state this table does not know yet is spelled out
 * from its name ("someNewState" → "Some new state") rather than shown raw.
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

const LOOKS: Readonly<Record<string, StateLook>> = {
  created: { label: 'Starting', icon: SPIN, tone: 'busy', sentence: 'is starting' },
  initializing: { label: 'Starting', icon: SPIN, tone: 'busy', sentence: 'is starting' },
  running: { label: 'Working', icon: SPIN, tone: 'busy', sentence: 'is working' },
  waitingForSubtask: { label: 'Waiting for a subtask', icon: SPIN, tone: 'busy', sentence: 'is waiting for a subtask' },
  reconstructing: { label: 'Resuming', icon: SPIN, tone: 'busy', sentence: 'is resuming' },
  awaitingUser: { label: 'Needs you', icon: 'codicon-warning', tone: 'attention', sentence: 'stopped and needs you: Retry, or send a message' },
  completed: { label: 'Done', icon: 'codicon-check', tone: 'done', sentence: 'is done' },
  aborted: { label: 'Cancelled', icon: 'codicon-debug-stop', tone: 'paused', sentence: 'was cancelled' },
  failed: { label: 'Failed', icon: 'codicon-error', tone: 'error', sentence: 'failed' },
  interrupted: { label: 'Interrupted', icon: 'codicon-debug-pause', tone: 'paused', sentence: 'was interrupted' },
  'running elsewhere': { label: 'Running elsewhere', icon: 'codicon-lock', tone: 'busy', sentence: 'is running in another window' },
};

/** "awaitingUser.retrying" → "Awaiting user retrying": a readable fallback for a state not in the table. */
function spelledOut(state: string): string {
  const words = state
    .replace(/[._-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : 'Unknown';
}

/**
 * The look of a task state (a dotted machine path such as "running.waitingForSubtask" is read
 * by its most specific known part) or of a stored status. Never returns a raw state name.
 */
export function stateLook(state: string): StateLook {
  const known = LOOKS[state];
  if (known) return known;
  const parts = state.split('.');
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = LOOKS[parts[i] ?? ''];
    if (part) return part;
  }
  const label = spelledOut(state);
  return { label, icon: 'codicon-circle-outline', tone: 'paused', sentence: `is ${label.toLowerCase()}` };
}
