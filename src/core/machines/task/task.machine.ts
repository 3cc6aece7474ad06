import { and, assign, enqueueActions, fromCallback, fromPromise, sendTo, setup, spawnChild, stopChild, type AnyActorRef, type EventObject } from 'xstate';
import { summaryOf, type MessageAttachment } from '../../../shared/domain/attachments';
import type { KeelError } from '../../../shared/domain/errors';
import type { TaskEvent, TaskStatus } from '../../../shared/domain/events';
import { ZERO_USAGE, type ConversationMessage, type ImageBlock, type StopReason, type ToolResultBlock, type Usage } from '../../../shared/domain/messages';
import type { AttachedImageInfo } from '../../../shared/domain/events';
import type { PermissionMode } from '../../../shared/domain/permissionModes';
import { isTaskStateTag, type TaskStateTag } from '../../../shared/domain/stateTags';
import { tagsOfState } from '../stateTags';
import { userMessageOf, userText } from '../turn/conversation';
import { queryMachine } from '../query/query.machine';
import { turnMachine, type TurnLimits, type TurnOutput } from '../turn/turn.machine';
import { phasesEventOf, runPhasesMachine, type RunPhasesEvent, type RunPhasesInput } from '../runPhases/runPhases.machine';
import type { TurnInput } from '../turn/types';
import { combineCommands, type CommandRun } from '../../commands/commandRun';
import { addUsage } from '../turn/turnHelpers';
import { normalizeModelId } from '../../providers/modelChoice';

/** What a task starts from: a new task, or one rebuilt from its log. */
export interface TaskInput {
  taskId: string;
  title: string;
  model: string;
  mode: PermissionMode;
  limits: TurnLimits;
  messages?: ConversationMessage[];
  /** User messages already in a rebuilt conversation (keeps user message ids unique). */
  userMessages?: number;
  /** Tokens and cost of the runs before this actor (a task continued from its log). */
  usage?: Usage;
  costUsd?: number;
  /** Runs before this actor (a task continued from its log): the next run is numbered after them. */
  runs?: number;
  /**
   * Where the task's turn loops run: `local`, the turn machine in this process (default); `worker`,
   * the query machine, which runs the turn machine in a worker process (docs/workers.md).
   */
  runner?: 'local' | 'worker';
}

/** What the runtime is told when a run starts (the `initialize` actor's input). */
export interface RunStartInput {
  taskId: string;
  run: number;
  /** What the run answers (the memory search's query): the new message, else the last user text. */
  prompt: string;
  /**
   * The message the person just sent, for the UserPromptSubmit hook; null for a retry or a resume
   * (nothing new was submitted).
   */
  submitted: string | null;
  fromMessage: number;
}

/** A message of the person waiting for the run under way to end (the `queued` event shows it). */
export interface PendingMessage {
  id: string;
  /** What the model reads. */
  text: string;
  /** What the person typed, when it differs from `text` (a command expanded into it): what views show. */
  typed?: string;
  attachments?: MessageAttachment[];
  /** Images attached to it (checked: context/promptImages.ts). */
  images?: AttachedImage[];
  /** The custom command it is (docs/commands.md): the run answering it is narrowed by it. */
  command?: CommandRun;
}

export interface PendingSubtask {
  toolCallId: string;
  description: string;
  prompt: string;
}

interface TaskContext extends Required<TaskInput> {
  /** The resume note (with the follow-up's images, mentions, command and what was typed), until the rebuilt conversation takes it. */
  pendingResume: Omit<PendingMessage, 'id'> | null;
  error: KeelError | null;
  stopReason: StopReason | null;
  /** The subtasks of the running turn that have not answered yet, in the order they started. */
  subtasks: PendingSubtask[];
  ignoredSubtaskEvents: number;
  compactionFailures: number;
  /** Every run's usage and cost, added up as each turn loop ends (cancelled or failed runs too). */
  usage: Usage;
  costUsd: number;
  userMessages: number;
  /** Turn loops started so far; each run gets its own number. */
  runs: number;
  /** The message the person just sent, until its run starts (UserPromptSubmit hooks see it). */
  submitted: string | null;
  /** Messages sent while a run was under way, oldest first: the next run's, when this one ends. */
  queued: PendingMessage[];
  /**
   * The custom command the next (or last) run answers: set with the message(s) it answers, kept
   * by a retry; it becomes the run's (`runCommand`) when the run starts.
   */
  command: CommandRun | undefined;
  /**
   * The command the run under way answers, from its start to its `done`: its allowed-tools narrow
   * the run's permission decisions (the runtime's decider reads them here), its model is the run's.
   */
  runCommand: CommandRun | undefined;
  /** While a command's run uses its own model: the task's model, back once the run's `done` is published. */
  modelAfterRun: string | null;
  /** Messages ever queued (keeps their ids unique). */
  queuedCount: number;
  /** How the current run ended outside its turn loop: its worker died, or its record failed (the task is then let go: `release`). */
  ending: 'workerLost' | 'recordFailed' | null;
  /** The status of the run's `done` while its state is `finishing` (owed, not yet published). */
  owedDone: TaskStatus | null;
  /** The current run's `done` once published (what `settled()` answers); null while a run goes on. */
  lastDone: DoneEvent | null;
}

/** An image the person attached to a message: the block the model gets, and how views name it. */
export interface AttachedImage {
  block: ImageBlock;
  info: AttachedImageInfo;
}

/** A run's last event. */
export type DoneEvent = TaskEvent & { type: 'done' };

