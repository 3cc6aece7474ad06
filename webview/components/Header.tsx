import type { TaskTranscript } from '../../src/shared/domain/transcript';
import type { Page } from '../../src/shared/protocol/chatMessages';
import type { ChatConfig, TaskWorker } from '../../src/shared/protocol/toWebview';
import { formatCost, formatTokens, modelLabel, workerLabel } from '../format';
import { stateLook } from '../taskStates';

export interface HeaderProps {
  transcript: TaskTranscript | null;
  config: ChatConfig | null;
  page: Page;
  contextTokens: number | undefined;
  contextWindow: number;
  /** The worker process the task runs on (workers on), else null. */
  worker?: TaskWorker | null;
  onPage(page: Page): void;
}

/** "worker pid 4242": the worker process the task runs on (its state in `data-state` and the tooltip). */
function WorkerBadge({ worker }: { worker: TaskWorker }) {
  const { text, title } = workerLabel(worker);
  return (
    <span class="keel-meta-item" data-testid="task-worker" data-state={worker.state} data-pid={worker.pid ?? ''} title={title}>
      <span class="codicon codicon-server-process" aria-hidden="true" />
      {text}
    </span>
  );
}

/** The context-window meter: tokens the last request used of the model's window. */
function ContextMeter({ used, size }: { used: number; size: number }) {
  const pct = Math.min(100, Math.round((used / size) * 100));
  const level = pct >= 90 ? 'high' : pct >= 70 ? 'mid' : 'low';
  return (
    <span
      class="keel-meter"
      data-testid="context-meter"
      data-level={level}
      role="meter"
      aria-label="Context window used"
      aria-valuemin={0}
      aria-valuemax={size}
      aria-valuenow={used}
      aria-valuetext={`${formatTokens(used)} of ${formatTokens(size)} tokens (${pct}%)`}
      title={`Context: ${formatTokens(used)} / ${formatTokens(size)} tokens (${pct}%)`}
    >
      <span class="keel-meter-track">
        <span class="keel-meter-fill" style={{ width: `${pct}%` }} />
      </span>
      <span class="keel-meter-label">{`${pct}%`}</span>
    </span>
  );
}

/** The task's state in words, with its icon (the raw state stays in `data-state` for tests and styles). */
export function StateBadge({ state, testid = 'task-state' }: { state: string; testid?: string }) {
  const look = stateLook(state);
  return (
    <span class="keel-badge" data-tone={look.tone} title="Task state">
      <span class={`codicon ${look.icon}`} aria-hidden="true" />
      <span data-testid={testid} data-state={state}>
        {look.label}
      </span>
    </span>
  );
}

/**
 * Pages the header links to. New Task and History are not here: they are VS Code actions in the
 * view's title bar (and the chat tab's editor title), once (docs/architecture.md, decisions).
 */
const NAV: Array<{ page: Page; icon: string; label: string; testid: string }> = [{ page: 'settings', icon: 'codicon-settings-gear', label: 'Settings', testid: 'nav-settings' }];

/** Title, task state, model, tokens (in/out/cache), cost, the context meter, and the settings link. */
export function Header({ transcript: t, config, page, contextTokens, contextWindow, worker, onPage }: HeaderProps) {
  const u = t?.usage;
  const cache = u ? u.cacheReadTokens + u.cacheWriteTokens : 0;
  return (
    <header class="keel-header">
      <div class="keel-header-row">
        {page !== 'chat' ? (
          <button type="button" class="keel-icon-button" data-testid="nav-chat" aria-label="Back to chat" title="Back to chat" onClick={() => onPage('chat')}>
            <span class="codicon codicon-arrow-left" aria-hidden="true" />
          </button>
        ) : null}
        <h1 class="keel-title" title={page === 'chat' ? t?.title || 'New task' : undefined}>
          {page === 'history' ? 'History' : page === 'settings' ? 'Settings' : page === 'loop' ? 'Loops' : page === 'memory' ? 'Memory' : t?.title || 'New task'}
        </h1>
        <nav class="keel-nav" aria-label="Keel">
          {NAV.map((n) => (
            <button
              key={n.page}
              type="button"
              class="keel-icon-button"
              data-testid={n.testid}
              aria-label={n.label}
              aria-pressed={page === n.page ? 'true' : 'false'}
              title={n.label}
              onClick={() => onPage(page === n.page ? 'chat' : n.page)}
            >
              <span class={`codicon ${n.icon}`} aria-hidden="true" />
            </button>
          ))}
        </nav>
      </div>
      <div class="keel-header-meta" aria-label="Task status">
        {t && <StateBadge state={t.state} />}
        <span class="keel-meta-item" title={config ? `${config.providerLabel} · mode ${config.mode}` : undefined}>
          <span class="codicon codicon-sparkle" aria-hidden="true" />
          <span data-testid="model-label">{modelLabel(t, config)}</span>
        </span>
        {u && (
          <span class="keel-meta-item" data-testid="usage" title="Tokens in / out, cache (read + write), and cost">
            <span class="codicon codicon-arrow-up" aria-hidden="true" />
            {formatTokens(u.inputTokens)}
            <span class="codicon codicon-arrow-down" aria-hidden="true" />
            {formatTokens(u.outputTokens)}
            {cache > 0 && <span class="keel-cache">{` · cache ${formatTokens(cache)}`}</span>}
            <span data-testid="cost">{` · ${formatCost(u.costUsd)}`}</span>
          </span>
        )}
        {t?.phases && (
          <span
            class="keel-meta-item"
            data-testid="run-phase"
            data-phase={t.phases.phase}
            title={`Run ${t.phases.run}: ${Object.entries(t.phases.durations)
              .map(([p, ms]) => `${p} ${Math.round(ms ?? 0)} ms`)
              .join(', ')}${t.phases.failure ? ` (failed in ${t.phases.failure})` : ''}`}
          >
            <span class="codicon codicon-pulse" aria-hidden="true" />
            {t.phases.phase}
          </span>
        )}
        {t && worker && <WorkerBadge worker={worker} />}
        {t && <ContextMeter used={contextTokens ?? 0} size={contextWindow} />}
      </div>
    </header>
  );
}
