import type { EventObject } from 'xstate';
import type { WorkerEvent } from '../machines/worker/worker.machine';

/** The health clock's limits (the pool's options; WorkerTimeouts carries them). */
export interface HealthLimits {
  healthIntervalMs: number;
  healthAnswerMs: number;
  /** The same limit while the worker runs a query (it may be working hard, below the host's priority). */
  busyHealthAnswerMs: number;
}

/**
 * The health clock: HEALTH_DUE every interval; HEALTH_TIMEOUT when a SENT check is not ANSWERED in
 * time **and the worker sent nothing else since**: a worker busy sending (a 50 MB answer in parts)
 * is plainly alive even if its answer to the check waits behind what it is sending. "In time" is
 * `healthAnswerMs` for an idle worker and `busyHealthAnswerMs` for one running a query (SENT says
 * `busy`): a worker runs below the host's CPU priority, and on a machine whose cores are taken by
 * programs at normal priority one that is handling a large answer got ~1/20 of a core and went
 * silent for 10 s (issue 26, item 4) — busy, not stuck. A stuck busy worker is still killed (later),
 * and a cancel kills it after its own grace period (the worker machine's `cancelling`).
 */
export function healthClock(t: HealthLimits, lastHeardAt: () => number, sendBack: (e: WorkerEvent) => void, receive: (listener: (e: EventObject) => void) => void): () => void {
  let answerTimer: NodeJS.Timeout | undefined;
  let judging: NodeJS.Immediate | undefined;
  const interval = setInterval(() => {
    if (answerTimer === undefined) sendBack({ type: 'HEALTH_DUE' });
  }, t.healthIntervalMs);
  const settle = () => {
    clearTimeout(answerTimer);
    clearImmediate(judging);
    answerTimer = judging = undefined;
  };
  receive((e) => {
    if (e.type === 'SENT' && answerTimer === undefined) {
      const sentAt = Date.now();
      const ms = (e as EventObject & { busy?: boolean }).busy ? t.busyHealthAnswerMs : t.healthAnswerMs;
      answerTimer = setTimeout(() => {
        // Judged after this turn's I/O: a host that was busy itself runs its timers before it
        // reads what the worker sent meanwhile.
        judging = setImmediate(() => {
          settle();
          if (lastHeardAt() < sentAt) sendBack({ type: 'HEALTH_TIMEOUT', ms });
        });
      }, ms);
    }
    if (e.type === 'ANSWERED') settle();
  });
  return () => {
    clearInterval(interval);
    settle();
  };
}