export type TaskMachineEvent =
  | { type: 'START'; text: string; typed?: string; attachments?: MessageAttachment[]; images?: AttachedImage[]; command?: CommandRun }
  /**
   * A message of the person: it starts the next run, or waits for the run under way to end
   * (queued). `typed`: what the person typed when `text` is not that (shown, never sent).
   */
  | { type: 'USER_MESSAGE'; text: string; typed?: string; attachments?: MessageAttachment[]; images?: AttachedImage[]; command?: CommandRun }
  /** The person cancelled queued message `id` before it was sent. */
  | { type: 'UNQUEUE'; id: string }
  | { type: 'CANCEL' }
  /** A stored task goes on from its conversation with no new message (its budget was raised after it paused). */
  | { type: 'CONTINUE' }
  | { type: 'RETRY' }
  | { type: 'ABANDON' }
  /** The permission mode from now on: the running turn's next decisions and every later run. */
  | { type: 'SET_MODE'; mode: PermissionMode }
  /** The model of every later run (`/model`, a command's `model`); a running turn keeps its own. */
  | { type: 'SET_MODEL'; model: string }
  | { type: 'MARK_INTERRUPTED' }
  /**
   * An interrupted task goes on: `note` is its next user message (what was cut off, then the
   * follow-up if any); the follow-up's images, mentions, command and `typed` go with it as with
   * any message.
   */
  | { type: 'RESUME'; note: string; typed?: string; attachments?: MessageAttachment[]; images?: AttachedImage[]; command?: CommandRun }
  | { type: 'SUBTASK_STARTED'; toolCallId: string; description: string; prompt: string }
  | { type: 'SUBTASK_DONE'; toolCallId: string; result: ToolResultBlock; summary: string }
  /**
   * A model call of the task outside its turn loops (the gatekeeper's lesson call, after a run):
   * its tokens and price are added to the task's, and a `usage` event tells views and the log.
   */
  | { type: 'CHARGE'; usage: Usage; costUsd: number }
  /** The owner stops the task where it is (the host is ending): an unsettled task becomes `interrupted`, resumable. */
  | { type: 'INTERRUPT' }
  /** The task's record could not be saved (`failure` says why): a run going on ends `failed`; after it ended, the error is told. */
  | { type: 'RECORD_FAILED'; failure: string }
  /** The owner lets the task go: a run whose phases are still finishing publishes its `done` now. */
  | { type: 'CLOSE' }
  /**
   * From the run's turn loop, its child (the turn machine's `tellOwner`, or the query machine
   * relaying a worker's): an event it just published that the run's phases count — a tool call,
   * its result, the loop back at the model, a model call's tokens. The machine feeds them on.
   */
  | { type: 'RUN_EVENT'; event: TaskEvent }
  /** From the run's query (tasks on workers): the worker it leased, whose pid is the run's runner's. */
  | { type: 'RUNNER_LEASED'; pid: number | null };

/** The id and systemId of the current run's phases, the task machine's child (the runtime's `initialize` and `finishRun` wait on it). */
export const RUN_PHASES_ID = 'runPhases';

type Publish = { type: 'publish'; params: TaskEvent | null };
type Release = { type: 'release'; params: undefined };
type FeedPhasesUsage = { type: 'feedPhasesUsage'; params: TaskEvent };

