import { modelLabel as labelOf } from '../src/shared/domain/models';
import type { TaskTranscript } from '../src/shared/domain/transcript';
import type { ChatConfig } from '../src/shared/protocol/toWebview';
import { cutOffOf } from '../src/shared/words/answers';

/** Whether the task works now (Cancel shown, Send held back): its state is tagged `running`. */
export function isBusy(t: TaskTranscript | null): boolean {
  return !!t && !t.done && t.tags.includes('running');
}

/** The model label of the header: the task's model once known, else the configured one ("demo model" for the demo). */
export function modelLabel(t: TaskTranscript | null, config: ChatConfig | null): string {
  return labelOf(t?.model || config?.model || '');
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatCost(usd: number): string {
  if (usd === 0) return '$0.00';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

const MAIN_INPUT_KEYS = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'glob', 'description'];

/** The one input of a tool call worth showing on its card (e.g. the command or the file path). */
export function mainToolInput(input: Record<string, unknown>): string {
  for (const k of MAIN_INPUT_KEYS) {
    const v = input[k];
    if (typeof v === 'string' && v) return v;
  }
  for (const v of Object.values(input)) if (typeof v === 'string' && v) return v;
  const json = JSON.stringify(input);
  return json === '{}' ? '' : json;
}

export function truncate(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** "12 s", "1 min 5 s" — for thinking times. */
export function formatSeconds(ms: number): string {
  const s = Math.max(1, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** "14:05" today, else "Mar 3, 14:05". */
export function formatTime(epochMs: number, now = Date.now()): string {
  if (!epochMs) return '';
  const d = new Date(epochMs);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return new Date(now).toDateString() === d.toDateString() ? time : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}, ${time}`;
}

/** The last `maxLines` lines of `text` (live command output stays small in the DOM). */
export function tailLines(text: string, maxLines: number): { text: string; dropped: number } {
  let i = text.length;
  let n = 0;
  while (i > 0) {
    const j = text.lastIndexOf('\n', i - 2);
    n++;
    if (n > maxLines) return { text: text.slice(i), dropped: text.slice(0, i).split('\n').length - 1 };
    if (j < 0) break;
    i = j + 1;
  }
  return { text, dropped: 0 };
}

/**
 * Index of the item Retry belongs to: the last error, if nothing but notices came after it. A
 * lost worker's error offers no Retry: its task is interrupted, and Resume continues it.
 */
export function retryableIndex(items: TaskTranscript['items']): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind === 'notice') continue;
    return it.kind === 'error' && it.retryable && it.code !== 'worker_lost' ? i : -1;
  }
  return -1;
}

/**
 * Index of the answer an item-level Resume belongs to: the last answer, cut off by an
 * interruption (not given up for a retry), with nothing but notices and errors after it, while
 * the task is interrupted (its `interrupted` tag). Anywhere else Resume has nothing to continue:
 * on a live task it would only say so, and on a task reopened from the store it would start a
 * new run of a finished task; -1 then.
 */
export function resumeIndex(transcript: Pick<TaskTranscript, 'items' | 'tags'>): number {
  if (!transcript.tags.includes('interrupted')) return -1;
  const items = transcript.items;
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind === 'notice' || it.kind === 'error') continue;
    return it.kind === 'assistant' && cutOffOf(it) === 'interrupted' ? i : -1;
  }
  return -1;
}

/**
 * Where the line saying Keel waits on a quiet answer goes (TaskTranscript.waiting): under the
 * answer that streams (its index), or -1 — no wait, or none of the answer has come yet (the
 * server sent its headers, then nothing) — when it goes under the conversation instead.
 */
export function waitingUnder(transcript: Pick<TaskTranscript, 'items' | 'waiting'>): number {
  if (!transcript.waiting) return -1;
  const i = transcript.items.length - 1;
  const last = transcript.items[i];
  return last?.kind === 'assistant' && last.streaming ? i : -1;
}
