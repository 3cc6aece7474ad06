import { errorMessage } from '../../../shared/domain/errors';
import { assign, fromPromise, setup } from 'xstate';
import type { MemoryHitInfo, RunPhase, TaskEvent } from '../../../shared/domain/events';

/**
 * The phases of one run of a task (the StateManager design): settings and instructions files,
 * memory search, the runner (this process: a worker, when there is one, is leased by the turn
 * loop's query), the runner's tool events, then the gatekeeper and the memory write. It is the
 * task machine's child (`runPhases`, spawned as a run starts): the task's `initialize` waits until
 * this machine reaches `runnerRunning` (or fails), the task machine feeds it the run's events while
 * the turn loop runs (TOOL_EVENT, TOOL_RESULT, TOOL_EVENTS_DONE, USAGE: `phasesEventOf`), tells it
 * how the run ended (RUN_ENDED) or stops it (ABORT); it never starts or steers the turn loop.
 * `failed` is reachable from every phase and records the phase it failed in.
 */
export interface RunPhasesInput {
  taskId: string;
  /** The run's number in this task, from 1. */
  run: number;
  /** What the run answers (the memory search's query). */
  prompt?: string;
  /** The index of the run's first message (the gatekeeper's digest starts there). */
  fromMessage?: number;
}

/** What the initializing phase read: the instructions files used (their display names). */
export interface RunSetup {
  instructionFiles: string[];
}

/** What the memory search injected. */
export interface MemorySearchResult {
  hits: MemoryHitInfo[];
  tokens: number;
}

/** The runner the run got: a worker's pid, or this process's when there is no pool. */
export interface RunnerInfo {
  pid: number;
}

export interface GatekeeperVerdict {
  decision: 'saved' | 'rejected' | 'skipped';
  rule: string;
  reasons: string[];
  /** The lesson to persist (only when saved). */
  lesson?: { title: string; body: string; tags: string[] };
}

export interface RunMetrics {
  /** Milliseconds per phase (a phase entered several times adds up). */
  durations: Partial<Record<RunPhase, number>>;
  /** Tokens of the run's model calls (and of the lesson call). */
  tokens: number;
}

export interface RunPhasesContext extends RunPhasesInput {
  phase: RunPhase;
  enteredAt: number;
  /** The phase left last and the time spent in it (for the phase event). */
  previousPhase: RunPhase | null;
  previousMs: number;
  toolEventsCount: number;
  /** Tool calls of the current turn not answered yet. */
  pendingTools: number;
  /** The run's tool results' summaries, in order (the gatekeeper's digest). */
  toolSummaries: string[];
  memoryHits: MemoryHitInfo[];
  runnerPid: number | null;
  gatekeeperDecision: GatekeeperVerdict | null;
  /** The memory file written (memoryPersisting). */
  savedFile: string | null;
  metrics: RunMetrics;
  /** How the runner ended (RUN_ENDED). */
  outcome: 'completed' | 'failed' | 'aborted' | 'interrupted' | null;
  failure: { phase: RunPhase; message: string } | null;
}

export type RunPhasesEvent =
  | { type: 'START' }
  /** The turn loop made a tool call. */
  | { type: 'TOOL_EVENT' }
  /** A tool call was answered (`summary`: what it did); the last one of a turn goes back to runnerRunning. */
  | { type: 'TOOL_RESULT'; summary: string }
  /** The turn loop went back to the model: what tool calls were left unanswered are over. */
  | { type: 'TOOL_EVENTS_DONE' }
  | { type: 'USAGE'; tokens: number }
  /** The task's run ended (its `done`): completed goes on to the gatekeeper, anything else fails the run. */
  | { type: 'RUN_ENDED'; status: 'completed' | 'failed' | 'aborted' | 'interrupted'; message?: string }
  /** The owner stops the run's phases (the task was stopped). */
  | { type: 'ABORT'; message: string };

/** A failed actor: the run fails in the phase it is in, with the actor's message. */
const actorFailed = { target: 'failed', actions: { type: 'recordFailure' as const, params: ({ event }: { event: { error: unknown } }) => ({ message: errorMessage(event.error) }) } };

