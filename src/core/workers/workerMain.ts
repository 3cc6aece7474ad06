import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { assign, createActor, sendTo, setup, type Actor } from 'xstate';
import type { KeelError } from '../../shared/domain/errors';
import { ZERO_USAGE, type ToolResultBlock } from '../../shared/domain/messages';
import { LockManager } from '../locks/lockManager';
import type { TurnInput, TurnOutput } from '../machines/turn/types';
import type { PermissionAnswer, PermissionAsker } from '../permissions/gate';
import { loadProvider } from '../providers/load';
import type { FetchFunction } from '../providers/transport/nodeFetch';
import type { ModelProvider } from '../providers/types';
import { boundedByParent, type PermissionParent } from '../runtime/childPermissions';
import { allowingLoopProgress } from '../runtime/loopPermission';
import { lazyEngine } from '../runtime/permissionDecider';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { wireTurnLoop, type PermissionDecider } from '../runtime/wiring';
import { Sandbox } from '../sandbox/sandbox';
import { SecretKeeper } from '../security/secretKeeper';
import { createBashTool } from '../tools/bash';
import { builtinTools, createToolRegistry } from '../tools/registry';
import type { AnyTool } from '../tools/types';
import { MessageChannel } from './channel';
import { IpcMcpToolSource } from './mcpRemote';
import { DEFAULT_MAX_LINE_BYTES, PROTOCOL_VERSION, toWorkerSchema, type FromWorker, type QueryMessage, type ToWorker } from './protocol';
import { WORKER_ONLY_ENV } from './spawnWorker';
import { workerHookPoints } from './workerHooks';
import { narrowedBy } from '../commands/narrowing';
import { createSkillTool } from '../tools/skill';

/**
 * The worker process: connects to the host's socket, says `ready`, and runs one query at a time —
 * one run of a task's turn loop with the same core as in-process runs (provider, tools, input
 * validation, the permission machine as the turn's child, the hooks of the turn's points that the
 * host approved, cost and usage counted in the turn).
 * Every event of the turn goes up as `message`; what
 * needs the owner of the task goes up and waits for its answer: a permission prompt (by its id),
 * the durability barrier before a tool runs, a Task call. The worker's own environment holds no
 * key: the provider's key comes with the query, and tool processes get the secret keeper's
 * environment as in-process runs do.
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
  socket: string;
  workerId: string;
  /** Aborting stops the worker as if its host had closed the connection. */
  signal?: AbortSignal;
  /**
   * The providers' transport; default Node's global `fetch` (undici). The worker process passes
   * `nodeFetch` (src/cli/worker.ts; docs/workers.md, "Memory").
   */
  fetch?: FetchFunction;
}

/**
 * How long a stopping worker waits for its cancelled query to settle: above processRunner's
 * SIGTERM → SIGKILL grace (1 s), under the host's own grace for a graceful shutdown and under
 * `keel run`'s on a signal (3 s).
 */
export const STOP_GRACE_MS = 2500;