/** The task machine's types, actions, actors and guards (the machine itself is `taskMachine`). */
const taskSetup = setup({
  types: {
    context: {} as TaskContext,
    input: {} as TaskInput,
    events: {} as TaskMachineEvent,
    tags: {} as TaskStateTag,
  },
  actors: {
    /**
     * Prepares run `run`: checks that the task can run (provider configured, key present), runs
     * the run's phases up to the runner (instructions files, memory search) and the hooks of a
     * starting run: SessionStart, then UserPromptSubmit for `submitted`. `prompt` is what the run
     * answers, `fromMessage` the index of its first message. Rejects with code `blocked_by_hook`
     * when a hook blocks the prompt. Provided by the runtime.
     */
    initialize: fromPromise<void, RunStartInput>(async () => undefined),
    /** One run of the turn loop in this process. */
    turnLoop: turnMachine,
    /** One run of the turn loop on a worker (the same input, output and events). Provided by the runtime's pool. */
    workerTurn: queryMachine,
    /** Runs (or re-attaches to) the subtask of a Task tool call and sends SUBTASK_DONE. Provided by the runtime. */
    subtask: fromCallback<EventObject, { parentId: string; subtask: PendingSubtask }>(() => () => undefined),
    /** Rebuilds the conversation from the task's log. Provided by the runtime (store). */
    reconstruct: fromPromise<ConversationMessage[], { taskId: string }>(async () => []),
    /**
     * A settled run's last steps (`finishing`): tells the run's phases how it ended and resolves
     * once they are over (the gatekeeper, the memory write) and what the run recorded is saved.
     * Provided by the runtime (runtime/runPhases.ts, the task's recorder).
     */
    finishRun: fromPromise<void, { status: TaskStatus }>(async () => undefined),
    /** A run's phases (instructions, memory, runner, gatekeeper, memory write): spawned as `initializing` is entered. Provided with its real actors by the runtime. */
    runPhases: runPhasesMachine,
  },
  actions: {
    publish: (_: unknown, _event: TaskEvent | null) => {},
    /** The last run's phases, if any are left, end where they are (`failed`, "the task was stopped"): a new run's take their place. */
    retirePhases: ({ system }) => tell(phasesOf(system), { type: 'ABORT', message: 'the task was stopped' }),
    /** Ends the current run's phases where they are (`failed`, recorded): an interrupt, a lost worker, a failed record, a cancel while finishing. */
    stopPhases: ({ system }) => tell(phasesOf(system), { type: 'ABORT', message: 'the task was stopped' }),
    /** The run's turn loop ended (its state's `finishing`): a completed run's phases go on to the gatekeeper; any other's end. */
    endPhases: ({ context, system }) => {
      const status = context.owedDone;
      if (status !== null && status !== 'running') tell(phasesOf(system), { type: 'RUN_ENDED', status });
    },
    /** What the run's phases learn from the turn loop's events (RUN_EVENT): tool calls and results, the loop back at the model, tokens. */
    feedPhases: ({ event, system }) => {
      if (event.type !== 'RUN_EVENT') return;
      const fed = phasesEventOf(event.event);
      if (fed) tell(phasesOf(system), fed);
    },
    /** The run's query leased a worker: the phases' runner is that worker (its pid). */
    tellRunner: ({ event, system }) => {
      if (event.type === 'RUNNER_LEASED') tell(phasesOf(system), { type: 'RUNNER', pid: event.pid });
    },
    /** Lets the task go: its log closed, its lock released (a task whose worker died or whose record failed). Provided by the runtime. */
    release: (_: unknown, _p: undefined) => {},
    /**
     * A run starts (after the last run's `done`, which ended that run's command): it answers
     * `command` (none: undefined) — its narrowing, and its model for as long as the run lasts
     * (when the provider takes another model: `commandModelApplies`).
     */
    beginRunCommand: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, never, { type: 'commandModelApplies'; params: undefined }, never, never>(
      ({ context, enqueue, check }) => {
        const command = context.command;
        const model = context.modelAfterRun ?? context.model;
        const id = command?.model ? normalizeModelId(command.model) : null;
        const own = id !== null && id !== model && check({ type: 'commandModelApplies' });
        enqueue.assign({ runCommand: command, model: own ? id : model, modelAfterRun: own ? model : null });
      },
    ),
    /** Publishes the run's owed `done` (a settled run whose phases finished, or that is left before they did). */
    publishOwedDone: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, Publish, never, never, never>(({ context, enqueue }) => {
      if (context.owedDone === null) return;
      const done = doneEvent(context, context.owedDone);
      enqueue({ type: 'publish', params: done });
      enqueue.assign({ owedDone: null, lastDone: done, ...runCommandEnded(context) });
    }),
    /** How the run ended outside its turn loop: its `done` (a dead worker's `interrupted`, a failed record's `failed`), then the task is let go. */
    endOutsideLoop: enqueueActions<TaskContext, TaskMachineEvent, { status: TaskStatus }, TaskMachineEvent, never, Publish | Release, never, never, never>(({ context, enqueue }, p) => {
      if (context.ending === null) return;
      const done = doneEvent(context, p.status);
      enqueue({ type: 'publish', params: done });
      enqueue.assign({ lastDone: done, ...runCommandEnded(context) });
      enqueue({ type: 'release' });
    }),
    /**
     * A resume note waiting for the rebuilt conversation goes in before the next run, a user
     * message like any other: shown (user_message), logged (message), added to the conversation.
     */
    takePendingResume: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, Publish, never, never, never>(({ context, enqueue }) => {
      const p = context.pendingResume;
      if (p === null) return;
      const message = fullMessageOf(p);
      enqueue({ type: 'publish', params: userMessageEvent(context, p) });
      enqueue({ type: 'publish', params: { type: 'message', taskId: context.taskId, message } });
      enqueue.assign({ messages: [...context.messages, message], pendingResume: null, userMessages: context.userMessages + 1 });
    }),
    /** A user message: shown (user_message), logged for the conversation (message), and added to it. */
    acceptUserMessage: enqueueActions<TaskContext, TaskMachineEvent, Omit<PendingMessage, 'id'>, TaskMachineEvent, never, Publish, never, never, never>(({ context, enqueue }, p) => {
      const message = fullMessageOf(p);
      enqueue({ type: 'publish', params: userMessageEvent(context, p) });
      enqueue({ type: 'publish', params: { type: 'message', taskId: context.taskId, message } });
      enqueue.assign({ messages: [...context.messages, message], userMessages: context.userMessages + 1, submitted: p.text, command: p.command });
    }),
    /** A message while a run is under way waits for it to end: never refused, never a second request. */
    enqueueMessage: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, Publish, never, never, never>(({ context, event, enqueue }) => {
      if (event.type !== 'USER_MESSAGE') return;
      const message: PendingMessage = { id: `${context.taskId}-q${context.queuedCount + 1}`, ...messageOf(event) };
      const shown = {
        id: message.id,
        text: message.text,
        ...(message.typed !== undefined ? { typed: message.typed } : {}),
        ...(message.attachments ? { attachments: message.attachments.map(summaryOf) } : {}),
        ...(message.images ? { images: message.images.map((i) => i.info) } : {}),
      };
      enqueue({ type: 'publish', params: { type: 'queued', taskId: context.taskId, message: shown } });
      enqueue.assign({ queued: [...context.queued, message], queuedCount: context.queuedCount + 1 });
    }),
    /** The person cancelled one queued message; an id no longer queued (already sent) changes nothing. */
    withdrawQueued: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, Publish, never, never, never>(({ context, event, enqueue }) => {
      if (event.type !== 'UNQUEUE' || !context.queued.some((q) => q.id === event.id)) return;
      enqueue({ type: 'publish', params: { type: 'unqueued', taskId: context.taskId, ids: [event.id], outcome: 'withdrawn' } });
      enqueue.assign({ queued: context.queued.filter((q) => q.id !== event.id) });
    }),
    /** The run ended: every queued message, in order, becomes the next run's (one run answers them all). */
    sendQueued: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, Publish, never, never, never>(({ context, enqueue }) => {
      if (context.queued.length === 0) return;
      enqueue({ type: 'publish', params: { type: 'unqueued', taskId: context.taskId, ids: context.queued.map((q) => q.id), outcome: 'sent' } });
      let messages = context.messages;
      let count = context.userMessages;
      for (const q of context.queued) {
        const at = { ...context, userMessages: count };
        const message = fullMessageOf(q);
        enqueue({ type: 'publish', params: userMessageEvent(at, q) });
        enqueue({ type: 'publish', params: { type: 'message', taskId: context.taskId, message } });
        messages = [...messages, message];
        count += 1;
      }
      // One run answers them all: it may do only what each of their commands allows.
      const command = combineCommands(context.queued.flatMap((q) => (q.command ? [q.command] : [])));
      enqueue.assign({ messages, userMessages: count, submitted: context.queued.map((q) => q.text).join('\n\n'), queued: [], command });
    }),
    /** The run was cancelled or the task stopped: queued messages go back to the person, unsent. */
    returnQueued: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, Publish, never, never, never>(({ context, enqueue }) => {
      if (context.queued.length === 0) return;
      enqueue({ type: 'publish', params: { type: 'unqueued', taskId: context.taskId, ids: context.queued.map((q) => q.id), outcome: 'returned' } });
      enqueue.assign({ queued: [] });
    }),
    /** A hook blocked the prompt just sent: it leaves the conversation (and the log, through `compacted`). */
    dropBlockedPrompt: assign(({ context }) => (context.submitted === null ? {} : { messages: context.messages.slice(0, -1), submitted: null })),
    /**
     * A child answered: its result goes to the turn, its actor is let go. The result reaches the
     * turn once this step is over (delay 0), as it reaches a turn on a worker: a turn loop in this
     * process would otherwise publish its tool_result and move on (assembling, the next request)
     * inside this machine's step, while the RUN_EVENT it tells this machine (for the run's phases)
     * waits in this machine's mailbox, so the phase change would come after the turn's next events — a log
     * whose order depends on where the turn ran (and a replay, in process, that differs from it).
     */
    finishSubtask: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, never, never, never, never>(({ context, event, enqueue }) => {
      if (event.type !== 'SUBTASK_DONE') return;
      enqueue.sendTo('turnLoop', { type: 'SUBTASK_RESULT', toolCallId: event.toolCallId, result: event.result, summary: event.summary }, { delay: 0 });
      enqueue(stopChild(subtaskActorId(event.toolCallId)));
      enqueue.assign({ subtasks: context.subtasks.filter((s) => s.toolCallId !== event.toolCallId) });
    }),
    /** Stops (and so cancels) every child still running. */
    stopSubtasks: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, never, never, never, never>(({ context, enqueue }) => {
      for (const s of context.subtasks) enqueue(stopChild(subtaskActorId(s.toolCallId)));
      enqueue.assign({ subtasks: [] });
    }),
    /** A call's tokens the task machine itself published (CHARGE): the run's phases, if any still run, count them. */
    feedPhasesUsage: ({ system }, usage: TaskEvent) => {
      const fed = phasesEventOf(usage);
      if (fed) tell(phasesOf(system), fed);
    },
    /** A call outside the turn loops (CHARGE): the task's totals grow, and the usage event carries the new total. */
    charge: enqueueActions<TaskContext, TaskMachineEvent, undefined, TaskMachineEvent, never, Publish | FeedPhasesUsage, never, never, never>(({ context, event, enqueue }) => {
      if (event.type !== 'CHARGE') return;
      const total = context.costUsd + event.costUsd;
      const usage: TaskEvent = { type: 'usage', taskId: context.taskId, ...event.usage, costUsd: event.costUsd, totalCostUsd: total };
      enqueue({ type: 'publish', params: usage });
      enqueue.assign({ usage: addUsage(context.usage, event.usage), costUsd: total });
      // The run's phases count the call's tokens too (the gatekeeper's lesson call while finishing).
      enqueue({ type: 'feedPhasesUsage', params: usage });
    }),
    recordTurn: assign(({ context }, p: { output: TurnOutput }) => ({
      messages: p.output.messages,
      error: p.output.error,
      stopReason: p.output.stopReason,
      compactionFailures: p.output.compactionFailures,
      usage: addUsage(context.usage, p.output.usage),
      costUsd: context.costUsd + p.output.costUsd,
    })),
  },
  guards: {
    turnCancelled: (_, p: { output: TurnOutput }) => p.output.error?.code === 'cancelled',
    turnFailed: (_, p: { output: TurnOutput }) => p.output.status === 'error',
    promptBlocked: ({ event }) => 'error' in event && typeof event.error === 'object' && event.error !== null && (event.error as { code?: unknown }).code === 'blocked_by_hook',
    isAwaitedSubtask: ({ context, event }) => event.type === 'SUBTASK_DONE' && context.subtasks.some((s) => s.toolCallId === event.toolCallId),
    isLastSubtask: ({ context }) => context.subtasks.length === 1,
    hasQueued: ({ context }) => context.queued.length > 0,
    onWorker: ({ context }) => context.runner === 'worker',
    workerLost: (_, p: { output: TurnOutput }) => p.output.error?.code === 'worker_lost',
    /** Whether a command's model is used for its run (not with a provider that has one model, the demo). Provided by the runtime. */
    commandModelApplies: () => true,
    /** The turn stopped before a request its budget could not pay for (machines/turn/budget.ts). */
    turnOverBudget: (_, p: { output: TurnOutput }) => p.output.error?.code === 'budget_exceeded',
  },
});

