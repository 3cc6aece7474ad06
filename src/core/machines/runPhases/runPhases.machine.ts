import { errorMessage } from '../../../shared/domain/errors';
import { assign, fromPromise, setup } from 'xstate';
import type { MemoryHitInfo, RunPhase, TaskEvent } from '../../../shared/domain/events';
import type { ProjectMemory } from '../../memory/projectMemory';
import type { MemorySettings } from '../../memory/settings';
import type { ModelProvider } from '../../providers/types';

/**
 * The phases of one run of a task (the StateManager design): settings and instructions files,
 * memory search, the runner (this process; on workers, the worker the run's query leases once the
 * turn loop starts: RUNNER gives its pid), the runner's tool events, then the gatekeeper and the
 * memory write. It is the task machine's child (`runPhases`, spawned as a run starts) and holds
 * what the run prepared (`prepared`: its provider, instructions and memories): the task's
 * `initialize` waits until this machine reaches `runnerRunning` (or fails) and reads them here.
 * Only the task machine sends it events: the turn loop's tool calls, results and tokens as the
 * turn loop tells the task machine of them (TOOL_EVENT, TOOL_RESULT, TOOL_EVENTS_DONE, USAGE:
 * `phasesEventOf`), how the run ended (RUN_ENDED), or ABORT; it never starts or steers the turn
 * loop. `failed` is reachable from every phase and records the phase it failed in.
 */
export interface RunPhasesInput {
  taskId: string;
  /** The run's number in this task, from 1. */
  run: number;
  /** What the run answers (the memory search's query). */
  prompt?: string;
  /** The index of the run's first message (the gatekeeper's digest starts there). */
  fromMessage?: number;
  /** Where the run's turn loop runs: in this process (default), or on a worker its query leases. */
  runner?: 'local' | 'worker';
}

/**
 * What a run's setup made for the rest of its phases and its turn loop: handles, not data (a
 * run's phases are never persisted nor restored: a resumed task starts a new run).
 */
export interface RunResources {
  provider: ModelProvider;
  /** The memory settings read as the run started. */
  settings: MemorySettings;
  /** The workspace's memory when it is on for this run. */
  memory: ProjectMemory | null;
}

/** What the initializing phase read: the instructions files used (their display names). */
export interface RunSetup {
  instructionFiles: string[];
  /** The instructions files' and skills' text for the system prompt ('' when none). */
  instructions?: string;
  resources?: RunResources;
}

/** What the memory search injected. */
export interface MemorySearchResult {
  hits: MemoryHitInfo[];
  tokens: number;
  /** The memories' text for the system prompt ('' when none). */
  text?: string;
}

/** The runner the run got: this process's pid; on workers null until the run's query leases one (RUNNER). */
export interface RunnerInfo {
  pid: number | null;
}

