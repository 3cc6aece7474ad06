import type { Usage } from '../../shared/domain/messages';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { createActor, type Actor } from 'xstate';
import type { KeelError } from '../../shared/domain/errors';
import { ZERO_USAGE } from '../../shared/domain/messages';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { LockManager } from '../locks/lockManager';
import type { TurnInput, TurnOutput } from '../machines/turn/types';
import type { PermissionAsker } from '../permissions/gate';
import { loadProvider } from '../providers/load';
import type { ModelProvider } from '../providers/types';
import { boundedByAncestors } from '../runtime/childPermissions';
import { allowingLoopProgress } from '../runtime/loopPermission';
import { lazyEngine } from '../runtime/permissionDecider';
import type { TurnHost } from '../runtime/turnHost';
import { wireTurnLoop, type PermissionDecider } from '../runtime/wiring';
import { TaskCheckpoints } from '../checkpoints/recorder';
import { Sandbox } from '../sandbox/sandbox';
import { SecretKeeper } from '../security/secretKeeper';
import { createBashTool } from '../tools/bash';
import { builtinTools, createToolRegistry, type ToolRegistry } from '../tools/registry';
import type { AnyTool } from '../tools/types';
import { MessageChannel } from './channel';
import { IpcMcpToolSource } from '../mcp/onWorkers/remote';
import { DEFAULT_MAX_LINE_BYTES, PROTOCOL_VERSION, toHost, toWorker, type QueryParams, type QueryResult, type RuntimeConfig, type ToHost, type ToWorker } from './protocol';
import { envelopeSchema, RpcEndpoint, type Envelope } from './rpc';
import { WORKER_ONLY_ENV } from './spawnWorker';
import { workerHookPoints } from './workerHooks';
import { narrowedBy } from '../commands/narrowing';
import { createSkillTool, type SkillRef } from '../tools/skill';
import { WorkerTrust } from './workerTrust';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The worker process: says `ready` over its channel to the host (the socket it inherited on fd 3,
 * spawnWorker.ts: no other process can reach it), and answers one `query` at a time — one run of
 * a task's turn loop, wired by the same `wireTurnLoop` as in the host's process (provider, tools,
 * input validation, the permission machine as the turn's child, the hooks the host approved,
 * cost and usage counted in the turn), with a TurnHost (runtime/turnHost.ts) whose every call is a
 * message of the protocol (protocol.ts): the turn's events, the permission prompts (by their id),
 * the durability barrier before a tool, the Task calls, the MCP tools. The worker's own
 * environment holds no key: the provider's key comes with the query, and tool processes get the
 * secret keeper's environment as in the host.
 *
 * One lock manager and one sandbox (per sandbox settings) for the worker's whole life, as a host
 * keeps one per runtime (issue 25): not one per query.
 *
 * A connection that breaks the protocol, or closes, ends the process: the host replaces it.
 *
 * Stopping — on `shutdown`, when the connection closes or breaks (the host is gone, whatever
 * ended it), or when `signal` aborts (the process got SIGTERM) — cancels the running query first:
 * its commands get SIGTERM, then SIGKILL for what is left of their process groups
 * (processRunner.ts), and the turn ends. `runWorker` resolves once that query has settled, or
 * after `STOP_GRACE_MS` at the latest; the caller then ends the process, killing the groups of
 * any command still running (`killRunningProcessGroups`), so no command outlives its worker.
 */
export interface WorkerArgs {
  /** The worker's end of its channel to the host (the inherited fd 3, opened by the caller). */
  channel: Duplex;
  workerId: string;
  /** Aborting stops the worker as if its host had closed the connection. */
  signal?: AbortSignal;
}

/**
 * How long a stopping worker waits for its cancelled query to settle: above processRunner's
 * SIGTERM → SIGKILL grace (1 s), under the host's own grace for a graceful shutdown and under
 * `keel run`'s on a signal (3 s).
 */
export const STOP_GRACE_MS = 2500;

/** One query being answered. */
interface Answering {
  queryId: string;
  /** Settles once the turn ended (its result, or the failure that kept it from running). */
  result: Promise<QueryResult>;
  setMode(mode: PermissionMode, parentModes: PermissionMode[]): void;
  subtaskResult(p: { toolCallId: string; result: Parameters<typeof subtaskEvent>[1]; summary: string }): void;
  cancel(): void;
}