/**
 * How a run's end settles (completed, awaitingUser, aborted): `finishing` while the run's phases go
 * on and what it recorded is being saved — its `done` waits (see `finishRun`) — then `settled`.
 */
/**
 * The task's record failed while a run was under way or finishing (RECORD_FAILED): what is left of
 * the run's phases stops, and the run ends failed saying why — the same in every such state.
 */
const recordFailedMidRun = taskSetup.createStateConfig({
  on: {
    RECORD_FAILED: {
      target: '#task.failed',
      actions: ['stopPhases', assign({ ending: 'recordFailed', owedDone: null }), { type: 'publish', params: ({ context, event }) => recordFailedEvent(context, event.failure, true) }],
    },
  },
});

const finishingThenSettled = taskSetup.createStateConfig({
  initial: 'finishing',
  states: {
    finishing: {
      entry: 'endPhases',
      invoke: { src: 'finishRun', input: ({ context }) => ({ status: context.owedDone ?? 'completed' }), onDone: { target: 'settled', actions: 'publishOwedDone' } },
      on: {
        CANCEL: { actions: 'stopPhases' },
        CLOSE: { target: 'settled', actions: 'publishOwedDone' },
        ...recordFailedMidRun.on,
      },
    },
    settled: {},
  },
});

/**
 * The task machine owns one task's execution. Only it starts a turn loop (the invoked `turnLoop`
 * actor); hosts send it intents (USER_MESSAGE, CANCEL, RETRY) and watch its events. A subtask
 * (the Task tool) moves it to running.waitingForSubtask and spawns a `subtask` actor for it; the
 * several Task calls of one answer each get theirs at once, so they run side by side. Each
 * child's completion arrives as SUBTASK_DONE and goes to the turn, which resumes once, when the
 * last one has answered; leaving `running` (a cancel, a failure) stops every child still running.
 * A SUBTASK_DONE that matches no subtask being waited for (late, duplicate) is ignored and counted. It adds up its runs' usage
 * and cost, and gives each run the total so far (the turn's usage events carry the running total).
 *
 * It holds the task's whole lifecycle. A settled run (completed, awaitingUser, aborted) waits in
 * its state's `finishing` while its phases go on (the gatekeeper, the memory write) and what it
 * recorded is saved (the invoked `finishRun`), then `settled`. Its `done` is published when they
 * are over, or when the state is left first (a new message, RETRY, ABANDON, CLOSE: the next
 * state's entry publishes it before anything of its own), so `done` stays the run's last event.
 * Each run's phases (instructions, memory, runner, gatekeeper, memory write) are its child
 * `runPhases`, spawned as the run starts and fed by this machine alone: the tool calls, results
 * and tokens its turn loop tells it of (RUN_EVENT), a CHARGE's tokens, the leased worker's pid
 * (RUNNER_LEASED); `finishing` tells
 * them how the run ended, and the transitions that stop a run from outside end them first.
 * INTERRUPT (the owner is ending) takes every running state to `interrupted`; a turn loop whose
 * worker died (`worker_lost`) does too, with its `done`; RECORD_FAILED ends a run going on (or
 * finishing) `failed`. Those two end with `release`: the runtime lets the task go.
 */
