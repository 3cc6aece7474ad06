import { useEffect, useState } from 'preact/hooks';
import type { TaskSummary } from '../../src/shared/protocol/chatMessages';
import { formatCost, formatTime, formatTokens } from '../format';

export interface HistoryPageProps {
  tasks: TaskSummary[] | null;
  onLoad(): void;
  onOpen(taskId: string): void;
  onDelete(taskId: string): void;
}

/** This window's tasks: title, time, status, tokens and cost; search; open; delete (hides it). */
export function HistoryPage({ tasks, onLoad, onOpen, onDelete }: HistoryPageProps) {
  const [query, setQuery] = useState('');
  useEffect(() => onLoad(), []);
  const q = query.trim().toLowerCase();
  const shown = (tasks ?? []).filter((t) => !q || t.title.toLowerCase().includes(q) || t.state.toLowerCase().includes(q));
  return (
    <section class="keel-page" data-testid="history-page" aria-label="Task history">
      <input
        class="keel-text-input"
        type="search"
        data-testid="history-search"
        aria-label="Search tasks"
        placeholder="Search tasks"
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
      />
      {tasks === null ? (
        <p class="keel-note">Loading…</p>
      ) : shown.length === 0 ? (
        <p class="keel-note" data-testid="history-empty">
          {tasks.length === 0 ? 'No tasks in this window yet.' : 'No task matches.'}
        </p>
      ) : (
        <ul class="keel-history" role="list">
          {shown.map((t) => (
            <li key={t.taskId} class={`keel-history-row${t.current ? ' keel-history-current' : ''}`} data-testid="history-item" data-task-id={t.taskId}>
              <button type="button" class="keel-history-open" onClick={() => onOpen(t.taskId)} aria-label={`Open task ${t.title}`}>
                <span class="keel-history-title">{t.title}</span>
                <span class="keel-history-meta">
                  <span>{formatTime(t.startedAt)}</span>
                  <span class="keel-badge" data-state={t.state}>{t.state}</span>
                  <span>{`${formatTokens(t.inputTokens)} in · ${formatTokens(t.outputTokens)} out`}</span>
                  <span>{formatCost(t.costUsd)}</span>
                </span>
              </button>
              <button type="button" class="keel-icon-button" data-testid="history-delete" aria-label={`Remove ${t.title} from history`} title="Remove from history" onClick={() => onDelete(t.taskId)}>
                <span class="codicon codicon-trash" aria-hidden="true" />
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
