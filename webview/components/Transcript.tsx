import { Virtualizer, elementScroll, measureElement, observeElementOffset, observeElementRect } from '@tanstack/virtual-core';
import { useEffect, useLayoutEffect, useReducer, useRef, useState } from 'preact/hooks';
import type { TaskTranscript, TranscriptItem } from '../../src/shared/domain/transcript';
import { rewoundWords } from '../../src/shared/domain/checkpoints';
import { AssistantMessage, ErrorMessage, UserMessage } from './Messages';
import { ToolCard } from './ToolCard';
import { resumeIndex, retryableIndex, waitingUnder } from '../format';
import { EndFollower } from '../stickToEnd';

export interface TranscriptProps {
  transcript: TaskTranscript;
  /** How long each assistant message thought, by id (ms). */
  thoughtMs(messageId: string): number | undefined;
  /** Tool call ids that wait for a permission answer. */
  awaiting: ReadonlySet<string>;
  onRetry(): void;
  onResume(): void;
  onOpenLink(href: string): void;
  onCopy(text: string): void;
  onOpenDiff(toolCallId: string): void;
  onOpenSubtask(toolCallId: string): void;
  /** Opens a memory the run used (`.keel/memory/<file>`) in an editor; absent: titles are plain text. */
  onOpenMemory?(file: string): void;
  /** "Rewind to here" on a user message, a tool card or a rewind's Undo (absent while the task works). */
  onRewind?: ((stepId: string) => void) | undefined;
}

/** A rough height before a row is measured, so the scrollbar is about right for long tasks. */
function estimate(item: TranscriptItem | undefined): number {
  if (!item) return 40;
  switch (item.kind) {
    case 'user':
      return 36 + Math.min(400, Math.ceil((item.typed ?? item.text).length / 60) * 18);
    case 'assistant':
      return 30 + Math.min(2000, Math.ceil(item.text.length / 60) * 19);
    case 'tool':
      return item.name === 'Read' || item.name === 'Glob' || item.name === 'Grep' ? 30 : 120;
    default:
      return 40;
  }
}

/** A Virtualizer owned by a component: re-renders it when the visible range or sizes change. */
function useVirtualizer(count: number, getScrollElement: () => HTMLDivElement | null, items: TranscriptItem[]) {
  const [, rerender] = useReducer((x: number) => x + 1, 0);
  const itemsRef = useRef(items);
  itemsRef.current = items;
  const [v] = useState(
    () =>
      new Virtualizer<HTMLDivElement, HTMLDivElement>({
        count,
        getScrollElement,
        estimateSize: (i) => estimate(itemsRef.current[i]),
        getItemKey: (i) => itemsRef.current[i]?.id ?? i,
        scrollToFn: elementScroll,
        observeElementRect,
        observeElementOffset,
        measureElement,
        overscan: 4,
        anchorTo: 'end',
        followOnAppend: true,
        onChange: () => rerender(0),
      }),
  );
  v.setOptions({ ...v.options, count, getScrollElement, onChange: () => rerender(0) });
  useLayoutEffect(() => v._didMount(), [v]);
  useLayoutEffect(() => v._willUpdate());
  return v;
}

/** Keys that move a scrolled view up. */
const UP_KEYS = new Set(['ArrowUp', 'PageUp', 'Home']);

/**
 * Whether a wheel turned up (or a key pressed) at `target` moves something other than the
 * transcript: a text field's caret, or a box inside it that scrolls on its own (a command's
 * output, a long code block) and is not at its top yet. The transcript itself does not move then,
 * so the person has not left its end.
 */