export const taskMachine = taskSetup.createMachine({
  id: 'task',
  context: ({ input }) => ({
    ...input,
    messages: input.messages ?? [],
    pendingResume: null,
    error: null,
    stopReason: null,
    subtasks: [],
    ignoredSubtaskEvents: 0,
    compactionFailures: 0,
    usage: input.usage ?? ZERO_USAGE,
    costUsd: input.costUsd ?? 0,
    userMessages: input.userMessages ?? 0,
    runs: input.runs ?? 0,
    runner: input.runner ?? 'local',
    submitted: null,
    queued: [],
    queuedCount: 0,
    command: undefined,
    runCommand: undefined,
    modelAfterRun: null,
    ending: null,
    owedDone: null,
    lastDone: null,
  }),
  initial: 'created',
  on: {
    // A subtask result nobody is waiting for: late or duplicate. Never drives the task.
    SUBTASK_DONE: { actions: assign({ ignoredSubtaskEvents: ({ context }) => context.ignoredSubtaskEvents + 1 }) },
    SET_MODE: { actions: assign({ mode: ({ event }) => event.mode }) },
    // The person's choice holds after a command's run too.
    SET_MODEL: { actions: assign({ model: ({ event }) => event.model, modelAfterRun: null }) },
    CHARGE: { actions: 'charge' },
    UNQUEUE: { actions: 'withdrawQueued' },
    // After the run's `done` (or with no run going on): the record's failure is told; nothing else changes.
    RECORD_FAILED: { actions: { type: 'publish', params: ({ context, event }) => recordFailedEvent(context, event.failure, false) } },
    RUN_EVENT: { actions: 'feedPhases' },
    RUNNER_LEASED: { actions: 'tellRunner' },
  },
  states: {
    created: {
      tags: ['running'],
      on: {
        START: { target: 'initializing', actions: { type: 'acceptUserMessage', params: ({ event }) => messageOf(event) } },
        // A stored task paused at its budget goes on with no new message once its budget was raised.
        CONTINUE: 'initializing',
        MARK_INTERRUPTED: 'interrupted',
        INTERRUPT: { target: '#task.interrupted', actions: 'stopPhases' },
        ...recordFailedMidRun.on,
      },
    },
    initializing: {
      tags: ['running'],
      // A run left while finishing (a new message, RETRY) publishes its `done` first: it stays that run's last event.
      entry: [
        'publishOwedDone',
        assign({ lastDone: null }),
        'beginRunCommand',
        { type: 'publish', params: ({ context }) => stateEvent(context, 'initializing') },
        // The run's phases (instructions, memory, runner; after the loop the gatekeeper), this machine's child: `initialize` waits for them.
        'retirePhases',
        stopChild(RUN_PHASES_ID),
        // (stopChild frees the systemId at once: the new run's phases take it.)
        spawnChild('runPhases', { id: RUN_PHASES_ID, systemId: RUN_PHASES_ID, input: ({ context }) => phasesInputOf(context) }),
        sendTo(RUN_PHASES_ID, { type: 'START' }),
      ],
      on: {
        USER_MESSAGE: { actions: 'enqueueMessage' },
        INTERRUPT: { target: '#task.interrupted', actions: 'stopPhases' },
        ...recordFailedMidRun.on,
      },
      invoke: {
        src: 'initialize',
        input: ({ context }) => runStartOf(context),
        onDone: {
          target: 'running',
          actions: [
            assign({ submitted: null }),
            // A resume note becomes a user message like any other (a view shows it, the log keeps it).
            'takePendingResume',
          ],
        },
        onError: [
          {
            guard: 'promptBlocked',
            target: 'awaitingUser',
            actions: [
              assign({ error: ({ event }) => asKeelError(event.error) }),
              'dropBlockedPrompt',
              { type: 'publish', params: ({ context }) => ({ type: 'compacted', taskId: context.taskId, messages: context.messages, summary: false }) },
            ],
          },
          { target: 'awaitingUser', actions: [assign({ error: ({ event }) => asKeelError(event.error) })] },
        ],
      },
    },
    /**
     * One run: the turn loop (in this process or on a worker: the `loop` region) and, beside it,
     * the sub-agents of its Task calls (the `subtasks` region) — where the loop runs changes
     * nothing of how its children are run and awaited.
     */
    running: {
      type: 'parallel',
      tags: ['running'],
      entry: [{ type: 'publish', params: ({ context }) => stateEvent(context, 'running') }, assign({ error: null, stopReason: null, runs: ({ context }) => context.runs + 1 })],
      on: {
        CANCEL: { actions: sendTo('turnLoop', { type: 'CANCEL' }) },
        SET_MODE: { actions: [assign({ mode: ({ event }) => event.mode }), sendTo('turnLoop', ({ event }) => ({ type: 'SET_MODE', mode: event.mode }))] },
        USER_MESSAGE: { actions: 'enqueueMessage' },
        INTERRUPT: { target: '#task.interrupted', actions: 'stopPhases' },
        ...recordFailedMidRun.on,
      },
      // A cancel or a failure ends the turn while children may still run: they are stopped with it.
      exit: 'stopSubtasks',
      states: {
        loop: {
          initial: 'starting',
          states: {
            /** Where this run's turn loop runs: in this process, or on a worker. */
            starting: { always: [{ guard: 'onWorker', target: 'onWorker' }, { target: 'inProcess' }] },
            inProcess: {
              // A prompt hook's call during the turn counts in the turn's totals (its usage events carry them).
              on: { CHARGE: { actions: sendTo('turnLoop', ({ event }) => event) } },
              invoke: {
                id: 'turnLoop',
                src: 'turnLoop',
                input: ({ context }) => turnInputOf(context),
                onDone: [
                  { guard: { type: 'turnCancelled', params: turnOutput }, target: '#task.aborted', actions: { type: 'recordTurn', params: turnOutput } },
                  { guard: { type: 'turnOverBudget', params: turnOutput }, target: '#task.pausedForBudget', actions: { type: 'recordTurn', params: turnOutput } },
                  { guard: { type: 'turnFailed', params: turnOutput }, target: '#task.awaitingUser', actions: { type: 'recordTurn', params: turnOutput } },
                  { target: '#task.completed', actions: { type: 'recordTurn', params: turnOutput } },
                ],
              },
            },
            onWorker: {
              invoke: {
                id: 'turnLoop',
                src: 'workerTurn',
                input: ({ context }) => turnInputOf(context),
                onDone: [
                  {
                    // The worker running the turn died: the task is interrupted (recorded, resumable; the
                    // query is never run again by itself), the run's phases end first, the reason is told.
                    guard: { type: 'workerLost', params: turnOutput },
                    target: '#task.interrupted',
                    actions: [
                      { type: 'recordTurn', params: turnOutput },
                      'stopPhases',
                      assign({ ending: 'workerLost' }),
                      // Resumable, so said as retryable (the query itself is never run again by itself).
                      { type: 'publish', params: ({ context }) => ({ ...errorEvent(context)!, retryable: true }) },
                    ],
                  },
                  { guard: { type: 'turnCancelled', params: turnOutput }, target: '#task.aborted', actions: { type: 'recordTurn', params: turnOutput } },
                  { guard: { type: 'turnOverBudget', params: turnOutput }, target: '#task.pausedForBudget', actions: { type: 'recordTurn', params: turnOutput } },
                  { guard: { type: 'turnFailed', params: turnOutput }, target: '#task.awaitingUser', actions: { type: 'recordTurn', params: turnOutput } },
                  { target: '#task.completed', actions: { type: 'recordTurn', params: turnOutput } },
                ],
              },
            },
          },
        },
        subtasks: {
          initial: 'turn',
          states: {
            turn: {
              on: {
                SUBTASK_STARTED: {
                  target: 'waitingForSubtask',
                  actions: enqueueActions(({ context, event, enqueue }) => {
                    const subtask = newSubtask(context, event);
                    if (!subtask) return;
                    enqueue.assign({ subtasks: [...context.subtasks, subtask] });
                    enqueue.spawnChild('subtask', { id: subtaskActorId(subtask.toolCallId), input: { parentId: context.taskId, subtask } });
                  }),
                },
              },
            },
            waitingForSubtask: {
              entry: { type: 'publish', params: ({ context }) => stateEvent(context, 'waitingForSubtask') },
              on: {
                // Another Task call of the same answer: it runs beside the ones already running.
                SUBTASK_STARTED: {
                  actions: enqueueActions(({ context, event, enqueue }) => {
                    const subtask = newSubtask(context, event);
                    if (!subtask) return;
                    enqueue.assign({ subtasks: [...context.subtasks, subtask] });
                    enqueue.spawnChild('subtask', { id: subtaskActorId(subtask.toolCallId), input: { parentId: context.taskId, subtask } });
                  }),
                },
                SUBTASK_DONE: [
                  { guard: and(['isAwaitedSubtask', 'isLastSubtask']), target: 'turn', actions: 'finishSubtask' },
                  { guard: 'isAwaitedSubtask', actions: 'finishSubtask' },
                ],
              },
              // Back to the turn (every child answered, or the turn ended: a cancel, a failure) — but a run
              // stopped from outside (an interrupt, a dead worker, a failed record) goes straight to its end.
              exit: { type: 'publish', params: ({ context, event }) => (stoppedFromOutside(event) ? null : stateEvent(context, 'running')) },
            },
          },
        },
      },
    },
    awaitingUser: {
      tags: ['settled', 'failed', 'waitingForPerson'],
      entry: [
        { type: 'publish', params: ({ context }) => stateEvent(context, 'awaitingUser') },
        { type: 'publish', params: ({ context }) => errorEvent(context) },
        assign({ owedDone: 'failed' }),
      ],
      ...finishingThenSettled,
      // Messages queued during the run that failed are its follow-ups: they start the next run (after that run's `done`).
      always: { guard: 'hasQueued', target: 'initializing', actions: ['publishOwedDone', 'sendQueued'] },
      on: {
        RETRY: 'initializing',
        USER_MESSAGE: { target: 'initializing', actions: { type: 'acceptUserMessage', params: ({ event }) => messageOf(event) } },
        ABANDON: 'failed',
      },
    },
    /**
     * The run stopped before a model request that could take the task past its budget: nothing
     * was sent. Raising the budget continues it (the host sends RETRY), as does a new message;
     * stored as failed (a limit reached is not a goal reached) until then.
     */
    pausedForBudget: {
      tags: ['settled', 'failed', 'waitingForPerson', 'budgetReached'],
      entry: [
        { type: 'publish', params: ({ context }) => stateEvent(context, 'pausedForBudget') },
        { type: 'publish', params: ({ context }) => errorEvent(context) },
        assign({ owedDone: 'failed' }),
      ],
      ...finishingThenSettled,
      on: {
        RETRY: 'initializing',
        USER_MESSAGE: { target: 'initializing', actions: { type: 'acceptUserMessage', params: ({ event }) => messageOf(event) } },
        ABANDON: 'failed',
      },
    },
    completed: {
      tags: ['settled', 'completed'],
      entry: [{ type: 'publish', params: ({ context }) => stateEvent(context, 'completed') }, assign({ owedDone: 'completed' })],
      ...finishingThenSettled,
      // The turn boundary: what the person queued during the run is sent now, as the next run (the finished run's `done` first: the queue is sent after it).
      always: { guard: 'hasQueued', target: 'initializing', actions: ['publishOwedDone', 'sendQueued'] },
      on: { USER_MESSAGE: { target: 'initializing', actions: { type: 'acceptUserMessage', params: ({ event }) => messageOf(event) } } },
    },
    aborted: {
      tags: ['settled', 'aborted'],
      // Cancelled: the person stopped the run, so what they queued is given back to them, not sent.
      entry: ['returnQueued', { type: 'publish', params: ({ context }) => stateEvent(context, 'aborted') }, assign({ owedDone: 'aborted' })],
      ...finishingThenSettled,
      on: { USER_MESSAGE: { target: 'initializing', actions: { type: 'acceptUserMessage', params: ({ event }) => messageOf(event) } } },
    },
    failed: {
      type: 'final',
      tags: ['settled', 'failed'],
      // Given up while finishing (ABANDON): that run's `done` comes first. A failed record's `done` comes last.
      // Queued messages go back to the person, unsent.
      entry: ['publishOwedDone', 'returnQueued', { type: 'publish', params: ({ context }) => stateEvent(context, 'failed') }, { type: 'endOutsideLoop', params: { status: 'failed' } }],
    },
    interrupted: {
      tags: ['settled', 'interrupted'],
      // A run whose worker died ends here with its `done`; the owner's INTERRUPT publishes none (the host is ending).
      // Queued messages go back to the person, unsent, before anything else is said.
      entry: ['returnQueued', { type: 'publish', params: ({ context }) => stateEvent(context, 'interrupted') }, { type: 'endOutsideLoop', params: { status: 'interrupted' } }],
      // The follow-up's command narrows the run that answers it (set before `initializing` applies it).
      on: {
        RESUME: {
          target: 'reconstructing',
          actions: assign(({ event }) => ({ pendingResume: messageOf({ ...event, text: event.note }), command: event.command, ending: null })),
        },
      },
    },
    reconstructing: {
      tags: ['running'],
      entry: [assign({ lastDone: null }), { type: 'publish', params: ({ context }) => stateEvent(context, 'reconstructing') }],
      on: {
        USER_MESSAGE: { actions: 'enqueueMessage' },
        INTERRUPT: { target: '#task.interrupted', actions: 'stopPhases' },
        ...recordFailedMidRun.on,
      },
      invoke: {
        src: 'reconstruct',
        input: ({ context }) => ({ taskId: context.taskId }),
        onDone: { target: 'initializing', actions: assign({ messages: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => asKeelError(event.error) }) },
      },
    },
  },
});

