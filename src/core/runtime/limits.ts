import type { TurnLimits } from '../machines/turn/turn.machine';

/** Limits of a task's turn loop unless the host says otherwise. */
export const DEFAULT_LIMITS: TurnLimits = {
  maxTurns: 50,
  maxTokens: 8192,
  contextLimit: 150_000,
  retryLimit: 3,
  retryBaseMs: 1000,
  lockTimeoutMs: 0,
};
