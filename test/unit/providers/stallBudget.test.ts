import { expect, it } from 'vitest';
import { DEFAULT_STALL_TIMEOUT_MS } from '../../../src/core/providers/timeouts';
import { retryDelayMs } from '../../../src/core/machines/turn/conversation';
import { DEFAULT_LIMITS } from '../../../src/core/runtime/limits';

/**
 * Issue 26 item 11: a stream that stays silent for good fails in well under the 308 s it took
 * (4 attempts of up to 75 s). The budget, decided and documented in docs/cli.md: a stall is
 * declared after 30 s without a part of the answer (the guard looks four times per timeout, so
 * up to 37.5 s), and a stalled attempt is retried like any transient failure (3 retries, 1, 2,
 * 4 s apart): about 2.5 minutes at most. Checked from the same constants the run uses.
 */
it('a permanent stall fails within 160 s: 4 attempts of at most 1.25 × the stall timeout, plus the backoff', () => {
  expect(DEFAULT_STALL_TIMEOUT_MS).toBe(30_000);
  const attempts = DEFAULT_LIMITS.retryLimit + 1;
  let backoff = 0;
  for (let retry = 1; retry <= DEFAULT_LIMITS.retryLimit; retry++) backoff += retryDelayMs(retry, undefined, DEFAULT_LIMITS.retryBaseMs);
  const worst = attempts * DEFAULT_STALL_TIMEOUT_MS * 1.25 + backoff;
  expect(worst).toBeLessThanOrEqual(160_000);
});
