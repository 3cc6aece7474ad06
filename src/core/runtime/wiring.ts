import { fromCallback, fromPromise, type EventObject } from 'xstate';
import type { TaskEvent, TaskStatus } from '../../shared/domain/events';
import type { TaskTranscript } from '../../shared/domain/transcript';
import type { KeelError } from '../../shared/domain/errors';
import { toolResult, ZERO_USAGE, type ConversationMessage } from '../../shared/domain/messages';
import { SUMMARY_INSTRUCTION, SUMMARY_MAX_TOKENS } from '../context/compaction';
import { taskLockKey, type HeldLock, type LockManager } from '../locks/lockManager';
import { callMachine } from '../machines/call/call.machine';
import { providerStreamActor } from '../machines/stream/actors';
import { mergeUsage } from '../machines/stream/assembly';
import { streamMachine } from '../machines/stream/stream.machine';
import { taskMachine, type PendingSubtask } from '../machines/task/task.machine';
import { userText } from '../machines/turn/conversation';
import { turnMachine, type Summary, type ToolRunOutput, type ValidatedCall } from '../machines/turn/turn.machine';
import type { PermissionAsker } from '../permissions/gate';
import type { ModelProvider } from '../providers/types';
import { SecretKeeper } from '../security/secretKeeper';
import { invokeTool } from '../tools/execute';
import type { ToolRegistry } from '../tools/registry';
import type { TaskHookPoints } from '../hooks/taskHooks';
import { toolUseOf, wireHookedPermissionMachine } from './hookedPermission';
import { validateToolCall, wirePermissionMachine, type PermissionDecider } from './permissionCheck';
import { phasesOver, preparedRun, wireRunPhases, type RunPhaseServices, type RunPhasesRef } from './runPhases';
import { MEMORY_OFF } from '../memory/settings';
import { NOTHING_APPROVED } from '../trust/items';
import { RUN_PHASES_ID } from '../machines/task/task.machine';
import { buildSystemPrompt } from './systemPrompt';
import type { McpToolSource } from '../mcp/toolSource';
import { runMcpCall } from '../mcp/wiring';
import type { TaskHandle } from './types';
import { remoteTurn, type RemoteTurnDeps } from '../workers/remoteTurn';
import type { TaskCheckpoints } from '../checkpoints/recorder';
import { prepareWrite, withCheckpoints } from './checkpointWiring';
import { keepingReviews } from './reviewWiring';
import type { ReviewedEdit } from '../tools/types';
import type { TurnHost } from './turnHost';
import { errorMessage } from '../../shared/domain/errors';

export type { PermissionDecider };

/** A child task as its parent's `subtask` actor sees it. */
export type SubtaskHandle = Pick<TaskHandle, 'settled' | 'transcript' | 'cancel'>;

