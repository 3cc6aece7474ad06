import { useEffect, useState } from 'preact/hooks';
import type { ExportFormat, TaskSummary } from '../../src/shared/protocol/chatMessages';
import { StateBadge } from '../components/Header';
import { modelLabel } from '../../src/shared/domain/models';
import { formatCost, formatTime, formatTokens } from '../format';
import { stateLook } from '../../src/shared/words/task';

export interface HistoryPageProps {
  tasks: TaskSummary[] | null;
  onLoad(): void;
  onOpen(taskId: string): void;
  onResume(taskId: string): void;
  onExport(taskId: string, format: ExportFormat): void;
  onDelete(taskId: string): void;
}

/** What a row's badge says: the stored status, or the live state of a task driven here, or that another window runs it. */
export function rowStatus(t: TaskSummary): string {
  if (t.heldElsewhere && (t.status ?? 'running') === 'running') return 'running elsewhere';
  if (t.live) return t.state;
  return t.status ?? t.state;
}

/** Whether row `t` matches the search `query` (title, status as shown or as named, or id prefix; case-insensitive). */
export function matchesQuery(t: TaskSummary, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const status = rowStatus(t);
  return t.title.toLowerCase().includes(q) || status.toLowerCase().includes(q) || stateLook(status).label.toLowerCase().includes(q) || t.taskId.toLowerCase().startsWith(q);
}

function tokensOf(t: TaskSummary): string {
  return t.totalTokens !== undefined ? `${formatTokens(t.totalTokens)} tokens` : `${formatTokens(t.inputTokens)} in · ${formatTokens(t.outputTokens)} out`;
}

/**
 * Every stored task (and this window's live ones): title, time, status, tokens and cost; search;
 * open; resume (interrupted, failed, aborted); export to Markdown or JSON; delete (the host asks
 * to confirm). A task running in another window is marked and opens read-only.
 */
export function HistoryPage({ tasks, onLoad, onOpen, onResume, onExport, onDelete }: HistoryPageProps) {
  const [query, setQuery] = useState('');
  useEffect(() => onLoad(), []);
  const shown = (tasks ?? []).filter((t) => matchesQuery(t, query));
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
          {tasks.length === 0 ? 'No tasks yet.' : 'No task matches.'}
        </p>
      ) : (
        <ul class="keel-history" role="list">
          {shown.map((t) => {
            const status = rowStatus(t);
            return (
              <li
                key={t.taskId}
                class={`keel-history-row${t.current ? ' keel-history-current' : ''}`}
                data-testid="history-item"
                data-task-id={t.taskId}
                data-status={status}
              >
                <button type="button" class="keel-history-open" data-testid="history-open" onClick={() => onOpen(t.taskId)} aria-label={`Open task ${t.title}`}>
                  <span class="keel-history-title">{t.title}</span>
                  <span class="keel-history-meta">
                    <span>{formatTime(t.startedAt)}</span>
                    <StateBadge state={status} testid="history-status" />
                    {t.model && <span data-testid="history-model">{modelLabel(t.model)}</span>}
                    <span>{tokensOf(t)}</span>
                    <span>{formatCost(t.costUsd)}</span>
                    {t.heldElsewhere && <span title={`Open in ${t.heldElsewhere}`}>{`in ${t.heldElsewhere}`}</span>}
                    {t.otherWorkspace && <span title={t.otherWorkspace}>{`folder ${t.otherWorkspace.split(/[\\/]/).pop() ?? t.otherWorkspace}`}</span>}
                  </span>
                </button>
                {t.resumable && (
                  <button type="button" class="keel-icon-button" data-testid="history-resume" aria-label={`Resume ${t.title}`} title="Resume" onClick={() => onResume(t.taskId)}>
                    <span class="codicon codicon-debug-continue" aria-hidden="true" />
                  </button>
                )}
                <button
                  type="button"
                  class="keel-icon-button"
                  data-testid="history-export-md"
                  aria-label={`Export ${t.title} as Markdown`}
                  title="Export as Markdown"
                  onClick={() => onExport(t.taskId, 'markdown')}
                >
                  <span class="codicon codicon-markdown" aria-hidden="true" />
                </button>
                <button
                  type="button"
                  class="keel-icon-button"
                  data-testid="history-export-json"
                  aria-label={`Export ${t.title} as JSON`}
                  title="Export as JSON"
                  onClick={() => onExport(t.taskId, 'json')}
                >
                  <span class="codicon codicon-json" aria-hidden="true" />
                </button>
                <button type="button" class="keel-icon-button" data-testid="history-delete" aria-label={`Delete ${t.title}`} title="Delete" onClick={() => onDelete(t.taskId)}>
                  <span class="codicon codicon-trash" aria-hidden="true" />
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
