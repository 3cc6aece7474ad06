import { useMemo } from 'preact/hooks';
import type { TranscriptItem } from '../../src/shared/domain/transcript';
import { renderMarkdown } from '../markdown';

type AssistantItem = Extract<TranscriptItem, { kind: 'assistant' }>;
type ErrorItem = Extract<TranscriptItem, { kind: 'error' }>;

export function UserMessage({ text }: { text: string }) {
  return (
    <article class="keel-msg keel-msg-user" data-testid="message-user" aria-label="You">
      <div class="keel-msg-body keel-pre">{text}</div>
    </article>
  );
}

/** An assistant message: thinking folded away, text as sanitized Markdown. */
export function AssistantMessage({ item }: { item: AssistantItem }) {
  const html = useMemo(() => renderMarkdown(item.text), [item.text]);
  return (
    <article
      class="keel-msg keel-msg-assistant"
      data-testid="message-assistant"
      data-streaming={item.streaming ? 'true' : 'false'}
      aria-label="Keel"
      aria-busy={item.streaming ? 'true' : 'false'}
    >
      {item.thinking && (
        <details class="keel-thinking">
          <summary>
            <span class="codicon codicon-lightbulb" aria-hidden="true" /> Thinking
          </summary>
          <div class="keel-pre">{item.thinking}</div>
        </details>
      )}
      <div class="keel-msg-body keel-markdown" dangerouslySetInnerHTML={{ __html: html }} />
      {item.streaming && !item.text && <span class="codicon codicon-loading codicon-modifier-spin" aria-label="Responding" />}
      {item.interrupted && <div class="keel-note">(interrupted)</div>}
    </article>
  );
}

export interface ErrorMessageProps {
  item: ErrorItem;
  /** Whether Retry is offered: the error is retryable and nothing has happened since. */
  canRetry: boolean;
  onRetry(): void;
}

export function ErrorMessage({ item, canRetry, onRetry }: ErrorMessageProps) {
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
}