/** What one task's machines need from outside: the parties its real actors talk to. */
export interface TaskServices {
  taskId: string;
  /** The permission engine (for a subtask: the engine bounded by its parent, childPermissions.ts). */
  permissions: PermissionDecider;
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
  /**
   * What the run's phases (runtime/runPhases.ts, the task machine's child `runPhases`) use: the
   * instructions files, the memory, the gatekeeper. Their `system` parts follow the base system
   * prompt. Without it, a run's phases only create its provider (through `createProvider`).
   */
  phases?: Omit<RunPhaseServices, 'createProvider' | 'publish'>;
  /**
   * What a settled run recorded is saved (the task machine's `finishing`, once the run's phases
   * are over). Without it, at once.
   */
  recorded?(): Promise<void>;
  /** Lets the task go (its log closed, its lock released): its worker died, or its record failed. */
  release?(): void;
  /** Whether a command's model is used for its run (false: the provider has one model, the demo). Default: true. */
  commandModelApplies?(): boolean;
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
  /** The task's budget: whether a priced request may go (TurnHost.admit). Absent: no budget. */
  admit?: TurnHost['admit'];
  /**
   * The task's checkpoints (src/core/checkpoints): before-images of what tools change, kept
   * before they change it. Absent: none are kept (a task that is not recorded).
   */
  checkpoints?: TaskCheckpoints;
  /**
   * The task's hook points (docs/hooks.md): PreToolUse and PermissionRequest inside the
   * permission machine, PostToolUse after a tool ran, SessionStart and UserPromptSubmit when a run
   * starts, Stop when the answer is complete, PreCompact before summarising. Without it, no hook runs.
   */
  hooks?: TaskHookPoints;
  /** Whether this task was resumed from the store (SessionStart's `source`). */
  resumed?: boolean;
  /**
   * Starts the child task of a Task tool call, or finds it when this task was rebuilt while its
   * child ran (keyed by parent and tool call). May throw (e.g. its record cannot be created).
   */
  startSubtask(subtask: PendingSubtask): SubtaskHandle;
  /**
   * Runs each turn loop in a worker of this pool instead of in this process (the task machine's
   * `running.loop.onWorker`: the query machine, served by this task's own TurnHost; see
   * docs/workers.md).
   */
  remote?: Pick<RemoteTurnDeps, 'pool' | 'queryParts' | 'parentModes' | 'overflow' | 'mcp' | 'hooks'>;
}

/**
 * What a turn loop needs besides its host (turnHost.ts): where it works and with what — the same
 * in the host's process and in a worker, which builds it from the query it was given.
 */
export interface TurnEnvironment {
  taskId: string;
  workspace: string;
  ripgrepPath?: string;
  /** One per process: the task lock and the file locks of its tools. */
  locks: LockManager;
  tools: ToolRegistry;
  /** The task's decision for a tool call (a sub-agent's: bounded by its ancestors, childPermissions.ts). */
  permissions: PermissionDecider;
  /** Keeps Keel's keys out of tool processes, and secrets out of what tools return. */
  secrets: SecretKeeper;
  /** The task's hook points (docs/hooks.md), run where the turn runs. Without it, no hook runs. */
  hooks?: TaskHookPoints;
  /** The current run's own system parts (instructions files, memories, hooks' context), after the base prompt. */
  runSystem(): string[];
  /** The run's provider. */
  provider(): ModelProvider;
  /**
   * The task's checkpoints, kept where the tools run (a worker opens the task's checkpoints
   * folder itself: content addressing keeps its writes and the host's apart). Absent: none kept.
   */
  checkpoints?: TaskCheckpoints;
}

/**
 * The turn machine with its real actors: the provider stream under the call machine and the
 * task lock, the system prompt, compaction, input validation, the permission machine (the
 * turn's invoked child) and the tools; what it needs of its task's owner is `host`. The task
 * machine runs it in the host's process; a worker runs it for the host (workers/workerMain.ts):
 * one turn loop, wherever it runs.
 */
