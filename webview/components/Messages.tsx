import { memo } from 'preact/compat';
import { useId, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { waitingNotice, type QuietAnswer, type TranscriptItem } from '../../src/shared/domain/transcript';
import { formatSeconds } from '../format';
import { renderMarkdown } from '../markdown';
import type { AttachmentSummary } from '../../src/shared/domain/attachments';
import { AttachmentChips } from './Chips';
import { SentImages } from './ComposerImages';
import type { AttachedImageInfo } from '../../src/shared/domain/events';
import { CUT_OFF_WORDS, cutOffOf } from '../../src/shared/words/answers';

type AssistantItem = Extract<TranscriptItem, { kind: 'assistant' }>;
type ErrorItem = Extract<TranscriptItem, { kind: 'error' }>;

/**
 * A message of the person, with what its mentions attached (one chip each, saying what was cut).
 * A message sent as something else (`/review a.ts`, whose command file's text the model read)
 * reads as typed, with a button that shows and hides what it sent.
 */
export const UserMessage = memo(function UserMessage({
  text,
  typed,
  attachments,
  images,
  onRewind,
}: {
  /** What the model read. */
  text: string;
  /** What the person typed, when it is not `text`. */
  typed?: string | undefined;
  attachments?: readonly AttachmentSummary[] | undefined;
  images?: readonly AttachedImageInfo[] | undefined;
  onRewind?: (() => void) | undefined;
}) {
  return (
    <article class="keel-msg keel-msg-user" data-testid="message-user" aria-label="You">
      {images && images.length > 0 && <SentImages images={images} />}
      <div class="keel-msg-body keel-pre" data-testid="message-user-text">{typed ?? text}</div>
      {typed !== undefined && <SentText typed={typed} text={text} />}
      {attachments && attachments.length > 0 && <AttachmentChips attachments={attachments} />}
      {onRewind && <RewindButton onRewind={onRewind} />}
    </article>
  );
});

/** "Show what /review sent": a disclosure of the text a typed message was sent as (closed at first). */
function SentText({ typed, text }: { typed: string; text: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const what = sentLabel(typed);
  return (
    <div class="keel-sent">
      <button
        type="button"
        class="keel-link-button"
        data-testid="message-user-sent-toggle"
        aria-expanded={open ? 'true' : 'false'}
        aria-controls={id}
        onClick={() => setOpen(!open)}
      >
        <span class={`codicon ${open ? 'codicon-chevron-down' : 'codicon-chevron-right'}`} aria-hidden="true" />
        {open ? `Hide what ${what} sent` : `Show what ${what} sent`}
      </button>
      {open && (
        <div id={id} class="keel-pre keel-sent-text" data-testid="message-user-sent" role="region" aria-label={`What ${what} sent`}>
          {text}
        </div>
      )}
    </div>
  );
}

/** How the disclosure names a typed message: its command (`/review`), else "this message". */
export function sentLabel(typed: string): string {
  const command = /^\s*(\/\S+)/.exec(typed)?.[1];
  return command ? command.slice(0, 80) : 'this message';
}

/** "Rewind to here": a preview of putting the files and the conversation back to before this step. */
export function RewindButton({ onRewind }: { onRewind: () => void }) {
  return (
    <button type="button" class="keel-icon-button keel-rewind-here" data-testid="rewind-here" title="Rewind to here" aria-label="Rewind to here" onClick={onRewind}>
      <span class="codicon codicon-discard" aria-hidden="true" />
    </button>
  );
}

/** Adds a Copy button to each code block of `root` that has none (buttons cannot come from Markdown). */
function addCopyButtons(root: HTMLElement): void {
  for (const block of root.querySelectorAll<HTMLElement>('.keel-code')) {
    if (block.querySelector('.keel-copy')) continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'keel-icon-button keel-copy';
    button.title = 'Copy code';
    button.setAttribute('aria-label', 'Copy code');
    button.dataset.testid = 'copy-code';
    const icon = document.createElement('span');
    icon.className = 'codicon codicon-copy';
    icon.setAttribute('aria-hidden', 'true');
    button.append(icon);
    block.prepend(button);
  }
}

export interface AssistantMessageProps {
  item: AssistantItem;
  /** How long it thought, in ms (undefined: unknown). */
  thoughtMs: number | undefined;
  /**
   * Whether an interrupted answer offers Resume: only the task's last answer, while the task is
   * interrupted (resumeIndex, format.ts). Elsewhere Resume would do nothing, or start a new run.
   */
  canResume: boolean;
  /** Keel waits on this answer, quiet for a while (TaskTranscript.waiting): the line under it. */
  waiting?: QuietAnswer | undefined;
  onCopy(text: string): void;
  onResume(): void;
}

/** An assistant message: thinking folded away ("Thought for N s"), text as sanitized Markdown. */
export const AssistantMessage = memo(function AssistantMessage({ item, thoughtMs, canResume, waiting, onCopy, onResume }: AssistantMessageProps) {
  const html = useMemo(() => renderMarkdown(item.text), [item.text]);
  const body = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (body.current) addCopyButtons(body.current);
  }, [html]);
  const thinkingNow = item.streaming && item.thinking && !item.text;
  const onClick = (e: MouseEvent) => {
    const button = e.target instanceof Element ? e.target.closest('.keel-copy') : null;
    if (!button) return;
    e.preventDefault();
    e.stopPropagation();
    const code = button.parentElement?.querySelector('code');
    if (code) onCopy(code.textContent ?? '');
    button.classList.add('keel-copied');
    setTimeout(() => button.classList.remove('keel-copied'), 1200);
  };
  return (
    <article
      class="keel-msg keel-msg-assistant"
      data-testid="message-assistant"
      data-streaming={item.streaming ? 'true' : 'false'}
      aria-label="Keel"
      aria-busy={item.streaming ? 'true' : 'false'}
      data-cut-off={cutOffOf(item) ?? undefined}
    >
      {item.thinking && (
        <details class="keel-thinking" data-testid="thinking">
          <summary>
            <span class={`codicon ${thinkingNow ? 'codicon-loading codicon-modifier-spin' : 'codicon-lightbulb'}`} aria-hidden="true" />{' '}
            {thinkingNow ? 'Thinking…' : thoughtMs !== undefined ? `Thought for ${formatSeconds(thoughtMs)}` : 'Thought'}
          </summary>
          <div class="keel-pre keel-thinking-text">{item.thinking}</div>
        </details>
      )}
      <div class="keel-msg-body keel-markdown" ref={body} onClick={onClick} dangerouslySetInnerHTML={{ __html: html }} />
      {item.streaming && !item.text && !item.thinking && <span class="codicon codicon-loading codicon-modifier-spin" aria-label="Responding" />}
      {waiting && <WaitingLine waiting={waiting} />}
      {item.cancelled && (
        <div class="keel-interrupted keel-cancelled" data-testid="cancelled" role="note">
          <span class="codicon codicon-debug-stop" aria-hidden="true" /> {CUT_OFF_WORDS.cancelled.label}
        </div>
      )}
      {item.retried && (
        // Superseded, not stopped: the retry's answer follows, so there is nothing to resume.
        <div class="keel-interrupted keel-retried" data-testid="retried" role="note">
          <span class="codicon codicon-history" aria-hidden="true" /> {CUT_OFF_WORDS.retried.label}
        </div>
      )}
      {item.interrupted && !item.retried && (
        <div class="keel-interrupted" data-testid="interrupted" role="note">
          <span class="codicon codicon-debug-pause" aria-hidden="true" /> {CUT_OFF_WORDS.interrupted.label}
          {canResume && (
            <button type="button" class="keel-button keel-button-secondary" data-testid="resume" onClick={onResume}>
              <span class="codicon codicon-debug-continue" aria-hidden="true" /> Resume
            </button>
          )}
        </div>
      )}
    </article>
  );
});