/** Runs until the host says `shutdown` or the connection ends; resolves with the exit code. */
export function runWorker(args: WorkerArgs): Promise<number> {
  for (const name of (process.env[WORKER_ONLY_ENV] ?? '').split(',').filter(Boolean)) delete process.env[name];
  delete process.env[WORKER_ONLY_ENV];
  const started = Date.now();
  const kept = new WorkerResources();
  let processed = 0;
  let current: Answering | null = null;
  return new Promise((resolve) => {
    let stopping = false;
    /** False once told to stop or shut down: a query that arrives then is refused. */
    let accepting = true;
    /** Cancels the running query and resolves once it settled (at most STOP_GRACE_MS); once. */
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      accepting = false;
      void settleCurrent().then(() => resolve(code));
    };
    const settleCurrent = (): Promise<void> => {
      const q = current;
      if (!q) return Promise.resolve();
      q.cancel();
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([q.result.then(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, STOP_GRACE_MS)))]).finally(() => clearTimeout(timer));
    };
    if (args.signal?.aborted) {
      resolve(0);
      return;
    }
    // Told to stop by a signal, not by the host: the host hears nothing more of the query (not an
    // answer it would take for its own cancel), only the exit, so the task ends interrupted.
    let silent = false;
    args.signal?.addEventListener(
      'abort',
      () => {
        silent = true;
        stop(0);
      },
      { once: true },
    );
    const channel = new MessageChannel<Envelope, Envelope>(args.channel, {
      schema: envelopeSchema,
      maxLineBytes: DEFAULT_MAX_LINE_BYTES,
      onMessage: (m) => rpc.receive(m),
      onBroken: (reason) => {
        process.stderr.write(`keel worker ${args.workerId}: the host broke the protocol: ${reason}\n`);
        stop(1);
      },
      onClose: () => stop(0),
    });
    const rpc: RpcEndpoint<ToWorker, ToHost> = new RpcEndpoint<ToWorker, ToHost>(
      (m) => !silent && channel.send(m),
      toWorker,
      toHost,
      {
        query: (params, { signal }) => {
          if (!accepting) return Promise.reject(new Error('this worker is stopping'));
          if (current) return Promise.reject(new Error(`this worker is already running query ${current.queryId}`));
          const q = answer(params, rpc, kept);
          current = q;
          signal.addEventListener('abort', () => q.cancel(), { once: true });
          return q.result.finally(() => {
            if (current === q) current = null;
            processed++;
          });
        },
        health: async () => ({ uptime: Date.now() - started, queriesProcessed: processed, rssBytes: process.memoryUsage().rss }),
        // Answered once the query is stopped (its commands' groups gone), so the host's grace
        // period covers the commands too; the connection's close then ends the worker.
        shutdown: async () => {
          accepting = false;
          await settleCurrent();
          setImmediate(() => channel.end());
          return {};
        },
        setMode: (p) => {
          if (current?.queryId === p.queryId) current.setMode(p.mode, p.parentModes);
        },
        subtaskResult: (p) => {
          if (current?.queryId === p.queryId) current.subtaskResult(p);
        },
      },
      (reason) => {
        process.stderr.write(`keel worker ${args.workerId}: the host broke the protocol: ${reason}\n`);
        channel.destroy();
        stop(1);
      },
    );
    rpc.notify('ready', { pid: process.pid, protocol: PROTOCOL_VERSION });
  });
}

/** What a worker keeps for its whole life: one lock manager; one sandbox and tool set, one permission engine, per settings. */
class WorkerResources {
  readonly locks = new LockManager();
  private readonly toolSets = new Map<string, AnyTool[]>();
  private readonly engines = new Map<string, { decider: PermissionDecider; trust: WorkerTrust }>();

