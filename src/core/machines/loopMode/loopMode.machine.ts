import { assign, fromPromise, setup } from 'xstate';
import type { Judgement, Verdict } from '../../loop/judge';

/**
 * The catalog's loop-mode machine (docs/loop.md). It sits above tasks and never reaches into a
 * turn: an iteration is an ordinary task with a fresh conversation (the `runIteration` actor
 * starts it and resolves when it settles), and the judge decides from what the iteration left
 * behind (`recordIteration`: reads the progress file, judges, saves state.json, appends
 * guardrails, takes the checkpoint).
 *
 *   none → active → (complete | stopped | stalled | continuing) ; continuing → active ;
 *   stalled → active (RESUME: the person stepped in) ; active, continuing, stalled → cancelled
 *
 * `active.iterating` runs the task; `active.judging` records it. Cancelling stops the running
 * iteration's actor, which cancels its task. complete, stopped (the iteration limit reached before
 * the goal: not a success) and cancelled are final; stalled waits.
 */
export interface IterationEnd {
  taskId: string;
  status: 'completed' | 'failed' | 'aborted' | 'interrupted';
  stopReason: string | null;
  error?: { code: string; message: string };
  finalMessage: string;
  /** Error signatures seen during the iteration (guardrails.ts). */
  errors: string[];
  costUsd: number;
}

export interface LoopModeInput {
  name: string;
  /** Iterations already finished (a loop continued after a reload starts from its saved count). */
  iteration: number;
}

interface LoopModeContext extends LoopModeInput {
  verdict: Verdict | null;
  reasons: string[];
  lastEnd: IterationEnd | null;
}

export type LoopModeEvent = { type: 'START' } | { type: 'RESTORE_STALLED'; reasons: string[] } | { type: 'RESUME' } | { type: 'CANCEL' };

export type LoopModeNotice =
  | { kind: 'iterationStarted'; iteration: number }
  | { kind: 'judged'; iteration: number; verdict: Verdict; reasons: string[] }
  | { kind: 'cancelled'; iteration: number };

const judgedActions = [
  { type: 'takeJudgement', params: ({ event }: { event: { output: Judgement } }) => ({ judgement: event.output }) },
  { type: 'notify', params: ({ context }: { context: LoopModeContext }): LoopModeNotice => ({ kind: 'judged', iteration: context.iteration, verdict: context.verdict!, reasons: context.reasons }) },
] as const;

export const loopModeMachine = setup({
  types: {
    context: {} as LoopModeContext,
    input: {} as LoopModeInput,
    events: {} as LoopModeEvent,
  },
  actors: {
    /** Starts iteration `n` as a fresh task and resolves when it settles. Provided by the loop runner. */
    runIteration: fromPromise<IterationEnd, { name: string; n: number }>(async ({ input }) => ({
      taskId: `unwired-${input.n}`,
      status: 'failed',
      stopReason: null,
      error: { code: 'internal', message: 'no iteration runner wired' },
      finalMessage: '',
      errors: [],
      costUsd: 0,
    })),
    /** Judges iteration `n` and records it (state.json, guardrails, checkpoint). Provided by the loop runner. */
    recordIteration: fromPromise<Judgement, { name: string; n: number; end: IterationEnd }>(async () => ({ verdict: 'stalled', reasons: ['no judge wired'] })),
    /** Saves that the next iteration is about to start. Provided by the loop runner. */
    prepareNext: fromPromise<void, { name: string; n: number }>(async () => undefined),
  },
  actions: {
    notify: (_: unknown, _notice: LoopModeNotice) => {},
    takeJudgement: assign(({ context }, p: { judgement: Judgement }) => ({ iteration: context.iteration + 1, verdict: p.judgement.verdict, reasons: p.judgement.reasons })),
  },
  guards: {
    judged: (_, p: { judgement: Judgement; verdict: Verdict }) => p.judgement.verdict === p.verdict,
  },
}).createMachine({
  id: 'loopMode',
  context: ({ input }) => ({ ...input, verdict: null, reasons: [], lastEnd: null }),
  initial: 'none',
  states: {
    none: {
      on: {
        START: 'active',
        RESTORE_STALLED: { target: 'stalled', actions: assign({ verdict: 'stalled', reasons: ({ event }) => event.reasons }) },
      },
    },
    active: {
      initial: 'iterating',
      on: { CANCEL: 'cancelled' },
      states: {
        iterating: {
          entry: { type: 'notify', params: ({ context }) => ({ kind: 'iterationStarted', iteration: context.iteration + 1 }) },
          invoke: {
            src: 'runIteration',
            input: ({ context }) => ({ name: context.name, n: context.iteration + 1 }),
            onDone: { target: 'judging', actions: assign({ lastEnd: ({ event }) => event.output }) },
            onError: {
              target: 'judging',
              actions: assign({
                lastEnd: ({ event }) => ({
                  taskId: '',
                  status: 'failed' as const,
                  stopReason: null,
                  error: { code: 'internal', message: `the iteration could not run: ${event.error instanceof Error ? event.error.message : String(event.error)}` },
                  finalMessage: '',
                  errors: [],
                  costUsd: 0,
                }),
              }),
            },
          },
        },
        judging: {
          invoke: {
            src: 'recordIteration',
            input: ({ context }) => ({ name: context.name, n: context.iteration + 1, end: context.lastEnd! }),
            onDone: [
              { guard: { type: 'judged', params: ({ event }) => ({ judgement: event.output, verdict: 'complete' }) }, target: '#loopMode.complete', actions: judgedActions },
              { guard: { type: 'judged', params: ({ event }) => ({ judgement: event.output, verdict: 'stopped' }) }, target: '#loopMode.stopped', actions: judgedActions },
              { guard: { type: 'judged', params: ({ event }) => ({ judgement: event.output, verdict: 'stalled' }) }, target: '#loopMode.stalled', actions: judgedActions },
              { target: '#loopMode.continuing', actions: judgedActions },
            ],
            // Recording failed (the disk, the state file): the person has to look.
            onError: {
              target: '#loopMode.stalled',
              actions: assign({
                iteration: ({ context }) => context.iteration + 1,
                verdict: 'stalled',
                reasons: ({ event }) => [`the iteration could not be recorded: ${event.error instanceof Error ? event.error.message : String(event.error)}`],
              }),
            },
          },
        },
      },
    },
    continuing: {
      on: { CANCEL: 'cancelled' },
      invoke: {
        src: 'prepareNext',
        input: ({ context }) => ({ name: context.name, n: context.iteration + 1 }),
        onDone: 'active',
        onError: { target: 'stalled', actions: assign({ verdict: 'stalled', reasons: ({ event }) => [`the next iteration could not be prepared: ${String(event.error)}`] }) },
      },
    },
    stalled: {
      on: {
        RESUME: { target: 'active', actions: assign({ verdict: null, reasons: [] }) },
        CANCEL: 'cancelled',
      },
    },
    complete: { type: 'final' },
    stopped: { type: 'final' },
    cancelled: { type: 'final', entry: { type: 'notify', params: ({ context }) => ({ kind: 'cancelled', iteration: context.iteration }) } },
  },
});

export type LoopModeMachine = typeof loopModeMachine;