export function wireTurnLoop(env: TurnEnvironment, host: TurnHost) {
  const hooks = env.hooks;
  const secrets = env.secrets;
  const getProvider = env.provider;
  // Edits the person reviewed change by change, by tool call: the tool writes what was allowed.
  const reviews = new Map<string, ReviewedEdit>();
  // The helpers below take what they need of both; the asker keeps each reviewed edit aside.
  const services = { ...env, ...host, asker: keepingReviews(host.asker, reviews) };
  const publish = (_: unknown, event: TaskEvent | null) => {
    if (event) host.publish(event);
  };
  // Requests of this task still winding down after an abort; the lock waits for them.
  const inflight = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };
  const stream = streamMachine.provide({ actors: { providerStream: providerStreamActor(getProvider, track, (e) => host.publish(e)) }, actions: { publish } });
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
        system: [
          ...buildSystemPrompt({ workspace: services.workspace, date: new Date(), mode: input.mode }),
          // The run's instructions files and memories, then what hooks added for it.
          ...env.runSystem(),
        ],
        tools: [...services.tools.definitions(), ...(services.mcp ? await services.mcp.toolDefinitions() : [])],
      })),
      summarize: fromPromise(async ({ input, signal }) => {
        await hooks?.preCompact('auto');
        const summary = await services.locks.runExclusive(taskLockKey(input.taskId), () => summarize(getProvider(), input.taskId, input.model, input.system, input.messages, signal), { signal });
        await hooks?.postCompact('auto', summary.text);
        return summary;
      }),
      validateToolCall: fromPromise(async ({ input }) => validateToolCall(services, input.call)),
      permission: hooks ? wireHookedPermissionMachine(services, hooks) : wirePermissionMachine(services),
      runTool: fromPromise(async ({ input, signal }) => {
        const started = performance.now();
        const reviewed = reviews.get(input.call.id);
        reviews.delete(input.call.id);
        const out = await runTool(services, secrets, input.taskId, input.call, signal, reviewed);
        if (!hooks || signal.aborted) return out;
        return { ...out, result: await hooks.postToolUse(toolUseOf(input.call), out.result, Math.round(performance.now() - started), signal) };
      }),
      callMcpTool: fromPromise(({ input, signal }) =>
        withCheckpoints(services, input.taskId, input.call.id, { kind: 'command' }, () => runMcpCall({ ...services, redact: (t) => secrets.redact(t) }, input.taskId, input.call, signal)),
      ),
      stopHook: fromPromise(async ({ input }) => ({ continueWith: hooks ? await hooks.stop(input.lastMessage, input.continuations) : null })),
      admit: fromPromise(async ({ input }) => (host.admit ? host.admit(input) : null)),
    },
    actions: {
      publish,
      // The owner starts the sub-agent; without a startSubtask of its own, that is the turn's parent (the task machine).
      ...(host.startSubtask ? { startSubtask: (_: unknown, call: { toolCallId: string; description: string; prompt: string }) => host.startSubtask!(call) } : {}),
    },
  });
}

/**
 * Connects the machine definitions to real actors for one task: the provider, the lock manager,
 * the tools, the permission engine and asker, the subtask starter, the event sink. The
 * definitions stay I/O-free; everything that acts is supplied here, by name. With `remote`, the
 * turn loop runs in a worker and the query machine takes its place in the task machine.
 */