export interface ErrorMessageProps {
  item: ErrorItem;
  /** Whether Retry is offered: the error is retryable and nothing has happened since. */
  canRetry: boolean;
  onRetry(): void;
}

export const ErrorMessage = memo(function ErrorMessage({ item, canRetry, onRetry }: ErrorMessageProps) {
  return (
    <div class="keel-error" data-testid="error" data-code={item.code} role="alert">
      <span class="codicon codicon-error" aria-hidden="true" />
      <span class="keel-error-text">{item.message}</span>
      {canRetry && (
        <button type="button" class="keel-button keel-button-secondary" data-testid="retry" onClick={onRetry}>
          <span class="codicon codicon-refresh" aria-hidden="true" /> Retry
        </button>
      )}
    </div>
  );
});

/**
 * Keel waits on a quiet answer (TaskTranscript.waiting): the words the CLI prints, under the
 * answer that streams (or under the conversation before any of it came: waitingUnder, format.ts),
 * for as long as it is true. The transcript state clears it (the next part of the answer, a
 * retry, the run's end), so the page keeps no timer of its own.
 */
export function WaitingLine({ waiting }: { waiting: QuietAnswer }) {
  return (
    <div class="keel-waiting" data-testid="waiting" role="status">
      <span class="codicon codicon-watch" aria-hidden="true" /> {waitingNotice(waiting)}
    </div>
  );
}