export const runPhasesMachine = setup({
  types: {
    context: {} as RunPhasesContext,
    input: {} as RunPhasesInput,
    events: {} as RunPhasesEvent,
  },
  actors: {
    /** Reads the settings and the instructions files (and records which were used). Provided by the runtime. */
    loadRunSetup: fromPromise<RunSetup, { taskId: string; run: number; prompt: string; fromMessage: number }>(async () => ({ instructionFiles: [] })),
    /** Searches the project's memory for the run's prompt (and records the hits). Provided by the runtime. */
    searchMemory: fromPromise<MemorySearchResult, { taskId: string; run: number }>(async () => ({ hits: [], tokens: 0 })),
    /** Acquires the runner: a worker once the pool exists; in process otherwise. Provided by the runtime. */
    acquireRunner: fromPromise<RunnerInfo, { taskId: string; run: number }>(async () => ({ pid: 0 })),
    /** Applies the gatekeeper's rules (with its one short lesson call). Provided by the runtime. */
    evaluateGatekeeper: fromPromise<GatekeeperVerdict, { taskId: string; run: number; toolSummaries: string[] }>(async () => ({
      decision: 'skipped',
      rule: 'memory-enabled',
      reasons: ['no gatekeeper wired'],
    })),
    /** Writes the kept lesson as a memory file (atomically); resolves with its file name. Provided by the runtime. */
    persistMemory: fromPromise<string, { taskId: string; run: number; lesson: NonNullable<GatekeeperVerdict['lesson']> }>(async () => {
      throw new Error('no memory store wired');
    }),
  },
  actions: {
    /** Publishes a task event (phase changes). Provided by the runtime. */
    publish: (_: unknown, _event: TaskEvent | null) => {},
    recordFailure: assign(({ context }, p: { message: string; outcome?: RunPhasesContext['outcome'] }) => ({
      failure: { phase: context.phase, message: p.message },
      ...(p.outcome ? { outcome: p.outcome } : {}),
    })),
    countToolCall: assign(({ context }) => ({ toolEventsCount: context.toolEventsCount + 1, pendingTools: context.pendingTools + 1 })),
    recordToolResult: assign(({ context, event }) =>
      event.type === 'TOOL_RESULT' ? { toolSummaries: [...context.toolSummaries, event.summary], pendingTools: Math.max(0, context.pendingTools - 1) } : {},
    ),
    enter: assign(({ context }, p: { phase: RunPhase }) => {
      const now = Date.now();
      const spent = Math.max(0, now - context.enteredAt);
      const durations = { ...context.metrics.durations };
      if (context.phase !== 'idle') durations[context.phase] = (durations[context.phase] ?? 0) + spent;
      return { phase: p.phase, enteredAt: now, previousPhase: context.phase, previousMs: context.phase === 'idle' ? 0 : spent, metrics: { ...context.metrics, durations } };
    }),
  },
  guards: {
    lastPendingTool: ({ context }) => context.pendingTools <= 1,
    ranWell: ({ event }) => event.type === 'RUN_ENDED' && event.status === 'completed',
    keepsLesson: (_, p: { verdict: GatekeeperVerdict }) => p.verdict.decision === 'saved' && p.verdict.lesson !== undefined,
  },
}).createMachine({
  id: 'runPhases',
  context: ({ input }) => ({
    ...input,
    phase: 'idle',
    enteredAt: Date.now(),
    previousPhase: null,
    previousMs: 0,
    toolEventsCount: 0,
    pendingTools: 0,
    toolSummaries: [],
    memoryHits: [],
    runnerPid: null,
    gatekeeperDecision: null,
    savedFile: null,
    metrics: { durations: {}, tokens: 0 },
    outcome: null,
    failure: null,
  }),
  initial: 'idle',
  on: {
    USAGE: { actions: assign({ metrics: ({ context, event }) => ({ ...context.metrics, tokens: context.metrics.tokens + event.tokens }) }) },
    ABORT: { target: '.failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: event.message }) } },
  },
  states: {
    idle: {
      on: { START: 'initializing' },
    },
    initializing: {
      entry: phaseEntry('initializing'),
      invoke: {
        src: 'loadRunSetup',
        input: ({ context }) => ({ taskId: context.taskId, run: context.run, prompt: context.prompt ?? '', fromMessage: context.fromMessage ?? 0 }),
        onDone: 'memorySearch',
        onError: actorFailed,
      },
      on: { RUN_ENDED: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: 'the run ended before it started', outcome: event.status }) } } },
    },
    memorySearch: {
      entry: phaseEntry('memorySearch'),
      invoke: {
        src: 'searchMemory',
        input: ({ context }) => ({ taskId: context.taskId, run: context.run }),
        onDone: { target: 'runnerStarting', actions: assign({ memoryHits: ({ event }) => event.output.hits }) },
        onError: actorFailed,
      },
      on: { RUN_ENDED: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: 'the run ended before it started', outcome: event.status }) } } },
    },
    runnerStarting: {
      entry: phaseEntry('runnerStarting'),
      invoke: {
        src: 'acquireRunner',
        input: ({ context }) => ({ taskId: context.taskId, run: context.run }),
        onDone: { target: 'runnerRunning', actions: assign({ runnerPid: ({ event }) => event.output.pid }) },
        onError: actorFailed,
      },
      on: { RUN_ENDED: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: 'the run ended before its runner started', outcome: event.status }) } } },
    },
    runnerRunning: {
      entry: phaseEntry('runnerRunning'),
      on: {
        TOOL_EVENT: { target: 'processingToolEvents', actions: 'countToolCall' },
        TOOL_RESULT: { actions: 'recordToolResult' },
        RUN_ENDED: [
          { guard: 'ranWell', target: 'gatekeeperEvaluating', actions: assign({ outcome: 'completed' }) },
          { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: event.message ?? `the run ended ${event.status}`, outcome: event.status }) } },
        ],
      },
    },
    processingToolEvents: {
      entry: phaseEntry('processingToolEvents'),
      on: {
        TOOL_EVENT: { actions: 'countToolCall' },
        TOOL_RESULT: [{ guard: 'lastPendingTool', target: 'runnerRunning', actions: 'recordToolResult' }, { actions: 'recordToolResult' }],
        TOOL_EVENTS_DONE: { target: 'runnerRunning', actions: assign({ pendingTools: 0 }) },
        RUN_ENDED: [
          { guard: 'ranWell', target: 'gatekeeperEvaluating', actions: assign({ outcome: 'completed' }) },
          { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: event.message ?? `the run ended ${event.status}`, outcome: event.status }) } },
        ],
      },
    },
    gatekeeperEvaluating: {
      entry: phaseEntry('gatekeeperEvaluating'),
      invoke: {
        src: 'evaluateGatekeeper',
        input: ({ context }) => ({ taskId: context.taskId, run: context.run, toolSummaries: context.toolSummaries }),
        onDone: [
          { guard: { type: 'keepsLesson', params: ({ event }) => ({ verdict: event.output }) }, target: 'memoryPersisting', actions: assign({ gatekeeperDecision: ({ event }) => event.output }) },
          { target: 'completed', actions: assign({ gatekeeperDecision: ({ event }) => event.output }) },
        ],
        onError: actorFailed,
      },
    },
    memoryPersisting: {
      entry: phaseEntry('memoryPersisting'),
      invoke: {
        src: 'persistMemory',
        input: ({ context }) => ({ taskId: context.taskId, run: context.run, lesson: context.gatekeeperDecision!.lesson! }),
        onDone: { target: 'completed', actions: assign({ savedFile: ({ event }) => event.output }) },
        onError: actorFailed,
      },
    },
    completed: { type: 'final', entry: phaseEntry('completed') },
    failed: { type: 'final', entry: phaseEntry('failed') },
  },
});

