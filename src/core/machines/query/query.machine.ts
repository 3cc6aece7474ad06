import { assign, fromCallback, fromPromise, sendParent, sendTo, setup, spawnChild, type EventObject } from 'xstate';
import type { KeelError } from '../../../shared/domain/errors';
import type { TaskEvent } from '../../../shared/domain/events';
import { ZERO_USAGE, type ToolResultBlock } from '../../../shared/domain/messages';
import type { PermissionMode } from '../../../shared/domain/permissionModes';
import type { TurnInput, TurnOutput } from '../turn/types';
import { toldToOwner } from '../turn/turnHelpers';

/** The turn's output as a worker reports it: without the conversation, with its length. */
export type TurnResult = Omit<TurnOutput, 'messages'> & { messageCount: number };

/**
 * One run of a task's agent loop on a worker, as the host (the owner of the task) sees it:
 * pending (waiting for a worker, for as long as it takes: a queued task is never failed for
 * waiting; CANCEL ends the wait) → processing (the query was sent) → streaming (the first event
 * came back) → complete | error | cancelled; pending → rejected when no worker can be had at all
 * (workers keep dying before they are ready, the pool is shutting down). It stands in for the turn machine in the task machine (same
 * input and output, same CANCEL / SET_MODE / SUBTASK_RESULT, and it relays the worker's Task calls
 * to the task as SUBTASK_STARTED and the events the run's phases count as RUN_EVENT, as the turn
 * machine tells them, plus its worker's pid as RUNNER_LEASED), so the task machine drives a remote
 * turn exactly as a local one.
 *
 * A query is sent to a worker at most once. If the worker dies after that, the query ends in
 * `error` with `worker_lost` (the task machine then marks the task interrupted): it is never run
 * again by itself. A cancel is forwarded to the worker, which must answer (its output says
 * cancelled); a worker that does not is killed by its own machine, and the query ends cancelled.
 * The I/O is in two actors provided by the pool: `acquire` (a worker lease) and `execute` (the
 * query on that worker, spawned once the lease is granted).
 */
export type QueryInput = TurnInput;

/** A worker granted to one query; the pool provides it and `execute` uses it. */
export interface WorkerLease {
  workerId: string;
  pid: number | null;
}

interface QueryContext extends QueryInput {
  queryId: string;
  lease: WorkerLease | null;
  warm: boolean;
  cancelRequested: boolean;
  output: TurnOutput | null;
  error: KeelError | null;
}

export type QueryEvent =
  | { type: 'CANCEL' }
  | { type: 'SET_MODE'; mode: PermissionMode }
  | { type: 'SUBTASK_RESULT'; toolCallId: string; result: ToolResultBlock; summary: string }
  /** From `execute`: the worker took the query (`session`). */
  | { type: 'WORKER_STARTED'; sessionId: string; warm: boolean }
  /** From `execute`: one event the worker's turn published. */
  | { type: 'WORKER_EVENT'; event: TaskEvent }
  /** From `execute`: a Task tool call the host must start a child task for. */
  | { type: 'SUBTASK_START'; toolCallId: string; description: string; prompt: string }
  /**
   * From `execute`: the turn ended. Its conversation is not repeated: it is what the query folded
   * from the worker's `message` and `compacted` events, which must hold `messageCount` messages.
   */
  | { type: 'QUERY_COMPLETE'; output: TurnResult }
  | { type: 'QUERY_FAILED'; error: KeelError }
  /** From `execute`: the worker died or its connection broke while it had the query. */
  | { type: 'WORKER_LOST'; reason: string };

/** What a person reads when the worker of their task died: which task, why, and that it can be resumed (the host adds how). */
export function workerLostMessage(taskId: string, reason: string): string {
  return `The worker running task ${taskId} stopped (${reason}). The task was interrupted; resume it to continue.`;
}

/** The name a query goes by: one per run and history length of a task, like a continuation key. */
export function queryIdOf(input: QueryInput): string {
  return `${input.taskId}:r${input.run}:h${input.messages.length}`;
}

const failedOutput = (context: QueryContext, error: KeelError): TurnOutput => ({
  status: 'error',
  stopReason: null,
  messages: context.messages,
  error,
  usage: ZERO_USAGE,
  costUsd: 0,
  compactionFailures: context.compactionFailures,
});