/** Runs until the host says `shutdown` or the connection ends; resolves with the exit code. */
export function runWorker(args: WorkerArgs): Promise<number> {
  for (const name of (process.env[WORKER_ONLY_ENV] ?? '').split(',').filter(Boolean)) delete process.env[name];
  delete process.env[WORKER_ONLY_ENV];
  const started = Date.now();
  let processed = 0;
  let current: RunningQuery | null = null;
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
      q.abort();
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([q.settled, new Promise<void>((r) => (timer = setTimeout(r, STOP_GRACE_MS)))]).finally(() => clearTimeout(timer));
    };
    if (args.signal?.aborted) {
      resolve(0);
      return;
    }
    // Told to stop by a signal, not by the host: the host hears nothing more of the query (not a
    // `complete` it would take for its own cancel), only the exit, so the task ends interrupted.
    let silent = false;
    args.signal?.addEventListener(
      'abort',
      () => {
        silent = true;
        stop(0);
      },
      { once: true },
    );
    const socket = connect(args.socket);
    const channel = new MessageChannel<ToWorker, FromWorker>(socket, {
      schema: toWorkerSchema,
      maxLineBytes: DEFAULT_MAX_LINE_BYTES,
      onMessage: (m) => onMessage(m),
      onBroken: (reason) => {
        process.stderr.write(`keel worker ${args.workerId}: the host broke the protocol: ${reason}\n`);
        stop(1);
      },
      onClose: () => stop(0),
    });
    socket.on('connect', () => channel.send({ type: 'ready', pid: process.pid, protocol: PROTOCOL_VERSION }));
    const send = (m: FromWorker) => {
      if (!silent) channel.send(m);
    };

    function onMessage(m: ToWorker): void {
      switch (m.type) {
        case 'health_check':
          send({ type: 'health_ok', id: m.id, uptime: Date.now() - started, queriesProcessed: processed, rssBytes: process.memoryUsage().rss });
          return;
        case 'shutdown':
          // Acknowledged once the query is stopped (its commands' groups gone), so the host's
          // grace period covers the commands too; the connection's close then ends the worker.
          accepting = false;
          void settleCurrent().then(() => {
            send({ type: 'shutdown_ack' });
            channel.end();
          });
          return;
        case 'query':
          if (!accepting) {
            send({ type: 'error', queryId: m.queryId, error: { code: 'internal', message: 'this worker is stopping', retryable: false } });
            return;
          }
          if (current) {
            send({ type: 'error', queryId: m.queryId, error: { code: 'internal', message: `this worker is already running query ${current.queryId}`, retryable: false } });
            return;
          }
          current = startQuery(m, send, args.fetch, (q) => {
            if (current === q) current = null;
            processed++;
          });
          return;
        default:
          if (current && m.queryId === current.queryId) current.receive(m);
      }
    }
  });
}

interface RunningQuery {
  queryId: string;
  /** Resolves once the query's turn ended and `complete` was sent. */
  settled: Promise<void>;
  receive(m: Exclude<ToWorker, { type: 'query' | 'shutdown' | 'health_check' }>): void;
  abort(): void;
}

