import { randomUUID } from 'node:crypto';
import { createActor, fromCallback, fromPromise, toPromise, type EventObject } from 'xstate';
import type { TaskEvent } from '../../shared/domain/events';
import type { KeelError } from '../../shared/domain/errors';
import type { ConversationMessage, ToolResultBlock, ToolUseBlock } from '../../shared/domain/messages';
import { SUMMARY_INSTRUCTION } from '../context/compaction';
import { taskLockKey, type HeldLock, type LockManager } from '../locks/lockManager';
import { callMachine } from '../machines/call/call.machine';
import { providerStreamActor } from '../machines/stream/actors';
import { streamMachine } from '../machines/stream/stream.machine';
import { permissionMachine } from '../machines/permission/permission.machine';
import { taskMachine, type PendingSubtask } from '../machines/task/task.machine';
import { userText } from '../machines/turn/conversation';
import { turnMachine, type PermissionOutcome, type ToolRunOutput } from '../machines/turn/turn.machine';
import { decideByMode, type PermissionAsker } from '../permissions/gate';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import { suggestRules } from '../permissions/persist';
import type { ModelProvider } from '../providers/types';
import { invokeTool, parseToolInput } from '../tools/execute';
import type { ToolRegistry } from '../tools/registry';
import { buildSystemPrompt } from './systemPrompt';
import type { McpToolSource } from '../mcp/toolSource';
import { mcpCallSubject, runMcpCall } from './mcpWiring';
import type { PermissionMode } from './types';

/**
 * Connects the machine definitions to real actors for one task: the provider, the lock manager,
 * the tools, the permission gate, the event sink. The definitions stay I/O-free; everything that
 * acts is supplied here, by name.
 */
/** What the runtime asks of the permission engine (src/core/permissions): one decision per call. */
export interface PermissionDecider {
  /** Never throws. */
  decide(call: PermissionCall, mode: PermissionMode): Promise<EngineDecision>;
}

export interface TaskServices {
  taskId: string;
  /** The permission engine. Without one, calls are decided by the mode alone (`decideByMode`). */
  permissions?: PermissionDecider;
  workspace: string;
  ripgrepPath?: string;
  locks: LockManager;
  tools: ToolRegistry;
  asker: PermissionAsker;
  /** Creates the provider when the task initialises; a KeelError (e.g. no key) fails initialisation. */
  createProvider(): Promise<ModelProvider | KeelError>;
  publish(event: TaskEvent): void;
  /**
   * Resolves once every event published so far is durable (the task's log fsynced). A tool runs
   * only after it, so a crash during a tool never loses the record that the tool was started.
   * Optional: without a store there is nothing to wait for.
   */
  durable?(): Promise<void>;
  /** Rebuilds the conversation of an interrupted task from its log (the `reconstructing` state). */
  reconstruct?(): Promise<ConversationMessage[]>;
  /** MCP servers' tools (`mcp__server__tool`), shared by the host's tasks. */
  mcp?: McpToolSource;
  /** Starts (or finds) the child task for a Task tool call; resolves with its final answer. */
  runSubtask(parentId: string, subtask: PendingSubtask): { result: Promise<{ result: ToolResultBlock; summary: string }>; cancel(): void };
}

export function wireTaskMachine(services: TaskServices) {
  let provider: ModelProvider | null = null;
  const getProvider = (): ModelProvider => {
    if (!provider) throw new Error('provider not initialised');
    return provider;
  };
  const publish = (_: unknown, event: TaskEvent | null) => {
    if (event) services.publish(event);
  };

  // Requests of this task still winding down after an abort; the lock waits for them.
  const inflight = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };
  const stream = streamMachine.provide({ actors: { providerStream: providerStreamActor(getProvider, track) }, actions: { publish } });
  const modelCall = callMachine.provide({
    actors: {
      stream,
      holdTaskLock: fromCallback<EventObject, { taskId: string; timeoutMs: number }>(({ input, sendBack }) => {
        const controller = new AbortController();
        let held: HeldLock | null = null;
        services.locks.acquire(taskLockKey(input.taskId), { timeoutMs: input.timeoutMs, signal: controller.signal }).then(
          (lock) => {
            if (controller.signal.aborted) return lock.release();
            held = lock;
            sendBack({ type: 'LOCK_ACQUIRED' });
          },
          (err: Error) => {
            if (!controller.signal.aborted) sendBack({ type: 'LOCK_FAILED', reason: err.message });
          },
        );
        return () => {
          controller.abort();
          const lock = held;
          if (lock) void Promise.allSettled([...inflight]).then(() => lock.release());
        };
      }),
    },
    guards: { isDuplicateContinuation: (_, p) => services.locks.hasContinuation(taskLockKey(p.taskId), p.key) },
    actions: {
      registerContinuation: (_, p) => void services.locks.beginContinuation(taskLockKey(p.taskId), p.key),
      countDuplicate: () => services.locks.recordDuplicate(),
    },
  });

  const turnLoop = turnMachine.provide({
    actors: {
      modelCall,
      prepareSystemPrompt: fromPromise(async ({ input }) => ({
        system: buildSystemPrompt({ workspace: services.workspace, date: new Date(), mode: input.mode }),
        tools: [...services.tools.definitions(), ...(services.mcp ? await services.mcp.toolDefinitions() : [])],
      })),
      summarize: fromPromise(({ input, signal }) =>
        services.locks.runExclusive(taskLockKey(input.taskId), () => summarize(getProvider(), input.taskId, input.model, input.system, input.messages, signal), { signal }),
      ),
      checkPermission: fromPromise(({ input, signal }) => checkPermission(services, input.taskId, input.call, input.mode, signal)),
      runTool: fromPromise(({ input, signal }) => runTool(services, input.taskId, input.call, signal)),
      callMcpTool: fromPromise(({ input, signal }) => runMcpCall(services, input.taskId, input.call, signal)),
    },
    actions: { publish },
  });

  return taskMachine.provide({
    actors: {
      turnLoop,
      reconstruct: fromPromise(async () => {
        if (!services.reconstruct) throw new Error('this task has no stored log to rebuild it from');
        return services.reconstruct();
      }),
      initialize: fromPromise(async () => {
        const created = await services.createProvider();
        if ('stream' in created) provider = created;
        else throw created;
      }),
      subtask: fromCallback<EventObject, { parentId: string; subtask: PendingSubtask }>(({ input, sendBack }) => {
        const run = services.runSubtask(input.parentId, input.subtask);
        let live = true;
        run.result.then((r) => {
          if (live) sendBack({ type: 'SUBTASK_DONE', toolCallId: input.subtask.toolCallId, result: r.result, summary: r.summary });
        });
        return () => {
          live = false;
          run.cancel();
        };
      }),
    },
    actions: { publish },
  });
}

