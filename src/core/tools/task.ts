import { errorMessage } from '../../shared/domain/errors';
import * as z from 'zod/mini';
import { described } from './described';

import type { Tool } from './types';

const inputSchema = z.object({
  description: described(z.string().check(z.minLength(1)), 'A short (3-5 word) description of the task'),
  prompt: described(z.string().check(z.minLength(1)), 'The task for the agent to perform, with all the context it needs'),
});
export type TaskInput = z.infer<typeof inputSchema>;

const description = `Launches a subagent to handle a self-contained task on its own and return its final answer.
- The subagent starts fresh: put everything it needs in the prompt, and say what it should report back.
- Use it for broad searches or multi-step research that would otherwise fill this conversation.`;

export const taskTool: Tool<TaskInput> = {
  name: 'Task',
  description,
  inputSchema,
  readOnly: true,
  subject(input) {
    return { kind: 'task', tool: 'Task', summary: `Subtask: ${input.description}` };
  },
  async invoke(input, ctx) {
    if (!ctx.subtasks) return { content: 'Subtasks are not available in this session; do the work directly with the other tools.', isError: true, summary: 'no subtask runner' };
    if (ctx.signal.aborted) return { content: 'The subtask was cancelled before it started.', isError: true, summary: 'cancelled' };
    try {
      return await ctx.subtasks.run(input.description, input.prompt, ctx.signal);
    } catch (err) {
      return { content: `The subtask "${input.description}" failed: ${errorMessage(err)}`, isError: true, summary: 'subtask failed' };
    }
  },
};
