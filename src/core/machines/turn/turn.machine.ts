import { and, assign, enqueueActions, fromPromise, not, sendParent, setup } from 'xstate';
import type { TaskEvent } from '../../../shared/domain/events';
import { isTurnStateTag, type TurnStateTag } from '../../../shared/domain/stateTags';
import { tagsOfState } from '../stateTags';
import { ZERO_USAGE, type ConversationMessage, type StopReason, type ToolUseBlock, type Usage } from '../../../shared/domain/messages';
import { compactWithSummary, SUMMARY_INSTRUCTION, SUMMARY_MAX_TOKENS, truncateConversation } from '../../context/compaction';
import { estimateTokens } from '../../context/tokens';
import type { PermissionMode } from '../../../shared/domain/permissionModes';
import type { ToolDefinition } from '../../providers/types';
import { callMachine, type CallOutput } from '../call/call.machine';
import { permissionMachine } from '../permission/permission.machine';
import type { StreamOutput } from '../stream/assembly';
import { inCallOrder, insertToolResults, pendingToolUses, repairConversation, unansweredSubtaskCalls, userText } from './conversation';
import {
  advance,
  buildRequest,
  callError,
  charge,
  continueAfterMaxTokens,
  errorResult,
  internal,
  invalidCall,
  invalidInputResult,
  messageEvent,
  nextRetryDelayMs,
  permissionEvent,
  permissionInput,
  refusal,
  resultEvent,
  resultsEvent,
  retryEvent,
  toolCallEvent,
  turnEvent as untaggedTurnEvent,
  usageOf,
  addUsage,
} from './turnHelpers';
import type { PermissionOutcome, Summary, ToolRunOutput, TurnContext, TurnEvent, TurnInput, TurnOutput, ValidatedCall, ValidationOutcome } from './types';
import { budgetError, requestEstimateUsd, type BudgetRequest, type BudgetVerdict } from './budget';

export type { PermissionOutcome, Summary, ToolRunOutput, TurnEvent, TurnInput, TurnLimits, TurnOutput, ValidatedCall, ValidationOutcome } from './types';

const COMPACTION_BREAKER = 3;

type Publish = { type: 'publish'; params: TaskEvent | null };
type TellOwner = { type: 'tellOwner'; params: TaskEvent | null };
/** The `permission` event of a decided call (an ask was published by the permission machine itself). */
const publishPermission = {
  type: 'publish',
  params: ({ context, event }: { context: TurnContext; event: { output: PermissionOutcome } }) => permissionEvent(context, event.output),
} as const;

/**
 * The agent loop. One run of this machine answers one user message: it prepares the system
 * prompt, keeps the context under its limit, streams a response (retrying failures after the
 * stream started, with backoff), and while the model asks for tools, validates each call's input
 * once, has the permission machine (an invoked child) decide it, runs it, and sends all results
 * of a turn back in one user message. It prices each model call (providers/pricing.ts) into its
 * `costUsd`. It is iterative: assembling returns to checkingContext. It ends in `done` or
 * `error`, and its output carries the conversation, usage and cost so far either way.
 */