export function wireTaskMachine(services: TaskServices) {
  const hooks = services.hooks;
  const secrets = services.secrets ?? SecretKeeper.fromEnvironment(process.env);
  let provider: ModelProvider | null = null;
  /** The current run's instructions files and memories (set when it starts). */
  let runSystem: string[] = [];
  const getProvider = (): ModelProvider => {
    if (!provider) throw new Error('provider not initialised');
    return provider;
  };
  const publish = (_: unknown, event: TaskEvent | null) => {
    if (event) services.publish(event);
  };
  // The local TurnHost: this process's recorder, asker and MCP hub. A worker's turn is served by it too.
  const host: TurnHost = {
    publish: services.publish,
    asker: services.asker,
    ...(services.durable ? { durable: services.durable } : {}),
    ...(services.mcp ? { mcp: services.mcp } : {}),
    ...(services.admit ? { admit: services.admit } : {}),
  };
  // The run's instructions files and memories, then what its SessionStart and UserPromptSubmit hooks (run here) added.
  const systemOfRun = () => [...runSystem, ...(hooks?.contextForRun() ?? [])];
  const turnLoop = wireTurnLoop(
    {
      taskId: services.taskId,
      workspace: services.workspace,
      ...(services.ripgrepPath ? { ripgrepPath: services.ripgrepPath } : {}),
      locks: services.locks,
      tools: services.tools,
      permissions: services.permissions,
      secrets,
      ...(hooks ? { hooks } : {}),
      runSystem: systemOfRun,
      provider: getProvider,
      ...(services.checkpoints ? { checkpoints: services.checkpoints } : {}),
    },
    host,
  );
  const remote = services.remote;
  const runPhases = wireRunPhases(
    services.phases
      ? { ...services.phases, createProvider: services.createProvider, publish: services.publish }
      : {
          taskId: services.taskId,
          workspace: services.workspace,
          subtask: false,
          memory: () => null,
          settings: () => MEMORY_OFF,
          secrets,
          trust: NOTHING_APPROVED,
          locks: services.locks,
          createProvider: services.createProvider,
          providerKind: () => '',
          model: () => '',
          conversation: () => [],
          publish: services.publish,
          charge: () => undefined,
          log: () => undefined,
          instructions: false,
        },
  );

  return taskMachine.provide({
    actors: {
      turnLoop,
      // The task's runs on a worker (its input says `runner: 'worker'`): the query machine, served by this host.
      ...(remote ? { workerTurn: remoteTurn({ ...remote, host, queryParts: (turn) => ({ ...remote.queryParts(turn), runSystem: systemOfRun() }) }) } : {}),
      reconstruct: fromPromise(async () => {
        if (!services.reconstruct) throw new Error('this task has no stored log to rebuild it from');
        return services.reconstruct();
      }),
      // The run's phases (the task machine's child, spawned as this starts) up to the runner, then the hooks.
      initialize: fromPromise(async ({ input, system }) => {
        const prepared = await preparedRun(phasesOf(system));
        provider = prepared.provider;
        runSystem = prepared.system;
        if (!hooks) return;
        await hooks.sessionStart(services.resumed ? 'resume' : 'startup', provider.label);
        if (input.submitted === null) return;
        const verdict = await hooks.userPromptSubmit(input.submitted);
        if (verdict) throw { code: 'blocked_by_hook', message: `A UserPromptSubmit hook blocked this prompt: ${verdict.blocked}`, retryable: false } satisfies KeelError;
      }),
      // The child's answer goes straight back to this task's machine as SUBTASK_DONE; the task
      // hands it to its turn. Leaving `waitingForSubtask` (a cancel) cancels the child.
      subtask: fromCallback<EventObject, { parentId: string; subtask: PendingSubtask }>(({ input, sendBack }) => {
        const { toolCallId } = input.subtask;
        let live = true;
        let child: SubtaskHandle | null = null;
        let answer: Promise<ToolRunOutput>;
        try {
          const started = services.startSubtask(input.subtask);
          child = started;
          answer = started.settled().then((done) => subtaskAnswer(toolCallId, done.status, started.transcript()));
        } catch (err) {
          // The model is told, and the parent goes on.
          answer = Promise.resolve({ result: toolResult(toolCallId, `The subtask could not be started: ${errorMessage(err)}`, true), summary: 'subtask not started' });
        }
        let answered = false;
        void answer.then((r) => {
          answered = true;
          if (live) sendBack({ type: 'SUBTASK_DONE', toolCallId, result: r.result, summary: r.summary });
        });
        return () => {
          live = false;
          // Only a child still running is cancelled (one that answered is let go as it is).
          if (!answered) child?.cancel();
        };
      }),
      // The run's phases were told how it ended (the machine's `endPhases`): their end, then the record.
      finishRun: fromPromise(async ({ system }) => {
        await phasesOver(phasesOf(system));
        await services.recorded?.();
      }),
      runPhases,
    },
    actions: {
      publish,
      release: () => services.release?.(),
    },
    guards: { commandModelApplies: () => services.commandModelApplies?.() ?? true },
  });
}

/**
 * Runs an allowed call. The one place tool output leaves a tool: the live chunks (the UI, the
 * task log) and the result (the model, the log) are redacted here, for every tool, and every
 * process the tool starts gets the keeper's environment.
 */
