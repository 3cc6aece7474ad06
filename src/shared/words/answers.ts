import type { TranscriptItem } from '../domain/transcriptItem';
import type { AnswerCutOff } from '../domain/transcript';

/**
 * What people read about an answer that stopped before its end, in one table for the chat, the
 * exported Markdown and `keel tasks show`. A retried attempt is not an interruption: the answer
 * that replaced it follows, and nothing is left to resume (Claude Code and Cline show such an
 * attempt as superseded, too).
 */
export interface CutOffWords {
  /** The chat's line under the answer. */
  label: string;
  /** A short tag after "Assistant" in an export or `keel tasks show`. */
  tag: string;
  /** A sentence under the answer's text in an export. */
  sentence: string;
}

export const CUT_OFF_WORDS: Readonly<Record<AnswerCutOff, CutOffWords>> = {
  interrupted: { label: 'Interrupted', tag: 'interrupted: the answer was cut off', sentence: 'The answer was cut off here.' },
  retried: { label: 'Abandoned — retried below', tag: 'abandoned: retried below', sentence: 'This attempt was abandoned and tried again; the answer that replaced it follows.' },
  cancelled: { label: 'Cancelled — the answer stops here.', tag: 'cancelled: the answer stops here', sentence: 'The task was cancelled here.' },
};

/** How an assistant answer was cut off, or null when it ended (or still streams). */
export function cutOffOf(item: Extract<TranscriptItem, { kind: 'assistant' }>): AnswerCutOff | null {
  if (item.retried) return 'retried';
  if (item.interrupted) return 'interrupted';
  if (item.cancelled) return 'cancelled';
  return null;
}