/** What the gatekeeper judges: the run's tool summaries and its conversation from `fromMessage`, with what the run prepared. */
export interface GatekeeperInput {
  taskId: string;
  run: number;
  toolSummaries: string[];
  fromMessage: number;
  resources: RunResources | null;
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
  /** What the run prepared (from `initializing` and `memorySearch`); its turn loop gets the provider and the system parts. */
  prepared: { resources: RunResources | null; instructions: string; memoryText: string };
  /** The pid of the process running the run's turn loop: this one, or the worker its query leased. */
  runnerPid: number | null;
  gatekeeperDecision: GatekeeperVerdict | null;
  /** The memory file written (memoryPersisting). */
  savedFile: string | null;
  metrics: RunMetrics;
  /** How the runner ended (RUN_ENDED). */
  outcome: 'completed' | 'failed' | 'aborted' | 'interrupted' | null;
  failure: { phase: RunPhase; message: string } | null;
  /** What an actor failed the run with (e.g. the provider's KeelError in `initializing`: the task's error). */
  failureCause: unknown;
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
  /** The run's runner is known: on workers, the worker its query leased (null: the pool gave no pid). */
  | { type: 'RUNNER'; pid: number | null }
  /** The task's run ended (its `done`): completed goes on to the gatekeeper, anything else fails the run. */
  | { type: 'RUN_ENDED'; status: 'completed' | 'failed' | 'aborted' | 'interrupted'; message?: string }
  /** The owner stops the run's phases (the task was stopped). */
  | { type: 'ABORT'; message: string };

/** A failed actor: the run fails in the phase it is in, with the actor's message. */
const actorFailed = {
  target: 'failed',
  actions: { type: 'recordFailure' as const, params: ({ event }: { event: { error: unknown } }) => ({ message: errorMessage(event.error), error: event.error }) },
};

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
    searchMemory: fromPromise<MemorySearchResult, { taskId: string; run: number; prompt: string; resources: RunResources | null }>(async () => ({ hits: [], tokens: 0 })),
    /** Acquires the runner: this process; on workers, none yet (the run's query leases it: RUNNER). Provided by the runtime. */
    acquireRunner: fromPromise<RunnerInfo, { taskId: string; run: number; runner: 'local' | 'worker' }>(async () => ({ pid: null })),
    /** Applies the gatekeeper's rules (with its one short lesson call). Provided by the runtime. */
    evaluateGatekeeper: fromPromise<GatekeeperVerdict, GatekeeperInput>(async () => ({
      decision: 'skipped',
      rule: 'memory-enabled',
      reasons: ['no gatekeeper wired'],
    })),
    /** Writes the kept lesson as a memory file (atomically); resolves with its file name. Provided by the runtime. */
    persistMemory: fromPromise<string, { taskId: string; run: number; lesson: NonNullable<GatekeeperVerdict['lesson']>; memory: ProjectMemory | null }>(async () => {
      throw new Error('no memory store wired');
    }),
  },
  actions: {
    /** Publishes a task event (phase changes). Provided by the runtime. */
    publish: (_: unknown, _event: TaskEvent | null) => {},
    recordFailure: assign(({ context }, p: { message: string; outcome?: RunPhasesContext['outcome']; error?: unknown }) => ({
      failure: { phase: context.phase, message: p.message },
      ...(p.outcome ? { outcome: p.outcome } : {}),
      ...(p.error !== undefined ? { failureCause: p.error } : {}),
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
    prepared: { resources: null, instructions: '', memoryText: '' },
    runnerPid: null,
    gatekeeperDecision: null,
    savedFile: null,
    metrics: { durations: {}, tokens: 0 },
    outcome: null,
    failure: null,
    failureCause: null,
  }),
  initial: 'idle',
  on: {
    USAGE: { actions: assign({ metrics: ({ context, event }) => ({ ...context.metrics, tokens: context.metrics.tokens + event.tokens }) }) },
    RUNNER: { actions: assign({ runnerPid: ({ event }) => event.pid }) },
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
        onDone: {
          target: 'memorySearch',
          actions: assign({ prepared: ({ context, event }) => ({ ...context.prepared, resources: event.output.resources ?? null, instructions: event.output.instructions ?? '' }) }),
        },
        onError: actorFailed,
      },
      on: { RUN_ENDED: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: 'the run ended before it started', outcome: event.status }) } } },
    },
    memorySearch: {
      entry: phaseEntry('memorySearch'),
      invoke: {
        src: 'searchMemory',
        input: ({ context }) => ({ taskId: context.taskId, run: context.run, prompt: context.prompt ?? '', resources: context.prepared.resources }),
        onDone: {
          target: 'runnerStarting',
          actions: assign({ memoryHits: ({ event }) => event.output.hits, prepared: ({ context, event }) => ({ ...context.prepared, memoryText: event.output.text ?? '' }) }),
        },
        onError: actorFailed,
      },
      on: { RUN_ENDED: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ message: 'the run ended before it started', outcome: event.status }) } } },
    },
    runnerStarting: {
      entry: phaseEntry('runnerStarting'),
      invoke: {
        src: 'acquireRunner',
        input: ({ context }) => ({ taskId: context.taskId, run: context.run, runner: context.runner ?? 'local' }),
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
        input: ({ context }) => ({ taskId: context.taskId, run: context.run, toolSummaries: context.toolSummaries, fromMessage: context.fromMessage ?? 0, resources: context.prepared.resources }),
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
        input: ({ context }) => ({ taskId: context.taskId, run: context.run, lesson: context.gatekeeperDecision!.lesson!, memory: context.prepared.resources?.memory ?? null }),
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