  /**
   * The built-in tools, Bash in this sandbox (its network proxy starts on first use and lives as
   * long as the worker), and a Skill tool that loads only the skills this query carried (the host
   * found and approved them).
   */
  tools(runtime: RuntimeConfig, skills: readonly SkillRef[]): ToolRegistry {
    const key = JSON.stringify(runtime.sandbox);
    let tools = this.toolSets.get(key);
    if (!tools) {
      const sandbox = new Sandbox(runtime.sandbox);
      tools = builtinTools.map((t) => (t.name === 'Bash' ? (createBashTool({ sandbox }) as AnyTool) : t));
      this.toolSets.set(key, tools);
    }
    return createToolRegistry([...tools, createSkillTool(() => skills) as AnyTool]);
  }

  /**
   * The permission engine for a workspace and its settings: its shell parser (wasm) loads once, not
   * on every query. It knows the host's approvals as this query carried them (a change makes it
   * re-read its settings).
   */
  engine(runtime: RuntimeConfig): { decider: PermissionDecider; trust: WorkerTrust } {
    const key = JSON.stringify([runtime.workspace, runtime.settingsFiles, runtime.sandbox.enabled]);
    let engine = this.engines.get(key);
    if (!engine) {
      const trust = new WorkerTrust();
      const { workspace, settingsFiles } = runtime;
      const decider = lazyEngine({ workspace, settingsFiles, sandbox: { enabled: runtime.sandbox.enabled }, trust, protectedFiles: () => trust.protectedFiles });
      this.engines.set(key, (engine = { decider, trust }));
    }
    engine.trust.update(runtime.trust);
    return engine;
  }
}