export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    input: {} as TurnInput,
    output: {} as TurnOutput,
    events: {} as TurnEvent,
    tags: {} as TurnStateTag,
  },
  actors: {
    /** System prompt parts and tool definitions. Provided by the runtime. */
    prepareSystemPrompt: fromPromise<{ system: string[]; tools: ToolDefinition[] }, { taskId: string; mode: PermissionMode }>(async () => ({ system: [], tools: [] })),
    /** One summarisation call; resolves with the summary and the tokens it used. Provided by the runtime. */
    summarize: fromPromise<Summary, { taskId: string; model: string; system: string[]; messages: ConversationMessage[] }>(async () => {
      throw new Error('no summariser wired');
    }),
    modelCall: callMachine,
    /**
     * Asks the task's owner whether a priced request may go (budget.ts): null when it may, else
     * why not. Provided by the runtime; without a budget every request goes.
     */
    admit: fromPromise<BudgetVerdict, BudgetRequest>(async () => null),
    /** Parses a call's input against its tool's schema and has the tool describe it. Provided by the runtime. */
    validateToolCall: fromPromise<ValidationOutcome, { taskId: string; call: ToolUseBlock }>(async ({ input }) => ({
      ok: false,
      result: { type: 'tool_result', tool_use_id: input.call.id, content: 'No tools wired.', is_error: true },
      summary: 'no tools',
    })),
    /** Decides one validated call. Its actors (engine, asker) are provided by the runtime. */
    permission: permissionMachine,
    /** Runs one allowed call; never rejects (failures are error results). Provided by the runtime. */
    runTool: fromPromise<ToolRunOutput, { taskId: string; call: ValidatedCall }>(async ({ input }) => ({
      result: { type: 'tool_result', tool_use_id: input.call.id, content: 'No tools wired.', is_error: true },
      summary: 'not run',
    })),
    /**
     * Stop hooks (docs/hooks.md) when the model finished answering: resolves with a reason to send
     * the agent back to work, or null to stop. `continuations`: times this run was already sent back.
     */
    stopHook: fromPromise<{ continueWith: string | null }, { taskId: string; lastMessage: string; continuations: number }>(async () => ({ continueWith: null })),
    /** Calls a tool on an MCP server (arrives with the MCP capability). */
    callMcpTool: fromPromise<ToolRunOutput, { taskId: string; call: ToolUseBlock }>(async ({ input }) => ({
      result: { type: 'tool_result', tool_use_id: input.call.id, content: `MCP tool ${input.call.name} is not available: no MCP servers are configured.`, is_error: true },
      summary: 'MCP not configured',
    })),
  },
  actions: {
    publish: (_: unknown, _event: TaskEvent | null) => {},
    /**
     * Tells the turn's owner (its parent machine: the task machine, which feeds the run's phases)
     * an event of the run just published that the phases keep count of: a tool call, its result,
     * the loop back at the model, a model call's tokens. Inline, not deferred like `sendParent`:
     * what the phases publish follows that event in the log, as it does on a worker, where the
     * query machine relays the worker's events one by one. A turn without a parent (on a worker)
     * tells nobody here: the query machine on the host tells the task machine.
     */
    tellOwner: ({ self }, event: TaskEvent | null) => {
      if (event) self._parent?.send({ type: 'RUN_EVENT', event });
    },
    /**
     * A Task call: whoever owns the task starts the sub-agent (runtime/turnHost.ts). In the host's
     * process that is the turn's parent, the task machine (SUBTASK_STARTED); a worker provides
     * the call up to its host instead.
     */
    startSubtask: sendParent((_, p: { toolCallId: string; description: string; prompt: string }) => ({ type: 'SUBTASK_STARTED' as const, ...p })),
    /** Records the current call's result (published as a tool_result) and moves to the next call. */
    answer: enqueueActions<TurnContext, TurnEvent, ToolRunOutput, TurnEvent, never, Publish | TellOwner, never, never, never>(({ context, enqueue }, p) => {
      const result = resultEvent(context, p.result, p.summary);
      enqueue({ type: 'publish', params: result });
      enqueue({ type: 'tellOwner', params: result });
      enqueue.assign(advance(context, p.result));
    }),
    /** A started subtask answered: its result is kept (put in call order when the turn assembles) and it is no longer awaited. */
    recordSubtask: enqueueActions<TurnContext, TurnEvent, ToolRunOutput, TurnEvent, never, Publish | TellOwner, never, never, never>(({ context, enqueue }, p) => {
      const result = resultEvent(context, p.result, p.summary);
      enqueue({ type: 'publish', params: result });
      enqueue({ type: 'tellOwner', params: result });
      enqueue.assign({ results: [...context.results, p.result], subtasks: context.subtasks.filter((id) => id !== p.result.tool_use_id) });
    }),
    /** Adds a model call's tokens and price to the run and publishes its `usage` event. */
    chargeUsage: enqueueActions<TurnContext, TurnEvent, { usage: Usage; failed: boolean }, TurnEvent, never, Publish | TellOwner, never, never, never>(({ context, enqueue }, p) => {
      const charged = charge(context, p.usage, p.failed);
      if (!charged) return;
      enqueue.assign({ usage: charged.usage, costUsd: charged.costUsd });
      enqueue({ type: 'publish', params: charged.event });
      enqueue({ type: 'tellOwner', params: charged.event });
    }),
    chargeCall: enqueueActions<TurnContext, TurnEvent, undefined, TurnEvent, never, Publish | TellOwner, never, never, never>(({ context, event, enqueue }) => {
      if (event.type !== 'CHARGE') return;
      const total = context.costUsd + event.costUsd;
      enqueue.assign({ usage: addUsage(context.usage, event.usage), costUsd: total });
      const usage: TaskEvent = { type: 'usage', taskId: context.taskId, ...event.usage, costUsd: event.costUsd, totalCostUsd: context.priorCostUsd + total };
      enqueue({ type: 'publish', params: usage });
      enqueue({ type: 'tellOwner', params: usage });
    }),
  },
  delays: {
    retryDelay: ({ context }) => nextRetryDelayMs(context),
  },
  guards: {
    maxTurnsReached: ({ context }) => context.modelCalls >= context.limits.maxTurns,
    overContext: ({ context }) => estimateTokens(context.system, context.messages) > context.limits.contextLimit,
    breakerClosed: ({ context }) => context.compactionFailures < COMPACTION_BREAKER,
    callSucceeded: (_, p: { output: CallOutput }) => p.output.ok,
    /** The owner refused the request: it could take the task past its budget. */
    refused: (_, p: { verdict: BudgetVerdict }) => p.verdict !== null,
    callRetryable: ({ context }, p: { output: CallOutput }) =>
      !p.output.ok && 'error' in p.output && p.output.error.retryable && context.attempt <= context.limits.retryLimit,
    hasToolUses: ({ context }) => (context.last ? pendingToolUses(context.last.message).length > 0 : false),
    stoppedAt: ({ context }, p: { reason: StopReason }) => context.last?.stopReason === p.reason,
    canContinueAfterMaxTokens: ({ context }) => context.last?.stopReason === 'max_tokens' && !context.maxTokensContinued,
    hasNextCall: ({ context }) => context.index < context.pending.length,
    isValid: (_, p: { outcome: ValidationOutcome }) => p.outcome.ok,
    /** Allowed, and (with `kind`) a call of that kind: an MCP tool, a subtask. */
    allowed: ({ context }, p: { outcome: PermissionOutcome; kind?: 'mcp' | 'task' }) =>
      p.outcome.decision === 'allow' && (p.kind === undefined || context.validated?.subject.kind === p.kind),
    nextCallInvalid: ({ context }) => invalidCall(context) !== undefined,
    /** A result for a subtask this turn started and still awaits (a late or duplicate one is not). */
    isAwaitedSubtask: ({ context, event }) => event.type === 'SUBTASK_RESULT' && context.subtasks.includes(event.toolCallId),
    subtasksOutstanding: ({ context }) => context.subtasks.length > 0,
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({
    ...input,
    system: [],
    tools: [],
    modelCalls: 0,
    attempt: 1,
    last: null,
    failure: null,
    pending: [],
    index: 0,
    validated: null,
    results: [],
    subtasks: [],
    maxTokensContinued: false,
    stopReason: null,
    error: null,
    usage: ZERO_USAGE,
    costUsd: 0,
    stopContinuations: 0,
  }),
  initial: 'idle',
  on: {
    SET_MODE: { actions: assign({ mode: ({ event }) => event.mode }) },
    // A prompt hook's call during the run: counted in the run's totals, so the usage events' running
    // total (the budget's figure) includes it at once.
    CHARGE: { actions: 'chargeCall' },
    CANCEL: {
      target: '.error',
      actions: assign({ error: { code: 'cancelled', message: 'Cancelled by the user.', retryable: false } }),
    },
    // The subtasks of a turn run side by side: one may answer while later calls of the same
    // turn are still being validated, asked about or run, or while the turn awaits the others.
    SUBTASK_RESULT: {
      guard: 'isAwaitedSubtask',
      actions: { type: 'recordSubtask', params: ({ event }) => ({ result: event.result, summary: event.summary }) },
    },
  },
  states: {
    idle: {
      // A rebuilt task whose last answer asked for subtasks re-attaches to them (the subtask
      // runner is keyed by parent and tool call) instead of declaring them interrupted.
      always: { target: 'preparing', actions: assign({ pending: ({ context }) => unansweredSubtaskCalls(context.messages), index: 0, results: [] }) },
    },
    preparing: {
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'preparing') },
      invoke: {
        src: 'prepareSystemPrompt',
        input: ({ context }) => ({ taskId: context.taskId, mode: context.mode }),
        onDone: [
          { guard: 'hasNextCall', target: 'dispatchingTools', actions: assign({ system: ({ event }) => event.output.system, tools: ({ event }) => event.output.tools }) },
          { target: 'checkingContext', actions: assign({ system: ({ event }) => event.output.system, tools: ({ event }) => event.output.tools }) },
        ],
        onError: { target: 'error', actions: assign({ error: ({ event }) => internal(event.error) }) },
      },
    },
    checkingContext: {
      // Back at the model: the run's phases hear the turn's tool calls are over.
      entry: [{ type: 'publish', params: ({ context }) => turnEvent(context, 'checkingContext') }, { type: 'tellOwner', params: ({ context }) => turnEvent(context, 'checkingContext') }],
      always: [
        {
          guard: 'maxTurnsReached',
          target: 'error',
          actions: assign({ error: ({ context }) => ({ code: 'max_turns' as const, message: maxTurnsMessage(context.limits.maxTurns), retryable: true }) }),
        },
        { guard: and(['overContext', 'breakerClosed']), target: 'compacting' },
        {
          guard: 'overContext',
          target: 'streaming',
          actions: [
            assign({ messages: ({ context }) => truncateConversation(context.messages, context.system, context.limits.contextLimit) }),
            { type: 'publish', params: ({ context }) => ({ type: 'compacted', taskId: context.taskId, messages: context.messages, summary: false }) },
          ],
        },
        { target: 'streaming' },
      ],
    },
    compacting: {
      tags: ['compacting'],
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'compacting') },
      initial: 'admittingSummary',
      states: {
        /** A summary is a priced request too: the budget is asked first (budget.ts). */
        admittingSummary: {
          invoke: {
            src: 'admit',
            input: ({ context }) => ({
              taskId: context.taskId,
              purpose: 'summary' as const,
              estimateUsd: requestEstimateUsd(context.model, context.system, [...repairConversation(context.messages), userText(SUMMARY_INSTRUCTION)], [], SUMMARY_MAX_TOKENS),
            }),
            onDone: [
              { guard: { type: 'refused', params: ({ event }) => ({ verdict: event.output }) }, target: '#turn.error', actions: assign({ error: ({ event }) => budgetError(event.output!) }) },
              { target: 'summarizing' },
            ],
            onError: { target: '#turn.error', actions: assign({ error: ({ event }) => internal(event.error) }) },
          },
        },
        summarizing: {
      invoke: {
        src: 'summarize',
        input: ({ context }) => ({ taskId: context.taskId, model: context.model, system: context.system, messages: repairConversation(context.messages) }),
        onDone: {
          target: '#turn.streaming',
          actions: [
            { type: 'chargeUsage', params: ({ event }) => ({ usage: event.output.usage, failed: false }) },
            assign({
              messages: ({ context, event }) => truncateConversation(compactWithSummary(context.messages, event.output.text), context.system, context.limits.contextLimit),
            }),
            { type: 'publish', params: ({ context }) => ({ type: 'compacted', taskId: context.taskId, messages: context.messages, summary: true }) },
          ],
        },
        onError: { target: '#turn.checkingContext', actions: assign({ compactionFailures: ({ context }) => context.compactionFailures + 1 }) },
      },
        },
      },
    },
    streaming: {
      tags: ['working'],
      initial: 'admittingRequest',
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'streaming') },
      states: {
        /** Every request (the first, one after a summary, each retry) is priced at its worst and asked for first (budget.ts). */
        admittingRequest: {
          invoke: {
            src: 'admit',
            input: ({ context }) => ({
              taskId: context.taskId,
              purpose: 'answer' as const,
              estimateUsd: requestEstimateUsd(context.model, context.system, context.messages, context.tools, context.limits.maxTokens),
            }),
            onDone: [
              { guard: { type: 'refused', params: ({ event }) => ({ verdict: event.output }) }, target: '#turn.error', actions: assign({ error: ({ event }) => budgetError(event.output!) }) },
              { target: 'requesting' },
            ],
            onError: { target: '#turn.error', actions: assign({ error: ({ event }) => internal(event.error) }) },
          },
        },
        requesting: {
          invoke: {
            src: 'modelCall',
            input: ({ context }) => ({
              taskId: context.taskId,
              request: buildRequest(context),
              // The history length is part of the step's identity: an actor rebuilt from the log
              // restarts its run and call counters, and must not collide with the steps its
              // predecessor already sent (that would drop the rebuilt task's first request).
              continuationKey: `${context.taskId}:r${context.run}:c${context.modelCalls}:h${context.messages.length}:a${context.attempt}`,
              lockTimeoutMs: context.limits.lockTimeoutMs,
            }),
            onDone: [
              {
                guard: { type: 'callSucceeded', params: ({ event }) => ({ output: event.output }) },
                target: '#turn.evaluating',
                actions: [
                  assign(({ context, event }) => {
                    const out = event.output as Extract<StreamOutput, { ok: true }>;
                    return {
                      last: out,
                      failure: null,
                      attempt: 1,
                      modelCalls: context.modelCalls + 1,
                      messages: out.message.content.length > 0 ? [...context.messages, out.message] : context.messages,
                    };
                  }),
                  { type: 'chargeUsage', params: ({ event }) => ({ usage: usageOf(event.output), failed: false }) },
                  { type: 'publish', params: ({ context, event }) => messageEvent(context, (event.output as Extract<StreamOutput, { ok: true }>).message) },
                ],
              },
              {
                guard: { type: 'callRetryable', params: ({ event }) => ({ output: event.output }) },
                target: 'backoff',
                actions: [
                  // What a failed attempt used before it failed was billed: it counts too.
                  { type: 'chargeUsage', params: ({ event }) => ({ usage: usageOf(event.output), failed: true }) },
                  assign({ failure: ({ event }) => event.output, attempt: ({ context }) => context.attempt + 1 }),
                  { type: 'publish', params: ({ context }) => retryEvent(context) },
                ],
              },
              {
                target: '#turn.error',
                actions: [
                  { type: 'chargeUsage', params: ({ event }) => ({ usage: usageOf(event.output), failed: true }) },
                  assign({ failure: ({ event }) => event.output, error: ({ event }) => callError(event.output) }),
                ],
              },
            ],
          },
        },
        backoff: { after: { retryDelay: 'admittingRequest' } },
      },
    },
    evaluating: {
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'evaluating') },
      always: [
        { guard: 'hasToolUses', target: 'dispatchingTools', actions: assign({ pending: ({ context }) => pendingToolUses(context.last!.message), index: 0, results: [] }) },
        {
          guard: 'canContinueAfterMaxTokens',
          target: 'checkingContext',
          actions: [
            { type: 'publish', params: ({ context }) => messageEvent(context, userText(continueAfterMaxTokens(context.last!))) },
            assign({
              maxTokensContinued: true,
              messages: ({ context }) => [...context.messages, userText(continueAfterMaxTokens(context.last!))],
            }),
          ],
        },
        { guard: { type: 'stoppedAt', params: { reason: 'pause_turn' } }, target: 'checkingContext' },
        { target: 'stopping', actions: assign({ stopReason: ({ context }) => context.last?.stopReason ?? null }) },
      ],
    },
    /** The answer is complete: Stop hooks may send the agent back to work (bounded by the hook runner). */
    stopping: {
      invoke: {
        src: 'stopHook',
        input: ({ context }) => ({ taskId: context.taskId, lastMessage: lastText(context.last?.message), continuations: context.stopContinuations }),
        onDone: [
          {
            guard: ({ event }) => event.output.continueWith !== null,
            target: 'checkingContext',
            actions: [
              { type: 'publish', params: ({ context, event }) => messageEvent(context, userText(stopFeedback(event.output.continueWith!))) },
              assign({
                messages: ({ context, event }) => [...context.messages, userText(stopFeedback(event.output.continueWith!))],
                stopContinuations: ({ context }) => context.stopContinuations + 1,
                stopReason: null,
              }),
            ],
          },
          { target: 'done' },
        ],
        onError: { target: 'done' },
      },
    },
    dispatchingTools: {
      always: [
        // A call whose input was not valid JSON is answered with an error and never run or asked about.
        {
          guard: 'nextCallInvalid',
          actions: [
            { type: 'publish', params: ({ context }) => toolCallEvent(context) },
            { type: 'tellOwner', params: ({ context }) => toolCallEvent(context) },
            { type: 'answer', params: ({ context }) => ({ result: invalidInputResult(context), summary: 'not run: its input was not valid JSON' }) },
          ],
        },
        { guard: 'hasNextCall', target: 'validatingInput' },
        { guard: 'subtasksOutstanding', target: 'awaitingSubtasks' },
        { target: 'assembling' },
      ],
    },
    /** Parsed once here: an invalid call is answered with the schema's problems, asking nobody. */
    validatingInput: {
      entry: [{ type: 'publish', params: ({ context }) => toolCallEvent(context) }, { type: 'tellOwner', params: ({ context }) => toolCallEvent(context) }],
      invoke: {
        src: 'validateToolCall',
        input: ({ context }) => ({ taskId: context.taskId, call: context.pending[context.index]! }),
        onDone: [
          {
            guard: { type: 'isValid', params: ({ event }) => ({ outcome: event.output }) },
            target: 'permissionCheck',
            actions: assign({ validated: ({ event }) => (event.output.ok ? event.output.call : null) }),
          },
          { target: 'dispatchingTools', actions: { type: 'answer', params: ({ context, event }) => refusal(context, event.output) } },
        ],
        onError: { target: 'dispatchingTools', actions: assign(({ context, event }) => advance(context, errorResult(context, event.error))) },
      },
    },
    permissionCheck: {
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'permissionCheck') },
      invoke: {
        src: 'permission',
        input: ({ context }) => permissionInput(context),
        onDone: [
          { guard: { type: 'allowed', params: ({ event }) => ({ outcome: event.output, kind: 'mcp' }) }, target: 'mcpCall', actions: publishPermission },
          { guard: { type: 'allowed', params: ({ event }) => ({ outcome: event.output, kind: 'task' }) }, target: 'startingSubtask', actions: publishPermission },
          { guard: { type: 'allowed', params: ({ event }) => ({ outcome: event.output }) }, target: 'executingTool', actions: publishPermission },
          { target: 'dispatchingTools', actions: [publishPermission, { type: 'answer', params: ({ context, event }) => refusal(context, event.output) }] },
        ],
        onError: { target: 'dispatchingTools', actions: assign(({ context, event }) => advance(context, errorResult(context, event.error))) },
      },
    },
    executingTool: {
      tags: ['working'],
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'executingTool') },
      invoke: {
        src: 'runTool',
        input: ({ context }) => ({ taskId: context.taskId, call: context.validated! }),
        onDone: { target: 'dispatchingTools', actions: { type: 'answer', params: ({ event }) => event.output } },
        onError: { target: 'dispatchingTools', actions: assign(({ context, event }) => advance(context, errorResult(context, event.error))) },
      },
    },
    /**
     * The Task tool: the parent task's machine starts the subtask (SUBTASK_STARTED) and the turn
     * goes on with its next call at once, so every Task call of one answer runs side by side.
     */
    startingSubtask: {
      entry: [
        { type: 'publish', params: ({ context }) => turnEvent(context, 'startingSubtask') },
        {
          type: 'startSubtask',
          params: ({ context }) => {
            const call = context.validated!;
            const input = call.input as { description?: string; prompt?: string };
            return { toolCallId: call.id, description: input.description ?? '', prompt: input.prompt ?? '' };
          },
        },
        assign({ subtasks: ({ context }) => [...context.subtasks, context.validated!.id], index: ({ context }) => context.index + 1, validated: null }),
      ],
      always: 'dispatchingTools',
    },
    /** Every call is answered but started subtasks: the turn resumes once, when the last one answers. */
    awaitingSubtasks: {
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'awaitingSubtasks') },
      always: { guard: not('subtasksOutstanding'), target: 'assembling' },
    },
    mcpCall: {
      tags: ['working'],
      entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'mcpCall') },
      invoke: {
        src: 'callMcpTool',
        input: ({ context }) => ({ taskId: context.taskId, call: context.pending[context.index]! }),
        onDone: { target: 'dispatchingTools', actions: { type: 'answer', params: ({ event }) => event.output } },
        onError: { target: 'dispatchingTools', actions: assign(({ context, event }) => advance(context, errorResult(context, event.error))) },
      },
    },
    assembling: {
      entry: [
        { type: 'publish', params: ({ context }) => turnEvent(context, 'assembling') },
        // Usually appended as a new message; for re-attached subtasks, placed after the calls (the
        // log then gets the whole conversation again, as a compaction would give it).
        // Subtasks answer in any order; the model gets every result in the order it made the calls.
        assign({ results: ({ context }) => inCallOrder(context.results, context.pending) }),
        { type: 'publish', params: ({ context }) => resultsEvent(context) },
        assign({ messages: ({ context }) => insertToolResults(context.messages, context.results).messages, pending: [], results: [], index: 0 }),
      ],
      always: 'checkingContext',
    },
    done: { type: 'final', entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'done') } },
    error: { type: 'final', entry: { type: 'publish', params: ({ context }) => turnEvent(context, 'error') } },
  },
  output: ({ context }) => ({
    status: context.error ? 'error' : 'done',
    stopReason: context.stopReason,
    messages: context.messages,
    error: context.error,
    usage: context.usage,
    costUsd: context.costUsd,
    compactionFailures: context.compactionFailures,
  }),
});

function lastText(message: ConversationMessage | undefined): string {
  if (!message) return '';
  return message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
}

/** What the model is told when a Stop hook sends it back to work (Claude Code's wording). */
function stopFeedback(reason: string): string {
  return `Stop hook feedback:\n${reason}`;
}

/** Why a run stopped at its max-turns limit ("after 1 model call", "after 50 model calls"). */
function maxTurnsMessage(maxTurns: number): string {
  return `Stopped after ${maxTurns} model ${maxTurns === 1 ? 'call' : 'calls'} (the max-turns limit).`;
}

/** A `turn` event for `state`, with what the state means (its tags in this definition; stateTags.ts). */
function turnEvent(context: TurnContext, state: string): TaskEvent {
  return { ...untaggedTurnEvent(context, state), tags: tagsOfState(turnMachine, state).filter(isTurnStateTag) };
}
