import { useEffect, useMemo, useState } from 'preact/hooks';
import type { FromWebviewMessage } from '../../src/shared/protocol/fromWebview';
import type { LoopPageView, LoopsState } from '../../src/shared/protocol/loopMessages';
import { DiffView } from '../components/DiffView';
import { formatCost, formatTime } from '../format';
import { loopStatusWords, loopStopWords } from '../../src/shared/words/agents';
import { stateLook } from '../../src/shared/words/task';
import { renderInlineMarkdown, renderMarkdown } from '../markdown';

export interface LoopPageProps {
  state: LoopsState | null;
  /** The loop to show (from "Keel: Show Loop" or the Agents view); else the newest. */
  selected: string | undefined;
  onSelect(name: string): void;
  post(message: FromWebviewMessage): void;
  /** Opens an iteration's task in the chat. */
  onOpenTask(taskId: string): void;
}

/** What the status badge says of a loop, and who drives it (src/shared/words/agents.ts). Pure. */
export const loopStatusLabel = (l: Pick<LoopPageView, 'status' | 'driver' | 'heldBy'>): string => loopStatusWords(l);

/** Whether the page offers Continue (a stalled loop, or one a reload interrupted) and Cancel. Pure. */
export function loopActions(l: Pick<LoopPageView, 'status' | 'driver'>): { continue: boolean; cancel: boolean } {
  const ended = l.status === 'complete' || l.status === 'stopped' || l.status === 'cancelled';
  if (ended || l.driver === 'elsewhere') return { continue: false, cancel: false };
  const running = (l.status === 'active' || l.status === 'continuing') && l.driver === 'here';
  return { continue: !running, cancel: true };
}

/**
 * Where a loop is, for people: "iteration 3 of at most 3" while an iteration runs (the running
 * one counts), "2 of at most 3 iterations" once none does. Pure.
 */
export function loopProgressWords(l: Pick<LoopPageView, 'iteration' | 'iterations' | 'settings'>): string {
  const max = l.settings.maxIterations;
  const current = Math.max(l.iteration, ...l.iterations.map((i) => i.n));
  const running = l.iterations.some((i) => i.endedAt === undefined);
  return running ? `iteration ${current} of at most ${max}` : `${current} of at most ${max} iteration${max === 1 ? '' : 's'}`;
}

/** A click on a link in rendered Markdown goes to the host, which opens http(s) and asks about the rest. */
function openLinkOf(e: MouseEvent, post: (m: FromWebviewMessage) => void): void {
  const a = e.target instanceof Element ? e.target.closest('a') : null;
  if (!a) return;
  e.preventDefault();
  const href = a.getAttribute('href');
  if (href) post({ type: 'openLink', href });
}

/** Markdown the model or a person wrote (a goal, a reason, a stop reason), sanitized like the chat's. */
function Md({ text, inline = true, ...rest }: { text: string; inline?: boolean; class?: string; 'data-testid'?: string }) {
  const html = useMemo(() => (inline ? renderInlineMarkdown(text) : renderMarkdown(text)), [text, inline]);
  return inline ? <span {...rest} dangerouslySetInnerHTML={{ __html: html }} /> : <div {...rest} dangerouslySetInnerHTML={{ __html: html }} />;
}

/**
 * The loop page (docs/loop.md, "In VS Code"): the workspace's loops; for the one shown, its goal,
 * status and reasons, Cancel and (stalled or interrupted) Continue, and every iteration with its
 * verdict and reasons, the progress file's changes since the iteration before, its task, and its
 * checkpoint with "Restore files to this checkpoint" (the host asks to confirm). It asks for the
 * loops once; the host sends every change after that. Goal, reasons and stop reasons come from the
 * model and the repository: rendered as the chat renders the model's Markdown (raw HTML shown as
 * text, no images, links opened by the host); the progress file's changes are a diff of its text.
 */
export function LoopPage({ state, selected, onSelect, post, onOpenTask }: LoopPageProps) {
  useEffect(() => post({ type: 'getLoops' }), []);
  if (!state) return <section class="keel-page" data-testid="loop-page"><p class="keel-note">Loading…</p></section>;
  if (!state.available) return <section class="keel-page" data-testid="loop-page"><p class="keel-note">Open a folder to run loops.</p></section>;
  const loop = state.loops.find((l) => l.name === selected) ?? state.loops[0];
  return (
    <section class="keel-page keel-loop-page" data-testid="loop-page" aria-label="Loops" onClick={(e) => openLinkOf(e, post)}>
      {state.loops.length === 0 && (
        <p class="keel-note" data-testid="loop-empty">
          No loops in this workspace. Start one with "Keel: Start Loop" or keel loop "&lt;goal&gt;".
        </p>
      )}
      {state.loops.length > 1 && (
        <nav class="keel-loop-list" aria-label="Loops of this workspace">
          {state.loops.map((l) => (
            <button
              key={l.name}
              type="button"
              class={`keel-button keel-button-secondary${l.name === loop?.name ? ' keel-loop-current' : ''}`}
              data-testid="loop-select"
              aria-pressed={l.name === loop?.name ? 'true' : 'false'}
              onClick={() => onSelect(l.name)}
            >
              {`${l.name} · ${loopStatusLabel(l)}`}
            </button>
          ))}
        </nav>
      )}
      {loop && <LoopDetails loop={loop} post={post} onOpenTask={onOpenTask} />}
      {state.problems.map((p, i) => (
        <p key={i} class="keel-settings-status keel-settings-status-error" data-testid="loop-problem">
          {p}
        </p>
      ))}
    </section>
  );
}