/** Starts one query's turn loop; `done` is called once, after `complete` (or `error`) was sent. */
function startQuery(q: QueryMessage, send: (m: FromWorker) => void, fetch: FetchFunction | undefined, done: (q: RunningQuery) => void): RunningQuery {
  const { runtime } = q;
  const secrets = new SecretKeeper({ passThrough: runtime.passEnv, values: [...runtime.heldSecrets, q.provider.apiKey] });
  const sandbox = new Sandbox(runtime.sandbox);
  const skills = q.skills ?? [];
  const tools = createToolRegistry([...builtinTools.map((t) => (t.name === 'Bash' ? (createBashTool({ sandbox }) as AnyTool) : t)), createSkillTool(() => skills) as AnyTool]);
  let parentModes = q.parentModes;
  // The turn's mode as the host last set it (hooks' `permission_mode`).
  let mode = q.turn.mode;
  // (`toTurn` is defined below; a hook only fires once the turn runs.)
  const hooks = workerHookPoints(q, { send, secrets, mode: () => mode, stopTurn: () => toTurn({ type: 'CANCEL' }) });
  const engine = engineFor(runtime.workspace, runtime.settingsFiles, runtime.sandbox.enabled);
  // The same exception the host gives a loop iteration (LiveTask): its own progress file.
  const own: PermissionDecider = q.loopProgressFile ? allowingLoopProgress(engine, q.loopProgressFile) : engine;
  const narrowing = q.narrowing ?? null;
  const permissions: PermissionDecider = narrowedBy(boundedByModes(own, () => parentModes), () => narrowing, runtime.workspace);
  const waiting = new Map<string, (answer: PermissionAnswer) => void>();
  const durables = new Map<string, () => void>();
  // The task's MCP servers are the host's: their tools are listed and called through it.
  const mcp = q.mcp ? new IpcMcpToolSource(q.queryId, send) : undefined;
  const asker: PermissionAsker = {
    ask(request, signal) {
      return new Promise((resolve) => {
        const promptId = request.requestId;
        const finish = (answer: PermissionAnswer) => {
          waiting.delete(promptId);
          resolve(answer);
        };
        waiting.set(promptId, finish);
        signal.addEventListener('abort', () => {
          if (!waiting.has(promptId)) return;
          send({ type: 'permission_cancel', queryId: q.queryId, promptId });
          finish({ decision: 'deny', feedback: 'cancelled' });
        });
        send({ type: 'permission_request', queryId: q.queryId, promptId, request });
      });
    },
  };
  let actor: Actor<ReturnType<typeof relayMachine>> | null = null;
  // What arrives while the provider's module loads (the first query's SDK) reaches the turn once it starts.
  const early: RelayEvent[] = [];
  const toTurn = (e: RelayEvent) => (actor ? actor.send(e) : early.push(e));
  let markSettled: () => void = () => undefined;
  const running: RunningQuery = {
    queryId: q.queryId,
    settled: new Promise<void>((resolve) => (markSettled = resolve)),
    receive(m) {
      switch (m.type) {
        case 'cancel':
          toTurn({ type: 'CANCEL' });
          return;
        case 'set_mode':
          parentModes = m.parentModes;
          mode = m.mode;
          toTurn({ type: 'SET_MODE', mode: m.mode });
          return;
        case 'permission_answer':
          waiting.get(m.promptId)?.(m.answer);
          return;
        case 'durable_ok':
          durables.get(m.requestId)?.();
          durables.delete(m.requestId);
          return;
        case 'subtask_result':
          toTurn({ type: 'SUBTASK_RESULT', toolCallId: m.toolCallId, result: m.result, summary: m.summary });
          return;
        case 'mcp_tools':
        case 'mcp_progress':
        case 'mcp_result':
          mcp?.receive(m);
          return;
      }
    },
    abort() {
      toTurn({ type: 'CANCEL' });
    },
  };
  send({ type: 'session', queryId: q.queryId, sessionId: randomUUID(), warm: false });
  loadProvider(q.provider, fetch).then(
    (created) => {
      if (!('stream' in created)) finishWith(failed(q, created));
      else startTurn(created);
    },
    (err: unknown) => finishWith(failed(q, { code: 'internal', message: `the worker could not load the ${q.provider.provider} provider: ${(err as Error).message}`, retryable: false })),
  );
  return running;

  function startTurn(provider: ModelProvider): void {
    const turnLoop = wireTurnLoop(
      {
        taskId: q.taskId,
        workspace: runtime.workspace,
        ...(runtime.ripgrepPath ? { ripgrepPath: runtime.ripgrepPath } : {}),
        locks: new LockManager(),
        tools,
        asker,
        secrets,
        permissions,
        ...(mcp ? { mcp } : {}),
        // The task's hooks the host approved, at the turn's points (PreToolUse, PostToolUse, Stop, …).
        ...(hooks ? { hooks } : {}),
        // The host read the run's instructions files and memories; they follow the base prompt here too.
        runSystem: () => q.runSystem ?? [],
        publish: (event) => send({ type: 'message', queryId: q.queryId, event }),
        durable: () =>
          new Promise<void>((resolve) => {
            const requestId = randomUUID();
            durables.set(requestId, resolve);
            send({ type: 'durable_request', queryId: q.queryId, requestId });
          }),
      },
      secrets,
      () => provider,
    );
    const input: TurnInput = { taskId: q.taskId, ...q.turn };
    const relay = relayMachine(turnLoop, input, (sub) => send({ type: 'subtask_start', queryId: q.queryId, ...sub }));
    const started = createActor(relay);
    actor = started;
    started.subscribe({
      complete: () => {
        const output = started.getSnapshot().context.output;
        finishWith(output ?? failed(q, { code: 'internal', message: 'the turn ended without an output', retryable: false }));
      },
      error: (err) => finishWith(failed(q, { code: 'internal', message: `the turn failed in the worker: ${(err as Error).message}`, retryable: false })),
    });
    started.start();
    for (const e of early.splice(0)) started.send(e);
  }

  function finishWith(output: TurnOutput): void {
    void sandbox.dispose();
    mcp?.close();
    send({ type: 'complete', queryId: q.queryId, output });
    done(running);
    markSettled();
  }
}