/** What a run's turn loop starts from (the turn machine's input, and the query machine's). */
function turnInputOf(context: TaskContext): TurnInput {
  return {
    taskId: context.taskId,
    model: context.model,
    mode: context.mode,
    messages: context.messages,
    limits: context.limits,
    compactionFailures: context.compactionFailures,
    run: context.runs,
    priorCostUsd: context.costUsd,
  };
}

/** The subtask a SUBTASK_STARTED asks for; null when that call's subtask already runs (a duplicate). */
function newSubtask(context: TaskContext, event: TaskMachineEvent): PendingSubtask | null {
  if (event.type !== 'SUBTASK_STARTED' || context.subtasks.some((s) => s.toolCallId === event.toolCallId)) return null;
  return { toolCallId: event.toolCallId, description: event.description, prompt: event.prompt };
}

/** The id of a Task call's spawned `subtask` actor. */
function subtaskActorId(toolCallId: string): string {
  return `subtask:${toolCallId}`;
}

/** The run about to start: the next run number, the text it answers (a resume note, else the last user message). */
function runStartOf(context: TaskContext): RunStartInput {
  const pending = context.pendingResume?.text ?? null;
  let prompt = pending ?? '';
  if (pending === null) {
    for (let i = context.messages.length - 1; i >= 0 && !prompt; i--) {
      const m = context.messages[i]!;
      if (m.role === 'user') prompt = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n').trim();
    }
  }
  return { taskId: context.taskId, run: context.runs + 1, prompt, submitted: context.submitted, fromMessage: pending !== null ? context.messages.length : Math.max(0, context.messages.length - 1) };
}