/**
 * What a task event tells the run's phases (the task machine feeds them its turn loop's events):
 * a tool call, its answer, the loop going back to the model, a model call's tokens; null for the rest.
 */
export function phasesEventOf(e: TaskEvent): RunPhasesEvent | null {
  switch (e.type) {
    case 'tool_call':
      return { type: 'TOOL_EVENT' };
    case 'tool_result':
      return { type: 'TOOL_RESULT', summary: e.summary };
    case 'turn':
      return e.state === 'checkingContext' ? { type: 'TOOL_EVENTS_DONE' } : null;
    case 'usage':
      return { type: 'USAGE', tokens: e.inputTokens + e.outputTokens };
    default:
      return null;
  }
}

/** Entering a phase: account the time of the one left, then publish the change. */
function phaseEntry(phase: RunPhase) {
  return [{ type: 'enter' as const, params: { phase } }, { type: 'publish' as const, params: ({ context }: { context: RunPhasesContext }) => phaseEvent(context) }];
}

/** The `phase` task event for the phase just entered. */
export function phaseEvent(context: RunPhasesContext): TaskEvent {
  return {
    type: 'phase',
    taskId: context.taskId,
    run: context.run,
    phase: context.phase,
    previous: context.previousPhase,
    ms: context.previousMs,
    ...(context.phase === 'failed' && context.failure ? { failure: `${context.failure.phase}: ${context.failure.message}` } : {}),
  };
}