/**
 * One permission engine per workspace and settings for the worker's life, as a host keeps one per
 * runtime: its shell parser (wasm) loads once, not on every query.
 */
const engines = new Map<string, PermissionDecider>();
function engineFor(workspace: string, settingsFiles: string[], sandboxEnabled: boolean): PermissionDecider {
  const key = JSON.stringify([workspace, settingsFiles, sandboxEnabled]);
  let engine = engines.get(key);
  if (!engine) engines.set(key, (engine = lazyEngine({ workspace, settingsFiles, sandbox: { enabled: sandboxEnabled } })));
  return engine;
}

function failed(q: QueryMessage, error: KeelError): TurnOutput {
  return { status: 'error', stopReason: null, messages: q.turn.messages, error, usage: ZERO_USAGE, costUsd: 0, compactionFailures: q.turn.compactionFailures };
}

/** A call is decided under the task's own mode and under each ancestor's (nearest first); the strictest answer wins. */
function boundedByModes(engine: PermissionDecider, modes: () => PermissionMode[]): PermissionDecider {
  const chain = (i: number): PermissionParent | null => {
    const m = modes()[i];
    if (m === undefined) return null;
    const above = chain(i + 1);
    const decider = above ? boundedByParent(engine, above) : engine;
    return { permissionMode: () => m, decideAsParent: (call) => decider.decide(call, m) };
  };
  return {
    decide(call, mode) {
      const parent = chain(0);
      return parent ? boundedByParent(engine, parent).decide(call, mode) : engine.decide(call, mode);
    },
  };
}

/**
 * The turn machine's parent in the worker (its task machine lives in the host): it relays a Task
 * call up (SUBTASK_STARTED → `onSubtask`), and CANCEL, SET_MODE and SUBTASK_RESULT down, and keeps
 * the turn's output.
 */
type RelayEvent =
  | { type: 'CANCEL' }
  | { type: 'SET_MODE'; mode: PermissionMode }
  | { type: 'SUBTASK_RESULT'; toolCallId: string; result: ToolResultBlock; summary: string }
  | { type: 'SUBTASK_STARTED'; toolCallId: string; description: string; prompt: string };

function relayMachine(turnLoop: ReturnType<typeof wireTurnLoop>, input: TurnInput, onSubtask: (s: { toolCallId: string; description: string; prompt: string }) => void) {
  return setup({
    types: {
      context: {} as { output: TurnOutput | null },
      events: {} as RelayEvent,
    },
    actors: { turn: turnLoop },
  }).createMachine({
    id: 'workerQuery',
    context: { output: null },
    initial: 'running',
    states: {
      running: {
        invoke: { id: 'turn', src: 'turn', input, onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) } },
        on: {
          CANCEL: { actions: sendTo('turn', { type: 'CANCEL' }) },
          SET_MODE: { actions: sendTo('turn', ({ event }) => event) },
          SUBTASK_RESULT: { actions: sendTo('turn', ({ event }) => event) },
          SUBTASK_STARTED: { actions: ({ event }) => onSubtask({ toolCallId: event.toolCallId, description: event.description, prompt: event.prompt }) },
        },
      },
      done: { type: 'final' },
    },
  });
}
