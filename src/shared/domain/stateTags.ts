/**
 * What a machine's state means to the code around it, said once, as tags on the states of the
 * machine's definition (STYLE.md item 11). Views, the status board, a host's lifetime and the
 * store ask `snapshot.hasTag(tag)` — or, for a state named in an event or a log, the tags the
 * definition gives that state (`taskStateTags`, `turnStateTags` in src/core/machines) — and never
 * keep a list of state names. A state added to a machine gets its meaning by its tags, in one
 * place. The words people read are another matter: src/shared/words/ maps tags and states to them.
 */

/**
 * The task machine's tags (src/core/machines/task/task.machine.ts).
 *
 * - `running`: a run is starting, going on, or resuming. Cancel stops it, a message sent now is
 *   refused, a view shows the task busy, the host counts it as a query.
 * - `settled`: no run is going on: the last one ended (completed, cancelled, failed) or was
 *   stopped (interrupted). A follow-up, Retry or Resume starts the next.
 * - `waitingForPerson`: the task cannot go on by itself: a run failed, and it waits for Retry or
 *   a message.
 * - `budgetReached`: the task paused before a model request that could take it past its budget
 *   (docs/cli.md, "Budget"); raising the budget continues it.
 * - `completed`, `failed`, `aborted`, `interrupted`: how a settled state is stored (a task's
 *   status in history and `keel tasks`); a `running` state is stored as `running`.
 */
export const TASK_STATE_TAGS = ['running', 'settled', 'waitingForPerson', 'budgetReached', 'completed', 'failed', 'aborted', 'interrupted'] as const;
export type TaskStateTag = (typeof TASK_STATE_TAGS)[number];

export function isTaskStateTag(tag: string): tag is TaskStateTag {
  return (TASK_STATE_TAGS as readonly string[]).includes(tag);
}

/**
 * The turn machine's tags (src/core/machines/turn/turn.machine.ts).
 *
 * - `compacting`: the conversation is being summarized to fit the model's window.
 * - `working`: the model is answering, or a tool (built in or MCP) runs: the agent visibly makes
 *   progress, so it no longer waits for the person.
 */
export const TURN_STATE_TAGS = ['compacting', 'working'] as const;
export type TurnStateTag = (typeof TURN_STATE_TAGS)[number];

export function isTurnStateTag(tag: string): tag is TurnStateTag {
  return (TURN_STATE_TAGS as readonly string[]).includes(tag);
}
