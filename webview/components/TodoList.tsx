import type { TodoItem } from '../../src/shared/domain/todos';
import { todoSummary } from '../../src/shared/domain/todos';

const MARK: Record<TodoItem['status'], string> = { pending: 'codicon-circle-large-outline', in_progress: 'codicon-circle-large-filled', completed: 'codicon-pass-filled' };
const STATUS_WORDS: Record<TodoItem['status'], string> = { pending: 'to do', in_progress: 'in progress', completed: 'done' };

/**
 * The agent's todo list as a checklist under the header: one line while collapsed ("Todos 2/5 ·
 * Running the tests"), the whole list when opened. A native `<details>`: it opens and closes with
 * the keyboard (Enter or Space on its summary) and keeps what the person chose while it updates.
 */
export function TodoList({ todos }: { todos: readonly TodoItem[] }) {
  if (todos.length === 0) return null;
  const { done, total, current } = todoSummary(todos);
  return (
    <details class="keel-todos" data-testid="todos">
      <summary class="keel-todos-summary" title="The agent's todo list">
        <span class="codicon codicon-checklist" aria-hidden="true" />
        <span data-testid="todos-count">{` Todos ${done}/${total}`}</span>
        {current && <span class="keel-note" data-testid="todos-current">{` · ${current.activeForm ?? current.content}`}</span>}
      </summary>
      <ul class="keel-todos-list" aria-label="Todo list">
        {todos.map((t, i) => (
          <li key={i} class="keel-todo" data-status={t.status} data-testid="todo">
            <span class={`codicon ${MARK[t.status]}`} aria-hidden="true" />
            <span>{` ${t.content}`}</span>
            <span class="keel-visually-hidden">{` (${STATUS_WORDS[t.status]})`}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
