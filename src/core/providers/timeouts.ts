/**
 * How long a provider waits on a model server, and the one check of the figures a person sets
 * (`keel run --stall-timeout / --response-timeout`, the VS Code settings
 * `keel.timeouts.stallSeconds / responseSeconds`). No SDK is imported here, so the
 * CLI's help and the extension read the defaults without loading one.
 *
 * Two waits, because a slow server is slow in two places: before it answers at all (a local
 * server on a CPU loads the model and reads the whole prompt first, minutes for a big context)
 * and between parts of the answer (long pauses mid-answer). Each gives the attempt up as
 * `stream_stalled`, which the turn machine retries (docs/cli.md, "Timeouts").
 */

/**
 * No part of the answer for this long (keep-alive pings do not count) is a stall: the attempt is
 * given up and retried (at most 3 times). 30 s: a streaming answer whose server only pings for that
 * long is not coming; a permanent stall then fails after about 2.5 minutes (docs/cli.md).
 */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/**
 * How long the Anthropic provider waits for the response headers. The Messages API sends them as
 * soon as it accepts a streaming request (the answer's first token may come much later, with pings
 * in between).
 */
export const DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS = 30_000;

/**
 * How long the OpenAI-compatible provider waits for the response headers. Longer than
 * Anthropic's: local servers (Ollama, LM Studio) answer only once the model is loaded and the
 * prompt read, which can take minutes.
 */
export const DEFAULT_OPENAI_HEADER_TIMEOUT_MS = 120_000;

/**
 * The range a person may set, in seconds. Below 1 s a healthy server's ordinary pause would be
 * given up as stalled; above an hour a hung server holds a task for longer than anyone waits.
 */
export const TIMEOUT_SECONDS = { min: 1, max: 3600 } as const;

/** What a valid figure is, for error messages: "a number of seconds from 1 to 3600". */
export const TIMEOUT_SECONDS_WANTED = `a number of seconds from ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}`;

/**
 * A timeout as typed on a command line: plain decimal seconds ("90", "2.5"), within
 * {@link TIMEOUT_SECONDS}. Anything else — "0", "-5", "10s", "1e3", "NaN", "" — is null. Pure.
 */
export function timeoutSecondsFromText(text: string): number | null {
  const t = text.trim();
  if (!/^(\d+(\.\d+)?|\.\d+)$/.test(t)) return null;
  return timeoutSecondsFromSetting(Number(t));
}

/**
 * A timeout as a settings file holds it: a JSON number within {@link TIMEOUT_SECONDS}. Anything
 * else (a string, null, NaN, Infinity, 0, a negative number) is null. Pure.
 */
export function timeoutSecondsFromSetting(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  return value >= TIMEOUT_SECONDS.min && value <= TIMEOUT_SECONDS.max ? value : null;
}

/** Seconds as the providers take them (whole milliseconds). */
export function secondsToMs(seconds: number): number {
  return Math.round(seconds * 1000);
}
