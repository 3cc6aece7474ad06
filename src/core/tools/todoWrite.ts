import * as z from 'zod/mini';
import { MAX_TODO_CHARS, MAX_TODOS, TODO_STATUSES, type TodoItem } from '../../shared/domain/todos';
import { described } from './described';
import type { Tool } from './types';

/**
 * TodoWrite, as Claude Code's: the model keeps a todo list of its work by writing the whole list
 * each time. The list becomes a `todos` event (the chat's checklist, `keel run`'s output, the
 * task's log, so a resumed task shows it again). It touches nothing, so it needs no permission
 * beyond a deny rule naming it (its subject reads no path); a command's allowed-tools never
 * narrow it away.
 */
const itemSchema = z.object({
  content: described(z.string().check(z.minLength(1)), 'What to do, in the imperative ("Run the tests")'),
  status: described(z.enum(TODO_STATUSES), 'pending, in_progress (one at a time) or completed'),
  activeForm: z.optional(described(z.string(), 'The same while it is being done ("Running the tests")')),
  // Older Claude Code lists carry these; they are accepted and not kept.
  id: z.optional(z.string()),
  priority: z.optional(z.string()),
});
const inputSchema = z.object({ todos: described(z.array(itemSchema).check(z.maxLength(MAX_TODOS)), 'The whole updated todo list') });
export type TodoWriteInput = z.infer<typeof inputSchema>;

const description = `Writes your todo list for this task: the whole list each time (it replaces the previous one).
- Use it for work of three or more steps: write the steps as pending, mark one in_progress before you start it, and completed as soon as it is done.
- Keep exactly one item in_progress while you work; the person sees the list as a checklist.
- Skip it for a single, simple step.`;

export const todoWriteTool: Tool<TodoWriteInput> = {
  name: 'TodoWrite',
  description,
  inputSchema,
  readOnly: true,
  subject() {
    return { kind: 'read', tool: 'TodoWrite', paths: [], summary: 'Update the todo list' };
  },
  async invoke(input, ctx) {
    const todos: TodoItem[] = input.todos.map((t) => ({
      content: t.content.slice(0, MAX_TODO_CHARS),
      status: t.status,
      ...(t.activeForm ? { activeForm: t.activeForm.slice(0, MAX_TODO_CHARS) } : {}),
    }));
    ctx.todos?.(todos);
    const done = todos.filter((t) => t.status === 'completed').length;
    return {
      content: 'Todos have been modified successfully. Keep using the todo list to track your progress, and go on with the current item.',
      isError: false,
      summary: `${done}/${todos.length} done`,
    };
  },
};
