import { useLayoutEffect, useRef } from 'preact/hooks';
import type { TaskTranscript, TranscriptItem } from '../../src/shared/domain/transcript';
import { AssistantMessage, ErrorMessage, UserMessage } from './Messages';
import { ToolCard } from './ToolCard';

export interface TranscriptProps {
  transcript: TaskTranscript;
  onRetry(): void;
  onOpenLink(href: string): void;
}

/** Index of the item Retry belongs to: the last error, if nothing but notices came after it. */
function retryableIndex(items: TranscriptItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind === 'notice') continue;
    return it.kind === 'error' && it.retryable ? i : -1;
  }
  return -1;
}

/**
 * The chat items of a task. Follows the bottom while the user is there; clicks on links are
 * handed to the host (which opens only http(s)) instead of navigating the webview.
 */
export function Transcript({ transcript, onRetry, onOpenLink }: TranscriptProps) {
  const ref = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useLayoutEffect(() => {
    const el = ref.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  const onScroll = () => {
    const el = ref.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };

  const onClick = (e: MouseEvent) => {
    const target = e.target instanceof Element ? e.target.closest('a') : null;
    if (!target) return;
    e.preventDefault();
    const href = target.getAttribute('href');
    if (href) onOpenLink(href);
  };

  const retryAt = retryableIndex(transcript.items);
  return (
    <div class="keel-transcript" ref={ref} onScroll={onScroll} onClick={onClick} role="log" aria-label="Conversation">
      {transcript.items.map((item, i) => {
        switch (item.kind) {
          case 'user':
            return <UserMessage key={item.id} text={item.text} />;
          case 'assistant':
            return <AssistantMessage key={item.id} item={item} />;
          case 'tool':
            return <ToolCard key={item.id} item={item} />;
          case 'error':
            return <ErrorMessage key={item.id} item={item} canRetry={i === retryAt} onRetry={onRetry} />;
          case 'notice':
            return (
              <div key={item.id} class="keel-note" role="note">
                {item.text}
              </div>
            );
        }
      })}
    </div>
  );
}