async function runTool(services: TurnEnvironment & TurnHost, secrets: SecretKeeper, taskId: string, call: ValidatedCall, signal: AbortSignal, reviewed?: ReviewedEdit): Promise<ToolRunOutput> {
  const tool = services.tools.get(call.tool);
  if (!tool) return { result: toolResult(call.id, `Error: unknown tool "${call.tool}"`, true), summary: `unknown tool ${call.tool}` };
  // A Write's checkpoint is taken while the log is made durable (both are fsyncs): the tool's
  // own checkpoint then finds the file as kept and adds nothing (checkpointWiring.ts).
  await Promise.all([services.durable?.(), prepareWrite(services, call, reviewed?.review.content)]);
  if (signal.aborted) return { result: toolResult(call.id, 'The tool call was cancelled before it started.', true), summary: 'cancelled' };
  const live = secrets.streamRedactor();
  // Nothing of a cancelled call is published (the task may have ended: no event after its `done`).
  const publishChunk = (chunk: string) => {
    if (chunk && !signal.aborted) services.publish({ type: 'tool_output', taskId, id: call.id, chunk });
  };
  // The subject the permission machine decided on: Write/Edit refuse when the target now leads
  // elsewhere (a symlink created or changed since the decision, writeTarget.ts).
  const s = call.subject;
  const kind = s.kind === 'execute' ? 'command' : s.kind === 'write' ? 'write' : null;
  return withCheckpoints(services, taskId, call.id, kind ? { kind, subject: s } : null, async (checkpoints) => {
    const r = await invokeTool(tool, call.input, {
      taskId,
      workspace: services.workspace,
      approved: s,
      signal,
      locks: services.locks,
      env: secrets.environment(),
      ...(services.ripgrepPath ? { ripgrepPath: services.ripgrepPath } : {}),
      searchExclusions: (root) => services.permissions.searchExclusions(root),
      ...(checkpoints ? { checkpoints } : {}),
      ...(reviewed ? { reviewed } : {}),
      onOutput: (chunk) => publishChunk(live.push(chunk)),
      todos: (items) => services.publish({ type: 'todos', taskId, todos: items }),
    });
    publishChunk(live.end());
    return { result: toolResult(call.id, secrets.redact(r.content), r.isError), summary: secrets.redact(r.summary) };
  });
}

/** One summarisation call: the summary, and the tokens the server reported for it (they are billed). */
async function summarize(provider: ModelProvider, taskId: string, model: string, system: string[], messages: ConversationMessage[], signal: AbortSignal): Promise<Summary> {
  let text = '';
  let usage = ZERO_USAGE;
  for await (const e of provider.stream({ model, system, messages: [...messages, userText(SUMMARY_INSTRUCTION)], tools: [], maxTokens: SUMMARY_MAX_TOKENS, taskId }, signal)) {
    if (e.type === 'message_start') usage = mergeUsage(usage, e.message.usage);
    if (e.type === 'message_delta') usage = mergeUsage(usage, e.usage);
    if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    if (e.type === 'provider_error') throw new Error(e.error.message);
  }
  if (!text.trim()) throw new Error('empty summary');
  return { text, usage };
}

/** A settled child's answer to its parent's Task call: its last assistant text. */
function subtaskAnswer(toolCallId: string, status: TaskStatus, transcript: TaskTranscript): ToolRunOutput {
  const answer = lastAssistantText(transcript);
  const ok = status === 'completed';
  const content = ok ? answer || '(the subtask finished without an answer)' : `The subtask ended ${status}: ${answer}`;
  return { result: toolResult(toolCallId, content, !ok), summary: `subtask ${status}` };
}

function lastAssistantText(t: TaskTranscript): string {
  for (let i = t.items.length - 1; i >= 0; i--) {
    const it = t.items[i]!;
    if (it.kind === 'assistant' && it.text) return it.text;
  }
  return '';
}

/** The current run's phases: the task machine's child, found by its systemId in the task's actor system. */
function phasesOf(system: { get(id: string): unknown }): RunPhasesRef | undefined {
  return system.get(RUN_PHASES_ID) as RunPhasesRef | undefined;
}
