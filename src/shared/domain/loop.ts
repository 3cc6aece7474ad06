/**
 * What hosts and views see of a loop (docs/loop.md): its state, settings and iterations. The loop
 * panel renders it; the CLI prints its events.
 */
/** `stopped`: every allowed iteration ran and the goal was not reached (not a success). */
export type LoopStatus = 'active' | 'continuing' | 'complete' | 'stopped' | 'stalled' | 'cancelled';
export type LoopVerdict = 'complete' | 'stopped' | 'stalled' | 'continue';

export interface LoopIterationView {
  n: number;
  taskId: string;
  startedAt: number;
  endedAt?: number;
  /** The task's end: completed, failed, aborted. */
  status?: string;
  stopReason?: string;
  verdict?: LoopVerdict;
  reasons: string[];
  checkpoint?: { ref: string; commit: string };
  costUsd?: number;
  /** The progress file after this iteration (absent while it runs, or when not kept). */
  progress?: string;
}

export interface LoopView {
  name: string;
  goal: string;
  status: LoopStatus;
  /** Iterations finished. */
  iteration: number;
  settings: { maxIterations: number; stopWord: string; promise?: string; checkpoints: boolean };
  /** Why the loop is where it is (the last verdict's reasons). */
  reasons: string[];
  /** The progress file as the loop started. */
  initialProgress: string;
  iterations: LoopIterationView[];
  /** The task of the iteration running now. */
  currentTaskId?: string;
}

/** A loop's progress as a CLI stream-json line or a host notification. */
export type LoopEvent =
  | { type: 'loop'; name: string; state: 'started' | 'resumed'; iteration: number }
  | { type: 'loop'; name: string; state: 'iteration'; iteration: number; taskId: string }
  | { type: 'loop'; name: string; state: 'judged'; iteration: number; verdict: LoopVerdict; reasons: string[] }
  | { type: 'loop'; name: string; state: 'guardrail'; iteration: number; pattern: string }
  | { type: 'loop'; name: string; state: 'checkpoint'; iteration: number; ref: string; commit: string }
  | { type: 'loop'; name: string; state: LoopStatus; iteration: number; reasons: string[] };