function LoopDetails({ loop, post, onOpenTask }: { loop: LoopPageView; post(m: FromWebviewMessage): void; onOpenTask(taskId: string): void }) {
  const can = loopActions(loop);
  const act = (action: 'cancel' | 'continue') => post({ type: 'loopAction', action, name: loop.name });
  return (
    <article class="keel-loop" data-testid="loop" data-loop={loop.name} data-status={loop.status} data-driver={loop.driver}>
      <h2 class="keel-section-title">
        <span data-testid="loop-name">{loop.name}</span>{' '}
        <span class="keel-badge" data-testid="loop-status" data-status={loop.status}>
          {loopStatusLabel(loop)}
        </span>
      </h2>
      <p class="keel-loop-goal">
        <Md text={loop.goal} data-testid="loop-goal" />
      </p>
      <p class="keel-note" data-testid="loop-progress">
        {`${loopProgressWords(loop)} · stop word ${loop.settings.stopWord}`}
        {loop.settings.promise !== undefined ? ` · promise ${loop.settings.promise}` : ''}
        {loop.settings.checkpoints ? ' · checkpoints' : ''}
      </p>
      {loop.reasons.length > 0 && (
        <ul class="keel-loop-reasons" data-testid="loop-reasons">
          {loop.reasons.map((r, i) => (
            <li key={i}>
              <Md text={r} />
            </li>
          ))}
        </ul>
      )}
      <div class="keel-loop-actions">
        {can.continue && (
          <button type="button" class="keel-button" data-testid="loop-continue" onClick={() => act('continue')}>
            Continue
          </button>
        )}
        {can.cancel && (
          <button type="button" class="keel-button keel-button-secondary" data-testid="loop-cancel" onClick={() => act('cancel')}>
            Cancel Loop
          </button>
        )}
      </div>
      <ol class="keel-loop-iterations" aria-label="Iterations">
        {[...loop.iterations].reverse().map((it) => {
          const idx = loop.iterations.indexOf(it);
          const before = idx > 0 ? loop.iterations[idx - 1]?.progress : loop.initialProgress;
          return <Iteration key={it.n} it={it} before={before ?? ''} loop={loop} post={post} onOpenTask={onOpenTask} />;
        })}
      </ol>
    </article>
  );
}

type IterationView = LoopPageView['iterations'][number];

function Iteration({ it, before, loop, post, onOpenTask }: { it: IterationView; before: string; loop: LoopPageView; post(m: FromWebviewMessage): void; onOpenTask(taskId: string): void }) {
  const [showDiff, setShowDiff] = useState(true);
  const running = it.endedAt === undefined;
  return (
    <li class="keel-loop-iteration" data-testid="loop-iteration" data-n={it.n} data-verdict={it.verdict ?? (running ? 'running' : 'none')}>
      <div class="keel-loop-iteration-head">
        <strong>{`Iteration ${it.n}`}</strong>
        <span class="keel-badge" data-testid="loop-verdict">
          {it.verdict ?? (running ? 'running' : it.status ? stateLook(it.status).label.toLowerCase() : '')}
        </span>
        <span class="keel-note">{`${formatTime(it.startedAt)}${it.costUsd !== undefined ? ` · ${formatCost(it.costUsd)}` : ''}`}</span>
        <button type="button" class="keel-icon-button" data-testid="loop-open-task" aria-label={`Open the chat of iteration ${it.n}`} title="Open its chat" onClick={() => onOpenTask(it.taskId)}>
          <span class="codicon codicon-comment-discussion" aria-hidden="true" />
        </button>
      </div>
      {it.reasons.length > 0 && (
        <ul class="keel-loop-reasons" data-testid="loop-iteration-reasons">
          {it.reasons.map((r, i) => (
            <li key={i}>
              <Md text={r} />
            </li>
          ))}
        </ul>
      )}
      {it.stopReason && (
        <div class="keel-note keel-loop-stop" data-testid="loop-stop-reason">
          <Md text={loopStopWords(it.stopReason)} inline={false} class="keel-markdown" />
        </div>
      )}
      {it.progress !== undefined && (
        <div class="keel-loop-progress">
          <button type="button" class="keel-link-button" aria-expanded={showDiff ? 'true' : 'false'} onClick={() => setShowDiff(!showDiff)}>
            {it.progress === before ? 'progress.md unchanged' : 'Changes to progress.md'}
          </button>
          {showDiff && it.progress !== before && <DiffView before={before} after={it.progress} maxLines={200} />}
        </div>
      )}
      {it.checkpoint && (
        <div class="keel-loop-checkpoint">
          <span class="keel-note" title={it.checkpoint.ref}>{`Checkpoint ${it.checkpoint.commit.slice(0, 12)}`}</span>{' '}
          <button
            type="button"
            class="keel-button keel-button-secondary"
            data-testid="loop-restore"
            onClick={() => post({ type: 'loopAction', action: 'restore', name: loop.name, commit: it.checkpoint!.commit })}
          >
            Restore files to this checkpoint
          </button>
        </div>
      )}
    </li>
  );
}
