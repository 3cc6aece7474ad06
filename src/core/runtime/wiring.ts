import { fromCallback, fromPromise, type EventObject } from 'xstate';
import type { TaskEvent } from '../../shared/domain/events';
import type { KeelError } from '../../shared/domain/errors';
import type { ConversationMessage, ToolResultBlock, ToolUseBlock } from '../../shared/domain/messages';
import { SUMMARY_INSTRUCTION } from '../context/compaction';
import { taskLockKey, type HeldLock, type LockManager } from '../locks/lockManager';
import { callMachine } from '../machines/call/call.machine';
import { providerStreamActor } from '../machines/stream/actors';
import { streamMachine } from '../machines/stream/stream.machine';
import { taskMachine, type PendingSubtask } from '../machines/task/task.machine';
import { userText } from '../machines/turn/conversation';
import { turnMachine, type ToolRunOutput } from '../machines/turn/turn.machine';
import type { PermissionAsker } from '../permissions/gate';
import type { ModelProvider } from '../providers/types';
import { SecretKeeper } from '../security/secretKeeper';
import { invokeTool, parseToolInput } from '../tools/execute';
import type { ToolRegistry } from '../tools/registry';
import { approvedSubject, decideToolCall, type PermissionDecider } from './permissionCheck';
import { buildSystemPrompt } from './systemPrompt';
import { remoteTurn, type RemoteTurnDeps } from '../workers/remoteTurn';

export type { PermissionDecider };

/**
 * Connects the machine definitions to real actors for one task: the provider, the lock manager,
 * the tools, the permission gate, the event sink. The definitions stay I/O-free; everything that
 * acts is supplied here, by name.
 */
export interface TaskServices {
  taskId: string;
  /** The permission engine. Without one, calls are decided by the mode alone (`decideByMode`). */
  permissions?: PermissionDecider;
  workspace: string;
  ripgrepPath?: string;
  locks: LockManager;
  tools: ToolRegistry;
  asker: PermissionAsker;
  /**
   * Keeps Keel's keys out of tool processes and secrets out of tool results and live output.
   * Default: one holding the keys found in Keel's environment, with nothing passed through.
   */
  secrets?: SecretKeeper;
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
  /**
   * Runs each turn loop in a worker of this pool instead of in this process (the query machine
   * stands in for the turn machine; see docs/workers.md).
   */
  remote?: Pick<RemoteTurnDeps, 'pool' | 'queryParts' | 'waitLimitMs' | 'parentModes' | 'onWorkerLost' | 'overflow'>;
  /** Starts (or finds) the child task for a Task tool call; resolves with its final answer. */
  runSubtask(parentId: string, subtask: PendingSubtask): { result: Promise<{ result: ToolResultBlock; summary: string }>; cancel(): void };
}

/** What the turn loop alone needs (a worker runs it without the task machine around it). */
export type TurnServices = Omit<TaskServices, 'createProvider' | 'reconstruct' | 'runSubtask'>;

/**
 * The turn machine with its real actors: the provider stream under the call machine and the
 * task lock, the system prompt, compaction, the permission decision and the tools. Shared by the
 * task machine (in-process) and the worker process (src/core/workers/workerMain.ts).
 */
export function wireTurnLoop(services: TurnServices, secrets: SecretKeeper, getProvider: () => ModelProvider) {
  const publish = (_: unknown, event: TaskEvent | null) => {
    if (event) services.publish(event);
  };
  // Requests of this task still winding down after an abort; the lock waits for them.
  const inflight = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };
  const stream = streamMachine.provide({ actors: { providerStream: providerStreamActor(getProvider, track, (e) => services.publish(e)) }, actions: { publish } });
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

  return turnMachine.provide({
    actors: {
      modelCall,
      prepareSystemPrompt: fromPromise(async ({ input }) => ({
        system: buildSystemPrompt({ workspace: services.workspace, date: new Date(), mode: input.mode }),
        tools: services.tools.definitions(),
      })),
      summarize: fromPromise(({ input, signal }) =>
        services.locks.runExclusive(taskLockKey(input.taskId), () => summarize(getProvider(), input.taskId, input.model, input.system, input.messages, signal), { signal }),
      ),
      checkPermission: fromPromise(({ input, signal }) => decideToolCall(services, { taskId: input.taskId, call: input.call, mode: input.mode }, signal)),
      runTool: fromPromise(({ input, signal }) => runTool(services, secrets, input.taskId, input.call, signal)),
    },
    actions: { publish },
  });
}

export function wireTaskMachine(services: TaskServices) {
  const secrets = services.secrets ?? SecretKeeper.fromEnvironment(process.env);
  let provider: ModelProvider | null = null;
  const getProvider = (): ModelProvider => {
    if (!provider) throw new Error('provider not initialised');
    return provider;
  };
  const publish = (_: unknown, event: TaskEvent | null) => {
    if (event) services.publish(event);
  };
  // With a worker pool the turn loop runs in a worker; the query machine stands in for it here.
  const remote = services.remote;
  const turnLoop = remote
    ? // The query machine takes the turn machine's place: the same input (TurnInput), the same
      // output (TurnOutput), the same events from the task (CANCEL, SET_MODE, SUBTASK_RESULT), and
      // it sends the task the same SUBTASK_STARTED; the model-based tests hold it to that.
      (remoteTurn({ ...remote, asker: services.asker, publish: services.publish, ...(services.durable ? { durable: services.durable } : {}) }) as unknown as ReturnType<typeof wireTurnLoop>)
    : wireTurnLoop(services, secrets, getProvider);

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

/**
 * Runs an allowed call. The one place tool output leaves a tool: the live chunks (the UI, the
 * task log) and the result (the model, the log) are redacted here, for every tool, and every
 * process the tool starts gets the keeper's environment.
 */
async function runTool(services: TurnServices, secrets: SecretKeeper, taskId: string, call: ToolUseBlock, signal: AbortSignal): Promise<ToolRunOutput> {
  const parsed = parseToolInput(services.tools, call.name, call.input);
  if (!parsed.ok) return { result: toolResult(call.id, parsed.result.content, true), summary: parsed.result.summary };
  await services.durable?.();
  if (signal.aborted) return { result: toolResult(call.id, 'The tool call was cancelled before it started.', true), summary: 'cancelled' };
  const live = secrets.streamRedactor();
  const publishChunk = (chunk: string) => {
    if (chunk) services.publish({ type: 'tool_output', taskId, id: call.id, chunk });
  };
  const approved = approvedSubject(call);
  const r = await invokeTool(parsed.tool, parsed.input, {
    taskId,
    workspace: services.workspace,
    ...(approved ? { approved } : {}),
    signal,
    locks: services.locks,
    env: secrets.environment(),
    ...(services.ripgrepPath ? { ripgrepPath: services.ripgrepPath } : {}),
    onOutput: (chunk) => publishChunk(live.push(chunk)),
  });
  publishChunk(live.end());
  return { result: toolResult(call.id, secrets.redact(r.content), r.isError), summary: secrets.redact(r.summary) };
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
