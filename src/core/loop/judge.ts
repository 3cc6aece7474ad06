import { createHash } from 'node:crypto';

/**
 * The loop's judge: after each iteration it decides, from what the iteration left behind alone,
 * whether the loop is complete, stalled or goes on (docs/loop.md). Pure and deterministic.
 *
 * - complete: the stop word appears in the progress file (as a word, case-sensitive), or the
 *   final message holds `<promise>TEXT</promise>` with TEXT equal to the configured promise
 *   (whitespace-insensitive);
 * - stopped: the iteration just ended was the last one allowed and the goal is not reached (a
 *   limit reached is not a goal reached);
 * - stalled: the last STALL_SAME_REASONS iterations stopped for the same reason, or the progress
 *   file did not change during the last STALL_UNCHANGED_PROGRESS iterations;
 * - continue: otherwise.
 * Completion is checked first: an iteration that finishes the goal is never called stalled.
 */
export const STALL_SAME_REASONS = 5;
export const STALL_UNCHANGED_PROGRESS = 3;
export const DEFAULT_MAX_ITERATIONS = 50;
export const DEFAULT_STOP_WORD = 'DONE';

export interface LoopSettings {
  maxIterations: number;
  stopWord: string;
  /** Completion promise; absent: only the stop word and max iterations complete the loop. */
  promise?: string;
}

export interface JudgeInput {
  /** The iteration that just ended, from 1. */
  iteration: number;
  /** The progress file now. */
  progress: string;
  /**
   * `progressDigest` of the progress file before the first iteration (index 0) and after each
   * iteration so far (index i), this one included: `iteration + 1` entries.
   */
  progressDigests: readonly string[];
  /** The stop reason of every iteration so far (see `stopReasonOf`), oldest first, this one last. */
  stopReasons: readonly string[];
  /** The iteration's final assistant message. */
  finalMessage: string;
  settings: LoopSettings;
}

export type Verdict = 'complete' | 'stopped' | 'stalled' | 'continue';

export interface Judgement {
  verdict: Verdict;
  /** Why, for people (the loop panel, state.json). */
  reasons: string[];
}

/** A digest of the progress file that ignores whitespace differences. */
export function progressDigest(progress: string): string {
  return createHash('sha256').update(progress.split(/\s+/).filter(Boolean).join(' ')).digest('hex').slice(0, 16);
}

export function judge(input: JudgeInput): Judgement {
  const { settings } = input;
  const reasons: string[] = [];
  const word = settings.stopWord.trim();
  if (word && containsWord(input.progress, word)) return { verdict: 'complete', reasons: [`the stop word "${word}" is in the progress file`] };
  const promised = promises(input.finalMessage);
  const want = settings.promise !== undefined ? normalize(settings.promise) : undefined;
  if (want !== undefined && want !== '') {
    if (promised.some((p) => normalize(p) === want)) return { verdict: 'complete', reasons: [`the final message keeps the promise <promise>${settings.promise!.trim()}</promise>`] };
    if (promised.length > 0) reasons.push(`the promise tag <promise>${promised[0]!.trim()}</promise> does not match the configured promise`);
  } else if (promised.length > 0) reasons.push('a promise tag was given but no promise is configured');
  if (input.iteration >= settings.maxIterations) {
    return { verdict: 'stopped', reasons: [...reasons, `stopped: iteration limit reached (${settings.maxIterations} iterations) without reaching the goal`] };
  }
  const last = input.stopReasons.slice(-STALL_SAME_REASONS);
  if (last.length === STALL_SAME_REASONS && last.every((r) => r === last[0])) {
    return { verdict: 'stalled', reasons: [...reasons, `the same stop reason ${STALL_SAME_REASONS} times in a row: ${last[0]}`] };
  }
  const digests = input.progressDigests.slice(-(STALL_UNCHANGED_PROGRESS + 1));
  if (digests.length === STALL_UNCHANGED_PROGRESS + 1 && digests.every((d) => d === digests[0])) {
    return { verdict: 'stalled', reasons: [...reasons, `the progress file did not change for ${STALL_UNCHANGED_PROGRESS} iterations`] };
  }
  const before = input.progressDigests.at(-2);
  reasons.push(before !== undefined && before === input.progressDigests.at(-1) ? 'the progress file did not change this iteration' : 'the progress file changed');
  if (word) reasons.push(`the stop word "${word}" is not in the progress file yet`);
  return { verdict: 'continue', reasons };
}

/**
 * What an iteration stopped on, for the "same reason N times" rule: a failure by its error code
 * and message, a cancel as such, and a finished answer by its final message (an agent saying the
 * same thing again and again is stuck; different answers are progress).
 */
export function stopReasonOf(end: { status: string; stopReason: string | null; error?: { code: string; message: string }; finalMessage: string }): string {
  if (end.error) return `${end.status}: ${end.error.code}: ${firstLine(end.error.message)}`;
  if (end.status !== 'completed') return end.status;
  return `${end.stopReason ?? 'end_turn'}: ${normalize(end.finalMessage).slice(0, 200)}`;
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '').trim().slice(0, 200);
}

function normalize(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function containsWord(text: string, word: string): boolean {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A word boundary only where the stop word itself starts or ends with a word character.
  const lead = /^\w/.test(word) ? '(?<![\\w])' : '';
  const tail = /\w$/.test(word) ? '(?![\\w])' : '';
  return new RegExp(`${lead}${escaped}${tail}`).test(text);
}

function promises(message: string): string[] {
  return [...message.matchAll(/<promise>([\s\S]*?)<\/promise>/g)].map((m) => m[1] ?? '');
}