function handledInside(target: EventTarget | null, transcript: HTMLElement): boolean {
  if (target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return true;
  for (let n = target instanceof Element ? target : null; n && n !== transcript; n = n.parentElement) {
    if (n.scrollTop > 0 && n.scrollHeight > n.clientHeight && /^(auto|scroll)$/.test(getComputedStyle(n).overflowY)) return true;
  }
  return false;
}

/**
 * Keeps the end of the transcript in view while the person reads it: when the transcript's own
 * height changes (a permission card docks below it or goes, the composer grows) and when its
 * content grows (a streamed answer, a new card). Reading earlier messages (scrolled up) is left
 * alone. Whether the person is reading the end is judged by `EndFollower` (stickToEnd.ts), from
 * scroll events and from the person starting to move up (wheel, keys, the scrollbar).
 */
function useStickToEnd(scroller: { current: HTMLDivElement | null }): void {
  useEffect(() => {
    const el = scroller.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const follower = new EndFollower(el);
    const onScroll = () => follower.scrolled(el);
    const onWheel = (e: WheelEvent) => {
      if (e.deltaY < 0 && !handledInside(e.target, el)) follower.leaving(el);
    };
    const onKey = (e: KeyboardEvent) => {
      if ((UP_KEYS.has(e.key) || (e.key === ' ' && e.shiftKey)) && !handledInside(e.target, el)) follower.leaving(el);
    };
    // A press on the transcript right of its content is on its scrollbar (grabbing it to move).
    const onPointer = (e: PointerEvent) => {
      if (e.target === el && e.offsetX > el.clientWidth) follower.leaving(el);
    };
    const observer = new ResizeObserver(() => {
      if (follower.resized(el)) el.scrollTop = el.scrollHeight;
    });
    el.addEventListener('scroll', onScroll, { passive: true });
    el.addEventListener('wheel', onWheel, { passive: true });
    el.addEventListener('keydown', onKey);
    el.addEventListener('pointerdown', onPointer);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => {
      el.removeEventListener('scroll', onScroll);
      el.removeEventListener('wheel', onWheel);
      el.removeEventListener('keydown', onKey);
      el.removeEventListener('pointerdown', onPointer);
      observer.disconnect();
    };
  }, [scroller]);
}

/**
 * The chat items of a task, virtualized: only the rows in view (plus a few) are in the DOM, so a
 * ten-thousand-message task stays light; rows are memoized by item, so while an answer streams
 * only its row re-renders. Follows the bottom while the user is there; clicks on links are handed
 * to the host (which opens http(s) and asks about anything else) instead of navigating.
 */
export function Transcript(props: TranscriptProps) {
  const { transcript, thoughtMs, awaiting, onRetry, onResume, onOpenLink, onCopy, onOpenDiff, onOpenSubtask, onOpenMemory, onRewind } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const items = transcript.items;
  const v = useVirtualizer(items.length, () => scroller.current, items);
  const firstTask = useRef<string | null>(null);

  // A newly shown task opens at its end.
  useLayoutEffect(() => {
    if (firstTask.current === transcript.taskId || items.length === 0) return;
    firstTask.current = transcript.taskId;
    v.scrollToIndex(items.length - 1, { align: 'end' });
  }, [transcript.taskId, items.length, v]);

  useStickToEnd(scroller);

  const onClick = (e: MouseEvent) => {
    const target = e.target instanceof Element ? e.target.closest('a') : null;
    if (!target) return;
    e.preventDefault();
    const href = target.getAttribute('href');
    if (href) onOpenLink(href);
  };

  const retryAt = retryableIndex(items);
  const resumeAt = resumeIndex(transcript);
  const waitingAt = waitingUnder(transcript);
  const rows = v.getVirtualItems();
  return (
    <div class="keel-transcript" ref={scroller} onClick={onClick} role="log" aria-label="Conversation" aria-live="off" tabIndex={0}>
      <div class="keel-transcript-inner" style={{ height: `${v.getTotalSize()}px` }}>
        {rows.map((row) => {
          const item = items[row.index];
          if (!item) return null;
          return (
            <div key={row.key} class="keel-row" data-index={row.index} ref={v.measureElement} style={{ transform: `translateY(${row.start}px)` }}>
              {renderItem(item, row.index, row.index === retryAt, row.index === resumeAt)}
            </div>
          );
        })}
      </div>
    </div>
  );

  function renderItem(item: TranscriptItem, index: number, canRetry: boolean, canResume: boolean) {
    switch (item.kind) {
      case 'user':
        return <UserMessage text={item.text} typed={item.typed} attachments={item.attachments} images={item.images} onRewind={onRewind ? () => onRewind(item.id) : undefined} />;
      case 'assistant':
        return (
          <AssistantMessage
            item={item}
            thoughtMs={item.thinking ? thoughtMs(item.id) : undefined}
            canResume={canResume}
            waiting={index === waitingAt ? transcript.waiting : undefined}
            onCopy={onCopy}
            onResume={onResume}
          />
        );
      case 'tool':
        return <ToolCard item={item} awaitingPermission={awaiting.has(item.id)} onOpenDiff={onOpenDiff} onOpenSubtask={onOpenSubtask} onRewind={onRewind} />;
      case 'error':
        return <ErrorMessage item={item} canRetry={canRetry} onRetry={onRetry} />;
      case 'notice':
        return (
          <div class="keel-note" role="note">
            {item.text}
          </div>
        );
      case 'context':
        return (
          <div class="keel-note keel-context" role="note" data-testid="context-note">
            {item.instructions.length > 0 && <span data-testid="context-instructions">{`Instructions: ${item.instructions.join(', ')}`}</span>}
            {item.instructions.length > 0 && item.memories.length > 0 && ' · '}
            {item.memories.length > 0 && (
              <span data-testid="context-memories">
                {`Used ${item.memories.length} ${item.memories.length === 1 ? 'memory' : 'memories'}: `}
                {item.memories.map((m, i) => (
                  <span key={m.file}>
                    {i > 0 && '; '}
                    {onOpenMemory ? (
                      <button type="button" class="keel-link-button" data-testid="context-memory" data-file={m.file} title={`Open .keel/memory/${m.file}`} onClick={() => onOpenMemory(m.file)}>
                        {m.title}
                      </button>
                    ) : (
                      m.title
                    )}
                  </span>
                ))}
              </span>
            )}
          </div>
        );
      case 'gatekeeper':
        return (
          <div class="keel-note keel-gatekeeper" role="note">
            {item.decision === 'saved' ? `Remembered: ${item.title ?? ''} (.keel/memory/${item.file ?? ''})` : `A lesson was not kept (${item.rule}: ${item.reasons.join('; ')})`}
          </div>
        );
      case 'rewind':
        return (
          <div class="keel-note keel-rewind-note" role="note" data-testid="rewind-marker" data-action={item.action}>
            <span class="codicon codicon-discard" aria-hidden="true" />
            {` ${item.label} — ${rewoundWords(item.files)}`}
            {item.action === 'rewind' && onRewind && (
              <button type="button" class="keel-link-button" data-testid="rewind-undo" title="Undo this rewind (shows what it would do first)" onClick={() => onRewind(item.id)}>
                Undo
              </button>
            )}
          </div>
        );
    }
  }
}
