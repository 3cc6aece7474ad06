import type { TaskTranscript } from '../../src/shared/domain/transcript';
import type { ChatConfig } from '../../src/shared/protocol/toWebview';
import { formatCost, formatTokens, modelLabel } from '../format';

export interface HeaderProps {
  transcript: TaskTranscript | null;
  config: ChatConfig | null;
  onNewTask(): void;
}

/** Title, task state, model, tokens and cost of the shown task, and the New Task button. */
export function Header({ transcript: t, config, onNewTask }: HeaderProps) {
  const tokens = t ? t.usage.inputTokens + t.usage.cacheReadTokens + t.usage.cacheWriteTokens : 0;
  return (
    <header class="keel-header" role="banner">
      <div class="keel-header-row">
        <h1 class="keel-title" title={t?.title || 'New task'}>
          {t?.title || 'New task'}
        </h1>
        <button type="button" class="keel-icon-button" data-testid="new-task" aria-label="New Task" title="New Task" onClick={onNewTask}>
          <span class="codicon codicon-add" aria-hidden="true" />
        </button>
      </div>
      <div class="keel-header-meta" aria-label="Task status">
        {t && (
          <span class="keel-badge" data-state={t.state} title="Task state">
            <span data-testid="task-state">{t.state}</span>
          </span>
        )}
        <span class="keel-meta-item" title={config ? `${config.providerLabel} · mode ${config.mode}` : undefined}>
          <span class="codicon codicon-sparkle" aria-hidden="true" />
          <span data-testid="model-label">{modelLabel(t, config)}</span>
        </span>
        {t && (
          <span class="keel-meta-item" data-testid="usage" title="Tokens in / out, and cost">
            {`${formatTokens(tokens)} in · ${formatTokens(t.usage.outputTokens)} out · ${formatCost(t.usage.costUsd)}`}
          </span>
        )}
      </div>
    </header>
  );
}