/** Starts one query's turn loop; its `result` settles once, when the turn ended. */
function answer(q: QueryParams, rpc: RpcEndpoint<ToWorker, ToHost>, kept: WorkerResources): Answering {
  const { runtime, queryId } = q;
  const secrets = new SecretKeeper({ passThrough: runtime.passEnv, values: [...runtime.heldSecrets, q.provider.apiKey], extra: () => runtime.env ?? {} });
  let parentModes = q.parentModes;
  // The task's checkpoints are files in its folder: this process writes its own pack there.
  const checkpoints = q.checkpoints ? new TaskCheckpoints({ dir: q.checkpoints.dir, workspace: runtime.workspace, limits: q.checkpoints.limits }) : undefined;
  // The turn's mode as the host last set it (hooks' `permission_mode`).
  let mode = q.turn.mode;
  let turn: Actor<ReturnType<typeof wireTurnLoop>> | null = null;
  // What arrives while the provider's module loads (the first query's SDK) reaches the turn once it starts.
  const early: TurnEventIn[] = [];
  const toTurn = (e: TurnEventIn) => (turn ? turn.send(e) : early.push(e));
  // Loaded once, for the turn and for the query's prompt hooks.
  const loaded = loadProvider(q.provider);
  const hooks = workerHookPoints(q, {
    host: rpc,
    secrets,
    mode: () => mode,
    stopTurn: () => toTurn({ type: 'CANCEL' }),
    provider: () => loaded.then((p) => ('stream' in p ? p : p.message), (err: unknown) => `the worker could not load the ${q.provider.provider} provider: ${errorMessage(err)}`),
    charge: (usage, costUsd) => toTurn({ type: 'CHARGE', usage, costUsd }),
  });
  const { decider: engine, trust } = kept.engine(runtime);
  // The same exception the host gives a loop iteration (LiveTask): its own progress file.
  const own: PermissionDecider = q.loopProgressFile ? allowingLoopProgress(engine, q.loopProgressFile, runtime.workspace) : engine;
  const asker: PermissionAsker = {
    ask: (request, signal) =>
      rpc.request('permission', { queryId, request }, { signal }).then(
        (answer) => {
          // "Always allow": the person's own rules, saved by the host, count as approved here at once.
          if (answer.always) trust.personSaved(answer.always.rules, answer.always.where);
          return answer;
        },
        () => ({ decision: 'deny' as const, feedback: 'The prompt was withdrawn.' }),
      ),
  };
  // The worker's TurnHost: each call is a message to the host, which serves it with its own (remoteTurn.ts).
  const host: TurnHost = {
    publish: (event) => rpc.notify('event', { queryId, event }),
    durable: () => rpc.request('durable', { queryId }).then(() => undefined),
    // The task's budget is kept by the host, which sees its sub-agents spend too.
    admit: (r) => rpc.request('budget', { queryId, purpose: r.purpose, estimateUsd: r.estimateUsd }).then((a) => a.verdict),
    asker,
    ...(q.mcp ? { mcp: new IpcMcpToolSource(queryId, rpc) } : {}),
    // Sent after the turn's step, as a parent hears sendParent in the host's process: the turn's
    // own events of that step (it awaits subtasks) come first, so a task's log reads the same on a
    // worker as in process (`keel tasks replay` compares them).
    startSubtask: (call) => queueMicrotask(() => rpc.notify('subtaskStart', { queryId, ...call })),
  };
  let finish: (r: QueryResult) => void = () => undefined;
  const result = new Promise<QueryResult>((resolve) => (finish = resolve));
  const done = (output: TurnOutput) => {
    // The conversation stays here: the host folded it from the events (replySchemas.ts, turnResultSchema).
    const { messages, ...rest } = output;
    // The pack this query wrote is closed before the host hears the turn ended (a rewind may follow).
    const closed = checkpoints ? checkpoints.close().catch(() => undefined) : Promise.resolve();
    void closed.then(() => finish({ ...rest, messageCount: messages.length }));
  };
  rpc.notify('session', { queryId, sessionId: randomUUID(), warm: false });
  loaded.then(
    (created) => {
      if (!('stream' in created)) done(failed(q, created));
      else start(created);
    },
    (err: unknown) => done(failed(q, { code: 'internal', message: `the worker could not load the ${q.provider.provider} provider: ${errorMessage(err)}`, retryable: false })),
  );
  return {
    queryId,
    result,
    setMode(m, modes) {
      parentModes = modes;
      mode = m;
      toTurn({ type: 'SET_MODE', mode: m });
    },
    subtaskResult(p) {
      toTurn(subtaskEvent(p.toolCallId, p.result, p.summary));
    },
    cancel() {
      toTurn({ type: 'CANCEL' });
    },
  };

  function start(provider: ModelProvider): void {
    const turnLoop = wireTurnLoop(
      {
        taskId: q.taskId,
        workspace: runtime.workspace,
        ...(runtime.ripgrepPath ? { ripgrepPath: runtime.ripgrepPath } : {}),
        locks: kept.locks,
        tools: kept.tools(runtime, q.skills ?? []),
        // A command's allowed-tools narrow the worker's decisions as they narrow the host's.
        permissions: narrowedBy(boundedByAncestors(own, () => parentModes), () => q.narrowing ?? null, runtime.workspace),
        secrets,
        // The task's hooks the host approved, at the turn's points (PreToolUse, PostToolUse, Stop, …).
        ...(hooks ? { hooks } : {}),
        // The host read the run's instructions files and memories; they follow the base prompt here too.
        runSystem: () => [...(q.runSystem ?? []), ...(hooks?.contextForRun() ?? [])],
        provider: () => provider,
        ...(checkpoints ? { checkpoints } : {}),
      },
      host,
    );
    const input: TurnInput = { taskId: q.taskId, ...q.turn };
    const actor = createActor(turnLoop, { input });
    turn = actor;
    actor.subscribe({
      complete: () => done(actor.getSnapshot().output ?? failed(q, { code: 'internal', message: 'the turn ended without an output', retryable: false })),
      error: (err) => done(failed(q, { code: 'internal', message: `the turn failed in the worker: ${errorMessage(err)}`, retryable: false })),
    });
    actor.start();
    for (const e of early.splice(0)) actor.send(e);
  }
}

type TurnEventIn = { type: 'CANCEL' } | { type: 'SET_MODE'; mode: PermissionMode } | { type: 'CHARGE'; usage: Usage; costUsd: number } | ReturnType<typeof subtaskEvent>;

function subtaskEvent(toolCallId: string, result: Extract<TurnOutput['messages'][number]['content'][number], { type: 'tool_result' }>, summary: string) {
  return { type: 'SUBTASK_RESULT' as const, toolCallId, result, summary };
}

function failed(q: QueryParams, error: KeelError): TurnOutput {
  return { status: 'error', stopReason: null, messages: q.turn.messages, error, usage: ZERO_USAGE, costUsd: 0, compactionFailures: q.turn.compactionFailures };
}