function modeOnly(workspace: string): PermissionDecider {
  return { decide: async (call, mode) => decideByMode(mode, call.subject, call.readOnly, workspace) };
}

/**
 * Validates the call's input (an invalid call is answered without asking anyone), then runs the
 * permission machine for it: the engine's rules and mode, and the host's prompt when it asks.
 * Stopping (cancel) stops the machine, which withdraws a pending prompt.
 */
async function checkPermission(services: TaskServices, taskId: string, call: ToolUseBlock, mode: PermissionMode, signal: AbortSignal): Promise<PermissionOutcome> {
  const mcp = mcpCallSubject(services.mcp, call);
  if (mcp && !mcp.ok) return { decision: 'invalid', result: toolResult(call.id, mcp.message, true) };
  const parsed = mcp ? { ok: true as const, input: call.input, tool: { subject: () => mcp.subject, readOnly: mcp.readOnly } } : parseToolInput(services.tools, call.name, call.input);
  if (!parsed.ok) return { decision: 'invalid', result: toolResult(call.id, parsed.result.content, true) };
  const subject = parsed.tool.subject(parsed.input as never, { workspace: services.workspace });
  const decider = services.permissions ?? modeOnly(services.workspace);
  const machine = permissionMachine.provide({
    actors: {
      evaluate: fromPromise(({ input }) => decider.decide(input.call, input.mode)),
      askUser: fromPromise(({ input, signal: askSignal }) => {
        let suggestedRules: string[] = [];
        try {
          suggestedRules = suggestRules({ tool: input.tool, subject: input.subject, workspace: services.workspace });
        } catch {
          // A suggestion is a convenience; without one the user can still allow once.
        }
        return services.asker.ask({ ...input, suggestedRules }, askSignal);
      }),
    },
    actions: { publish: (_: unknown, e: TaskEvent | null) => e && services.publish(e) },
  });
  const actor = createActor(machine, {
    input: { taskId, requestId: randomUUID(), toolCallId: call.id, tool: call.name, input: parsed.input, subject, readOnly: parsed.tool.readOnly, mode },
  });
  const stop = () => actor.stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    actor.start();
    const outcome = await toPromise(actor);
    // An allowed MCP call goes to the turn's mcpCall state, not executingTool.
    return mcp && outcome.decision === 'allow' ? { ...outcome, mcp: true } : outcome;
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

async function runTool(services: TaskServices, taskId: string, call: ToolUseBlock, signal: AbortSignal): Promise<ToolRunOutput> {
  const parsed = parseToolInput(services.tools, call.name, call.input);
  if (!parsed.ok) return { result: toolResult(call.id, parsed.result.content, true), summary: parsed.result.summary };
  await services.durable?.();
  if (signal.aborted) return { result: toolResult(call.id, 'The tool call was cancelled before it started.', true), summary: 'cancelled' };
  const r = await invokeTool(parsed.tool, parsed.input, {
    taskId,
    workspace: services.workspace,
    signal,
    locks: services.locks,
    ...(services.ripgrepPath ? { ripgrepPath: services.ripgrepPath } : {}),
    onOutput: (chunk) => services.publish({ type: 'tool_output', taskId, id: call.id, chunk }),
  });
  return { result: toolResult(call.id, r.content, r.isError), summary: r.summary };
}

async function summarize(provider: ModelProvider, taskId: string, model: string, system: string[], messages: ConversationMessage[], signal: AbortSignal): Promise<string> {
  let text = '';
  for await (const e of provider.stream({ model, system, messages: [...messages, userText(SUMMARY_INSTRUCTION)], tools: [], maxTokens: 4096, taskId }, signal)) {
    if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    if (e.type === 'provider_error') throw new Error(e.error.message);
  }
  if (!text.trim()) throw new Error('empty summary');
  return text;
}

function toolResult(id: string, content: string, isError: boolean): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) };
}
