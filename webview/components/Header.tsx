import type { TaskTranscript } from '../../src/shared/domain/transcript';
import type { Page, StoredTaskState } from '../../src/shared/protocol/chatMessages';
import type { ChatConfig, TaskWorker } from '../../src/shared/protocol/toWebview';
import { NEEDS_APPROVAL, phaseLabel, phaseTimes, RUNNING_ELSEWHERE, stateLook, type StateLook } from '../../src/shared/words/task';
import { taskWorkerTooltip } from '../../src/shared/words/workers';
import { formatCost, formatTokens, modelLabel } from '../format';
import { formatBytes } from '../../src/shared/domain/checkpoints';
import { TodoList } from './TodoList';

export interface HeaderProps {
  transcript: TaskTranscript | null;
  config: ChatConfig | null;
  page: Page;
  contextTokens: number | undefined;
  contextWindow: number;
  /** The worker process the task runs on (workers on), else null. */
  worker?: TaskWorker | null;
  /** Set when the task is shown from the store (e.g. another window runs it). */
  stored?: StoredTaskState | undefined;
  /** A permission prompt of the shown task waits for the person. */
  awaitingApproval?: boolean;
  onPage(page: Page): void;
}

/**
 * The worker the task runs on, as a small icon: which process (id, pid) is in its tooltip, where it
 * helps, not in the header's text (its state in `data-state`, its pid in `data-pid`).
 */
function WorkerIcon({ worker }: { worker: TaskWorker }) {
  const tip = taskWorkerTooltip(worker);
  return (
    <span class="keel-meta-item keel-worker" data-testid="task-worker" data-state={worker.state} data-pid={worker.pid ?? ''} title={tip} aria-label={tip} role="img">
      <span class="codicon codicon-server-process" aria-hidden="true" />
    </span>
  );
}

/**
 * The context-window meter: a thin line along the header's bottom edge (no height of its own) and
 * "12% context" in the meta line; the figures in its tooltip.
 */
function ContextMeter({ used, size }: { used: number; size: number }) {
  const pct = Math.min(100, Math.round((used / size) * 100));
  const level = pct >= 90 ? 'high' : pct >= 70 ? 'mid' : 'low';
  const text = `${formatTokens(used)} of ${formatTokens(size)} tokens (${pct}%)`;
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
      aria-valuetext={text}
      title={`Context window: ${text}`}
    >
      <span class="keel-meter-label">{`${pct}% context`}</span>
      <span class="keel-meter-track" aria-hidden="true">
        <span class="keel-meter-fill" style={{ width: `${pct}%` }} />
      </span>
    </span>
  );
}

/**
 * The words a shown task's badge says: its state, refined by what it waits for (the person's
 * approval) or the run's phase, or that another window runs it.
 */
export function taskLook(t: TaskTranscript, stored?: StoredTaskState, awaitingApproval = false): StateLook {
  // Another window drives it and has not settled it: that is what a person needs to know.
  if (stored?.heldElsewhere && stored.status === 'running') return RUNNING_ELSEWHERE;
  if (awaitingApproval && !t.done) return NEEDS_APPROVAL;
  const look = stateLook(t.state, t.tags);
  // Until the run is over (its `done` waits for the memory write), a phase that says more than
  // "Working" is what the task does: searching memory, weighing or saving a lesson.
  const phase = t.done ? undefined : phaseLabel(t.phases?.phase);
  return phase ? { ...look, label: phase } : look;
}

/** The task's state in words, with its icon (the raw state stays in `data-state` for tests and styles). */
export function StateBadge({ state, look = stateLook(state), testid = 'task-state', title = 'Task state' }: { state: string; look?: StateLook; testid?: string; title?: string }) {
  return (
    <span class="keel-badge" data-tone={look.tone} title={title}>
      <span class={`codicon ${look.icon}`} aria-hidden="true" />
      <span data-testid={testid} data-state={state}>
        {look.label}
      </span>
    </span>
  );
}

const PAGE_TITLES: Record<Exclude<Page, 'chat'>, string> = { history: 'History', settings: 'Settings', loop: 'Loops', memory: 'Memory' };

/**
 * Two short lines: the title with the task's state and the settings link; then the model, tokens,
 * cost and how full the context window is, cut off rather than wrapped in a narrow sidebar, so the
 * transcript keeps most of the view. Other pages (history, settings, loops, memory) show only
 * their title and the way back: the task's figures are not theirs.
 */
export function Header({ transcript: t, config, page, contextTokens, contextWindow, worker, stored, awaitingApproval = false, onPage }: HeaderProps) {
  const u = t?.usage;
  const cache = u ? u.cacheReadTokens + u.cacheWriteTokens : 0;
  const chat = page === 'chat';
  const phases = t?.phases;
  const stateTitle = phases ? `Task state. Run ${phases.run}: ${phaseTimes(phases.durations)}${phases.failure ? ` (failed: ${phases.failure})` : ''}` : 'Task state';
  return (
    <header class="keel-header" data-page={page}>
      <div class="keel-header-row">
        {!chat ? (
          <button type="button" class="keel-icon-button" data-testid="nav-chat" aria-label="Back to chat" title="Back to chat" onClick={() => onPage('chat')}>
            <span class="codicon codicon-arrow-left" aria-hidden="true" />
          </button>
        ) : null}
        <h1 class="keel-title" title={chat ? t?.title || 'New task' : undefined}>
          {chat ? t?.title || 'New task' : PAGE_TITLES[page]}
        </h1>
        {chat && t && <StateBadge state={t.state} look={taskLook(t, stored, awaitingApproval)} title={stateTitle} />}
        <nav class="keel-nav" aria-label="Keel">
          <button
            type="button"
            class="keel-icon-button"
            data-testid="nav-settings"
            aria-label="Settings"
            aria-pressed={page === 'settings' ? 'true' : 'false'}
            title="Settings"
            onClick={() => onPage(page === 'settings' ? 'chat' : 'settings')}
          >
            <span class="codicon codicon-settings-gear" aria-hidden="true" />
          </button>
        </nav>
      </div>
      {chat && t && (
        <div class="keel-header-meta" aria-label="Task status">
          <span class="keel-meta-item" title={config ? `${config.providerLabel}: ${modelLabel(t, config)}` : undefined}>
            <span data-testid="model-label">{modelLabel(t, config)}</span>
          </span>
          {u && (
            <span class="keel-meta-item" data-testid="usage" title={`Tokens in ${u.inputTokens}, out ${u.outputTokens}, cache ${cache} (read + write); cost ${formatCost(u.costUsd)}`}>
              {`↑${formatTokens(u.inputTokens)} ↓${formatTokens(u.outputTokens)}`}
              {cache > 0 && <span class="keel-cache">{` cache ${formatTokens(cache)}`}</span>}
              <span data-testid="cost">{` ${formatCost(u.costUsd)}`}</span>
            </span>
          )}
          {t.checkpointBytes !== undefined && (
            <span class="keel-meta-item" data-testid="checkpoint-storage" title="What this task's checkpoints hold on disk (the earlier contents of the files it changed, shared with its forks)">
              <span class="codicon codicon-history" aria-hidden="true" />
              {` ${formatBytes(t.checkpointBytes)}`}
            </span>
          )}
          {worker && <WorkerIcon worker={worker} />}
          <ContextMeter used={contextTokens ?? 0} size={contextWindow} />
        </div>
      )}
      {chat && t?.todos && <TodoList todos={t.todos} />}
    </header>
  );
}