function userMessageEvent(context: Pick<TaskContext, 'taskId' | 'userMessages'>, m: Omit<PendingMessage, 'id'>): TaskEvent {
  const shown = {
    ...(m.typed !== undefined ? { typed: m.typed } : {}),
    ...(m.attachments?.length ? { attachments: m.attachments.map(summaryOf) } : {}),
    ...(m.images?.length ? { images: m.images.map((i) => i.info) } : {}),
  };
  return { type: 'user_message', taskId: context.taskId, id: `${context.taskId}-u${context.userMessages + 1}`, text: m.text, ...shown };
}

/**
 * A user message as the model reads it: the attached images first (as the Messages API
 * recommends), then the text, then what its mentions brought (conversation.ts `userMessageOf`).
 */
function fullMessageOf(m: Omit<PendingMessage, 'id'>): ConversationMessage {
  if (!m.images?.length && !m.attachments?.length) return userText(m.text);
  const withMentions = userMessageOf(m.text, m.attachments);
  return { role: 'user', content: [...(m.images ?? []).map((i) => i.block), ...withMentions.content] };
}

/** The message a START or USER_MESSAGE carries (`typed` only when it is not the text sent). */
function messageOf(event: { text: string; typed?: string; attachments?: MessageAttachment[]; images?: AttachedImage[]; command?: CommandRun }): Omit<PendingMessage, 'id'> {
  return {
    text: event.text,
    ...(event.typed !== undefined && event.typed !== event.text ? { typed: event.typed } : {}),
    ...(event.attachments?.length ? { attachments: event.attachments } : {}),
    ...(event.images?.length ? { images: event.images } : {}),
    ...(event.command ? { command: event.command } : {}),
  };
}

