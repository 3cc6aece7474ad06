/**
 * Error codes shared by the core, the CLI and the webview. Every failure a user can see carries
 * one of these, so the UI and tests can act on the kind of failure rather than on message text.
 */
export const ERROR_CODES = [
  'no_api_key',
  'auth_failed',
  'connection_refused',
  'connection_reset',
  'stream_stalled',
  'overloaded',
  'rate_limited',
  'server_error',
  'bad_request',
  'malformed_response',
  'max_tokens_tool_input',
  'max_turns',
  'cancelled',
  'tool_failed',
  'invalid_input',
  /** A hook (docs/hooks.md) blocked the prompt: it was not sent to the model. */
  'blocked_by_hook',
  'internal',
  /** The worker process running the task's turn died (crash, kill, lost connection): the task is interrupted. */
  'worker_lost',
  /** No worker could take the task's turn in time (the pool is full or workers fail to start). */
  'worker_unavailable',
  /** The task's record could not be saved (a full disk, its folder removed…): the run was stopped and ended failed. */
  'record_failed',
  /** The next model request could take the task past its budget (docs/cli.md, "Budget"): the task paused before it. */
  'budget_exceeded',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** A failure as data: what happened, whether retrying could help. */
export interface KeelError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/**
 * The words of an unknown thrown or rejected value, for logs, results and the person: an Error's
 * message, a string as is, an object's `message` (a KeelError), otherwise its JSON. Pure; never
 * throws.
 */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  if (typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string') return err.message;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}