export const queryMachine = setup({
  types: {
    context: {} as QueryContext,
    input: {} as QueryInput,
    output: {} as TurnOutput,
    events: {} as QueryEvent,
  },
  actors: {
    /**
     * Resolves with a worker lease for this query (the worker is this query's until it ends; no lock
     * is taken here: in the worker, the call machine takes the task's lock around each provider
     * request); rejects with the reason none can be had.
     */
    acquire: fromPromise<WorkerLease, { queryId: string; taskId: string }>(async () => {
      throw new Error('no worker pool wired');
    }),
    /** Runs the query on the leased worker; sends WORKER_* and QUERY_* back; takes CANCEL, SET_MODE, SUBTASK_RESULT. */
    execute: fromCallback<EventObject, { queryId: string; lease: WorkerLease; input: QueryInput }>(({ sendBack }) => {
      sendBack({ type: 'WORKER_LOST', reason: 'no worker wired' });
    }),
  },
  actions: {
    publish: (_: unknown, _event: TaskEvent | null) => {},
    /**
     * Tells the query's owner (its parent machine: the task machine) what it keeps of the run, as
     * the turn machine tells it in the host's process (its `tellOwner`): the worker's events the
     * run's phases count (turnHelpers.ts `toldToOwner`) right after each is published, and the
     * leased worker's pid (RUNNER_LEASED). Inline, so the log reads the same wherever the turn ran.
     */
    tellOwner: ({ self }, event: EventObject | null) => {
      if (event) self._parent?.send(event);
    },
  },
  guards: {
    outputCancelled: (_, p: { output: TurnResult }) => p.output.error?.code === 'cancelled',
    /** The worker's conversation has a length other than the one the host folded from its events. */
    conversationDiffers: ({ context }, p: { output: TurnResult }) => p.output.messageCount !== context.messages.length,
    cancelRequested: ({ context }) => context.cancelRequested,
  },
}).createMachine({
  id: 'query',
  context: ({ input }) => ({ ...input, queryId: queryIdOf(input), lease: null, warm: false, cancelRequested: false, output: null, error: null }),
  initial: 'pending',
  on: {
    CANCEL: { actions: [assign({ cancelRequested: true }), sendTo('execute', { type: 'CANCEL' })] },
    SET_MODE: { actions: [assign({ mode: ({ event }) => event.mode }), sendTo('execute', ({ event }) => event)] },
    SUBTASK_RESULT: { actions: sendTo('execute', ({ event }) => event) },
    SUBTASK_START: { actions: sendParent(({ event }) => ({ type: 'SUBTASK_STARTED', toolCallId: event.toolCallId, description: event.description, prompt: event.prompt })) },
    WORKER_STARTED: { actions: assign({ warm: ({ event }) => event.warm }) },
    QUERY_COMPLETE: [
      {
        guard: { type: 'conversationDiffers', params: ({ event }) => ({ output: event.output }) },
        target: '.error',
        actions: assign({
          error: ({ context, event }) => ({
            code: 'internal' as const,
            message: `The worker ended the turn with ${event.output.messageCount} messages, but sent ${context.messages.length}; its answer was not taken.`,
            retryable: true,
          }),
        }),
      },
      {
        guard: { type: 'outputCancelled', params: ({ event }) => ({ output: event.output }) },
        target: '.cancelled',
        actions: assign({ output: ({ context, event }) => outputOf(context, event.output) }),
      },
      { target: '.complete', actions: assign({ output: ({ context, event }) => outputOf(context, event.output) }) },
    ],
    QUERY_FAILED: { target: '.error', actions: assign({ error: ({ event }) => event.error }) },
    WORKER_LOST: [
      { guard: 'cancelRequested', target: '.cancelled' },
      {
        target: '.error',
        actions: assign({
          error: ({ context, event }) => ({
            code: 'worker_lost' as const,
            message: workerLostMessage(context.taskId, event.reason),
            retryable: false,
          }),
        }),
      },
    ],
  },
  states: {
    pending: {
      invoke: {
        src: 'acquire',
        input: ({ context }) => ({ queryId: context.queryId, taskId: context.taskId }),
        onDone: {
          target: 'processing',
          actions: [
            assign({ lease: ({ event }) => event.output }),
            // The run's runner is this worker: its pid is the run's phases' (not the host's).
            { type: 'tellOwner', params: ({ event }) => ({ type: 'RUNNER_LEASED', pid: event.output.pid }) },
            spawnChild('execute', { id: 'execute', input: ({ context }) => ({ queryId: context.queryId, lease: context.lease!, input: turnInputOf(context) }) }),
          ],
        },
        onError: {
          target: 'rejected',
          actions: assign({
            error: ({ event }) => ({
              code: 'worker_unavailable' as const,
              message: `No worker could run this task: ${event.error instanceof Error ? event.error.message : String(event.error)}`,
              retryable: true,
            }),
          }),
        },
      },
      on: { CANCEL: 'cancelled' },
    },
    processing: {
      on: {
        WORKER_EVENT: {
          target: 'streaming',
          actions: [
            { type: 'publish', params: ({ event }) => event.event },
            // The run's phases count some of them: the owner hears of those right after each is published.
            { type: 'tellOwner', params: ({ event }) => runEventOf(event.event) },
            assign(({ context, event }) => grow(context, event.event)),
          ],
        },
      },
    },
    streaming: {
      on: {
        WORKER_EVENT: {
          actions: [
            { type: 'publish', params: ({ event }) => event.event },
            // The run's phases count some of them: the owner hears of those right after each is published.
            { type: 'tellOwner', params: ({ event }) => runEventOf(event.event) },
            assign(({ context, event }) => grow(context, event.event)),
          ],
        },
      },
    },
    complete: { type: 'final' },
    error: { type: 'final' },
    cancelled: { type: 'final' },
    rejected: { type: 'final' },
  },
  output: ({ context }) => {
    if (context.output) return context.output;
    if (context.error) return failedOutput(context, context.error);
    return failedOutput(context, { code: 'cancelled', message: 'Cancelled by the user.', retryable: false });
  },
});

/** The turn's output: what the worker reported, with the conversation the query folded from its events. */
function outputOf(context: QueryContext, result: TurnResult): TurnOutput {
  const { messageCount: _count, ...rest } = result;
  return { ...rest, messages: context.messages };
}

function turnInputOf(c: QueryContext): QueryInput {
  return { taskId: c.taskId, model: c.model, mode: c.mode, messages: c.messages, limits: c.limits, compactionFailures: c.compactionFailures, run: c.run, priorCostUsd: c.priorCostUsd };
}

/** What the owner is told of one of the worker's events (the task machine's RUN_EVENT), or nothing. */
function runEventOf(event: TaskEvent): { type: 'RUN_EVENT'; event: TaskEvent } | null {
  return toldToOwner(event) ? { type: 'RUN_EVENT', event } : null;
}

/** The conversation as the host has seen it grow (what a lost worker's query leaves behind). */
function grow(context: QueryContext, event: TaskEvent): Partial<QueryContext> {
  if (event.type === 'message') return { messages: [...context.messages, event.message] };
  if (event.type === 'compacted') return { messages: event.messages };
  return {};
}