function errorEvent(context: TaskContext): TaskEvent | null {
  const e = context.error;
  return e ? { type: 'error', taskId: context.taskId, code: e.code, message: e.message, retryable: e.retryable } : null;
}

/** Whether `event` ends a run from outside its turn loop: the owner's interrupt, a failed record, the worker's death. */
function stoppedFromOutside(event: EventObject): boolean {
  if (event.type === 'INTERRUPT' || event.type === 'RECORD_FAILED') return true;
  const output = 'output' in event ? (event.output as Partial<TurnOutput> | undefined) : undefined;
  return output?.error?.code === 'worker_lost';
}

/** The turn loop's output, as the params of the guards and actions that read it. */
function turnOutput({ event }: { event: { output: TurnOutput } }): { output: TurnOutput } {
  return { output: event.output };
}

function stateEvent(context: TaskContext, state: string): TaskEvent {
  // The event says what the state means (its tags here), so views and listeners never read its name.
  return { type: 'task', taskId: context.taskId, state, title: context.title, tags: tagsOfState(taskMachine, state).filter(isTaskStateTag) };
}

/** The error that tells a record's failure; `unsettled`: the run was going on and is stopped by it. */
function recordFailedEvent(context: TaskContext, failure: string, unsettled: boolean): TaskEvent {
  const after = unsettled ? 'The run was stopped; what was saved before that is kept.' : 'The run had ended, but its record is incomplete.';
  const message = `${failure.slice(0, 1).toUpperCase()}${failure.slice(1)}. ${after}`;
  return { type: 'error', taskId: context.taskId, code: 'record_failed', message, retryable: false };
}

/** The phases' input of the run about to start. */
function phasesInputOf(context: TaskContext): RunPhasesInput {
  const start = runStartOf(context);
  return { taskId: context.taskId, run: start.run, prompt: start.prompt, fromMessage: start.fromMessage, runner: context.runner };
}

/** The current run's phases (the child `runPhases`), if any. */
function phasesOf(system: { get(id: string): AnyActorRef | undefined }): AnyActorRef | undefined {
  return system.get(RUN_PHASES_ID);
}

/** Tells the run's phases `event` now (synchronously: what they publish comes before what follows), if they still run. */
function tell(phases: AnyActorRef | undefined, event: RunPhasesEvent): void {
  if (phases?.getSnapshot().status === 'active') phases.send(event);
}

/** A run's `done` ends its command: no narrowing, and the task's own model back. */
function runCommandEnded(context: TaskContext): Pick<TaskContext, 'runCommand' | 'modelAfterRun'> & { model?: string } {
  return { runCommand: undefined, modelAfterRun: null, ...(context.modelAfterRun !== null ? { model: context.modelAfterRun } : {}) };
}

function doneEvent(context: TaskContext, status: TaskStatus): DoneEvent {
  return { type: 'done', taskId: context.taskId, status, stopReason: context.stopReason };
}

function asKeelError(err: unknown): KeelError {
  if (err && typeof err === 'object' && 'code' in err && 'message' in err) {
    const e = err as KeelError;
    return { code: e.code, message: e.message, retryable: e.retryable ?? true };
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err), retryable: true };
}
