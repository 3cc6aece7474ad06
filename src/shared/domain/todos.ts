/**
 * The agent's todo list (Claude Code's TodoWrite): the whole list as the model last wrote it.
 * Shown as a checklist in the chat's header and in `keel run`; kept in the task's events, so a
 * resumed task shows it again.
 */
export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export interface TodoItem {
  /** What to do, in the imperative ("Run the tests"). */
  content: string;
  status: TodoStatus;
  /** The same while it is being done ("Running the tests"); optional. */
  activeForm?: string;
}

/** The most items a list holds, and the longest text of one (longer ones are cut). */
export const MAX_TODOS = 100;
export const MAX_TODO_CHARS = 500;

/** "2/5 done" and the item being worked on, for a collapsed checklist and one-line output. */
export function todoSummary(todos: readonly TodoItem[]): { done: number; total: number; current: TodoItem | undefined } {
  return { done: todos.filter((t) => t.status === 'completed').length, total: todos.length, current: todos.find((t) => t.status === 'in_progress') };
}
