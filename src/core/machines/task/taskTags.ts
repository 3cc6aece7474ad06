import type { TaskStatus } from '../../../shared/domain/events';
import { isTaskStateTag, type TaskStateTag } from '../../../shared/domain/stateTags';
import { tagsOfState } from '../stateTags';
import { taskMachine } from './task.machine';

/**
 * What a task state means, for code that knows the state only by its name (an event, a log, a
 * stored snapshot): the tags the task machine's definition gives it, ancestors' included
 * (src/shared/domain/stateTags.ts says what each tag means). An unknown state has none.
 */
export function taskStateTags(state: string): TaskStateTag[] {
  return tagsOfState(taskMachine, state).filter(isTaskStateTag);
}

/**
 * Whether a `task` event's state has `tag`: the event's own tags, or — for an event logged before
 * events carried tags — the definition's tags for its state.
 */
export function taskEventHasTag(e: { state: string; tags?: readonly TaskStateTag[] }, tag: TaskStateTag): boolean {
  return (e.tags ?? taskStateTags(e.state)).includes(tag);
}

const STORED: readonly TaskStatus[] = ['running', 'completed', 'failed', 'aborted', 'interrupted'];

/**
 * The status a task state is stored as (history, `keel tasks`, meta.json): the one of its tags
 * that names a status; null for a state the definition does not know.
 */
export function taskStatusOfState(state: string): TaskStatus | null {
  const tags: readonly string[] = taskStateTags(state);
  return STORED.find((s) => tags.includes(s)) ?? null;
}
