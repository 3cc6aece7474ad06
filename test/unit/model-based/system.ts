import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, fromPromise, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ConversationMessage, ToolUseBlock } from '../../../src/shared/domain/messages';
import type { PermissionMode } from '../../../src/shared/domain/permissionModes';
import { LockManager, taskLockKey } from '../../../src/core/locks/lockManager';
import type { PermissionInput, permissionMachine } from '../../../src/core/machines/permission/permission.machine';
import type { TaskMachineEvent } from '../../../src/core/machines/task/task.machine';
import { userText } from '../../../src/core/machines/turn/conversation';
import type { PermissionOutcome, ToolRunOutput, TurnLimits, turnMachine, ValidatedCall, ValidationOutcome } from '../../../src/core/machines/turn/turn.machine';
import type { EngineDecision } from '../../../src/core/permissions/engine';
import type { PermissionAnswer, PermissionAsker } from '../../../src/core/permissions/gate';
import { McpHub } from '../../../src/core/mcp/hub';
import { lazyEngine } from '../../../src/core/runtime/permissionDecider';
import { wireTaskMachine } from '../../../src/core/runtime/wiring';
import type { PermissionSubject } from '../../../src/core/tools/types';
import { createToolRegistry, type ToolRegistry } from '../../../src/core/tools/registry';
import { emptyTranscript } from '../../../src/shared/domain/transcript';
import { ScenarioProvider, type ScenarioStep } from '../helpers/scenarioProvider';
import { FAULTY } from '../mcp/helpers';
import { Changes, eventually, settled } from '../helpers/changes';
import type { CoverageRecorder } from './coverage';
import { TRUST_EVERYTHING } from '../helpers/trustAll';

/**
 * One task system as the runtime wires it (`wireTaskMachine`: real task, turn, call, stream and
 * permission machines, the real LockManager, tools, permission engine (tree-sitter and all,
 * reading the workspace's settings file) and provider stream actor), with every outside party a
 * scripted fake behind its interface: the provider (ScenarioProvider), the person answering
 * permission prompts, the subtask starter, the tool registry's definitions, and the conversation
 * store that `reconstruct` reads. A script is consumed in order; anything not scripted waits
 * forever, so a replay stops exactly where its path ends.
 * With `mcp`, a real McpHub and a real stdio MCP server take the model's MCP calls (validation
 * against the server's tool list, the real engine's decision, the call over stdio).
 * `injected` replaces the turn's tool pipeline (validation, permission, tool run, MCP call) or the
 * permission machine's engine with scripted actors, for the transitions no real part can produce
 * yet (an MCP tool, a validation, permission check, tool run or engine that rejects). What an
 * injected replay reaches is never counted as covered (modelBased.test.ts lists it by name).
 */
export interface Script {
  provider: ScenarioStep[];
  /** Outcome of each initialisation (provider creation; `blocked`: a hook blocked the prompt); none left: it waits. */
  init: ('ok' | 'fail' | 'blocked')[];
  /** The person's answers to permission prompts, in order; none left: the prompt stays open. */
  asker: ('allow' | 'always' | 'deny' | 'reject')[];
  subtasks: ('resolve' | 'hang')[];
  reconstruct: ('ok' | 'fail')[];
  /** Each settled run's finishing (its phases and record over); none left: it waits (`finishing`). */
  finish: 'ok'[];
  /**
   * The task's budget, asked before each priced request (TurnHost.admit), in order: it may go,
   * it may not (the task pauses for its budget), or the owner fails. None left: it may go (a task
   * with no budget).
   */
  admit: ('ok' | 'refuse' | 'reject')[];
  prepareFails: boolean[];
  duplicateKeys: string[];
  holdLock: boolean;
  limits: Partial<TurnLimits>;
  /** The task's permission mode (default: `default`). */
  mode?: PermissionMode;
  /**
   * Wire a real MCP hub with one real stdio server, `mbt` (test/fixtures/mcp/faultyServer.mjs):
   * the model's `mcp__mbt__echo` is allowed by the workspace's rule, `mcp__mbt__slow` asks.
   */
  mcp?: boolean;
  injected?: Injection;
}

/** Scripted stand-ins, each consumed in order (none left: it waits). */
export interface Injection {
  /** The turn's whole tool pipeline: validation, the permission decision, the tool run, the MCP call. */
  pipeline?: {
    validate: ('read' | 'task' | 'mcp' | 'invalid' | 'reject')[];
    permission: ('allow' | 'deny' | 'reject')[];
    runTool: ('ok' | 'reject')[];
    mcp: ('ok' | 'reject')[];
  };
  /** The permission machine's engine (`evaluate`). */
  engine?: ('reject' | EngineDecision['decision'])[];
  /** The turn's Stop hooks (`stopHook`): let it stop, send it back, or fail. */
  stopHook?: ('stop' | 'continue' | 'reject')[];
}

/**
 * The settings file of every replay's workspace: the engine denies `rm` (a decision the engine
 * makes by rule), and nothing else changes its defaults.
 */
export const SETTINGS = { permissions: { deny: ['Bash(rm:*)'] } };
/** The same, in a replay with the MCP server: its `echo` tool is allowed by rule (anything else of it asks). */
export const MCP_SETTINGS = { permissions: { ...SETTINGS.permissions, allow: ['mcp__mbt__echo'] } };

export function emptyScript(): Script {
  return { provider: [], init: [], asker: [], subtasks: [], reconstruct: [], finish: [], admit: [], prepareFails: [], duplicateKeys: [], holdLock: false, limits: {} };
}

/** Sends `send` to the task once the target machine's observed (deduplicated) states reach index `at`. */
export interface Trigger {
  at: number;
  send: TaskMachineEvent;
  /** Also wait until a provider request is hung in flight (a cancel that must find one). */
  whenHung?: boolean;
  /** After sending, let the held request answer (a message sent while it was in flight). */
  release?: boolean;
}

/**
 * The limits of a replay's MCP hub: it waits for its server to finish starting for as long as the
 * test lets it. The scripted model asks for the server's tool whether or not its request offered
 * it, so with the product's startup wait (KEEL_MCP_STARTUP_WAIT, 5 s) a server that a loaded
 * machine starts in more than 5 s is not in the request's tools yet, its tool is unknown when the
 * call is validated, and the replay leaves its path (it did, once, under load 7). The hub's waits
 * end when the connection's state changes (an event), so these bounds only have to outlast the
 * test's own timeout, which is what bounds a server that never starts.
 */
const MCP_REPLAY_LIMITS = { startupWaitMs: 10 * 60_000, connectTimeoutMs: 10 * 60_000, toolTimeoutMs: 10 * 60_000 };

/** Keel's environment without the variables that would set the hub's timeouts over MCP_REPLAY_LIMITS. */
function withoutMcpTimeouts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { KEEL_MCP_STARTUP_WAIT: _wait, MCP_TIMEOUT: _connect, MCP_TOOL_TIMEOUT: _call, ...rest } = env;
  return rest;
}

export const TASK_ID = 'task-mbt';
export const LIMITS: TurnLimits = { maxTurns: 3, maxTokens: 1024, contextLimit: 1e9, retryLimit: 1, retryBaseMs: 1, lockTimeoutMs: 0 };

const never = <T>() => new Promise<T>(() => undefined);

export interface ReplayResult {
  observed: string[];
  events: TaskEvent[];
  provider: ScenarioProvider;
}

/** Where a replay's coverage goes: `real` for the wired system as is, `injected` when a script injects anything. */
export interface Recorders {
  real: CoverageRecorder;
  injected: CoverageRecorder;
}

export async function replay(script: Script, target: string, expected: string[], triggers: Trigger[], recorders: Recorders, input: { messages?: ConversationMessage[] } = {}): Promise<ReplayResult> {
  const recorder = script.injected ? recorders.injected : recorders.real;
  const workspace = mkdtempSync(join(tmpdir(), 'keel-mbt-'));
  writeFileSync(join(workspace, 'a.txt'), 'alpha\n');
  mkdirSync(join(workspace, '.keel'));
  writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify(script.mcp ? MCP_SETTINGS : SETTINGS));
  const mcpSpec = { transport: 'stdio' as const, command: process.execPath, args: [FAULTY, '--log', join(workspace, 'mcp-log.jsonl')], env: {} };
  const hub = script.mcp
    ? new McpHub({
        workspace,
        keelHome: mkdtempSync(join(tmpdir(), 'keel-mbt-home-')),
        config: { servers: [{ name: 'mbt', scope: 'user', source: 'model-based', template: mcpSpec, resolved: mcpSpec, problems: [] }], problems: [] },
        env: withoutMcpTimeouts(process.env),
        limits: MCP_REPLAY_LIMITS,
      })
    : undefined;
  const provider = new ScenarioProvider(script.provider.slice());
  const locks = new LockManager();
  const real = createToolRegistry();
  const prepareFails = script.prepareFails.slice();
  const tools: ToolRegistry = {
    definitions: () => {
      if (prepareFails.shift()) throw new Error('tool definitions unavailable (scripted)');
      return real.definitions();
    },
    get: (n) => real.get(n),
    names: () => real.names(),
  };
  const answers = script.asker.slice();
  const asker: PermissionAsker = {
    ask: async (): Promise<PermissionAnswer> => {
      const a = answers.shift();
      if (a === undefined) return never();
      if (a === 'reject') throw new Error('the permission prompt failed (scripted)');
      if (a === 'always') return { decision: 'allow', always: { rules: ['Bash(touch:*)'], where: 'local' } };
      return { decision: a };
    },
  };
  const inits = script.init.slice();
  const subtasks = script.subtasks.slice();
  const finishes = script.finish.slice();
  const admits = script.admit.slice();
  const events: TaskEvent[] = [];
  const wired = wireTaskMachine({
    taskId: TASK_ID,
    workspace,
    locks,
    tools,
    // The replays are about the machines: the workspace's settings file counts as approved.
    permissions: lazyEngine({ workspace, trust: TRUST_EVERYTHING }),
    asker,
    createProvider: async () => {
      const r = inits.shift();
      if (r === undefined) return never();
      if (r === 'blocked') return { code: 'blocked_by_hook', message: 'A UserPromptSubmit hook blocked this prompt (scripted).', retryable: false };
      return r === 'fail' ? { code: 'no_api_key', message: 'No API key (scripted).', retryable: true } : provider;
    },
    // Only recorded: the run's phases hear of the turn's tool calls and tokens from the task machine itself.
    publish: (e) => void events.push(e),
    // A settled run's finishing: its phases end (for real), then its record is saved (scripted).
    recorded: async () => {
      if (finishes.shift() === undefined) return never();
    },
    ...(hub ? { mcp: hub } : {}),
    admit: async () => {
      const a = admits.shift() ?? 'ok';
      if (a === 'reject') throw new Error('the budget could not be read (scripted)');
      return a === 'refuse' ? { capUsd: 1, spentUsd: 0.9, estimateUsd: 0.5 } : null;
    },
    startSubtask: () => {
      const finishes = subtasks.shift() === 'resolve';
      return {
        settled: () => (finishes ? Promise.resolve({ type: 'done' as const, taskId: 'child', status: 'completed' as const, stopReason: 'end_turn' as const }) : never()),
        transcript: () => ({ ...emptyTranscript('child', 'child', 'test-model'), items: [{ kind: 'assistant' as const, id: 'a1', model: 'test-model', text: 'subtask answer', thinking: '', streaming: false }] }),
        cancel: () => undefined,
      };
    },
  });
  const rebuilt = script.reconstruct.slice();
  let machine = wired.provide({
    actors: {
      reconstruct: fromPromise<ConversationMessage[], { taskId: string }>(async () => {
        const r = rebuilt.shift();
        if (r === undefined) return never();
        if (r === 'fail') throw new Error('the task log is unreadable (scripted)');
        return [userText('the conversation, rebuilt from the log')];
      }),
    },
  });
  if (script.injected) machine = machine.provide({ actors: { turnLoop: injectTurnActors(wired.implementations.actors.turnLoop as typeof turnMachine, script.injected) } });

  for (const key of script.duplicateKeys) locks.beginContinuation(taskLockKey(TASK_ID), key);
  const outside = script.holdLock ? await locks.acquire(taskLockKey(TASK_ID)) : null;

  const observed: string[] = [];
  const changes = new Changes();
  provider.onChange = changes.notify;
  let targetSession: string | null = null;
  const inspect = (e: InspectionEvent) => {
    recorder.inspect(e);
    if (e.type !== '@xstate.snapshot') return;
    const snap = e.snapshot as AnyMachineSnapshot;
    if (snap.machine?.id !== target) return;
    if (targetSession === null) targetSession = e.actorRef.sessionId;
    if (e.actorRef.sessionId !== targetSession) return;
    const v = JSON.stringify(snap.value);
    if (observed[observed.length - 1] !== v) observed.push(v);
    changes.notify();
  };
  // The replay left the path: no point waiting for the rest of it (the comparison reports it).
  const diverged = () => observed.some((v, i) => i < expected.length && v !== expected[i]);
  const seen = () => `observed ${observed.join(' → ')} / expected ${expected.join(' → ')}`;
  const actor = createActor(machine, {
    input: { taskId: TASK_ID, title: 'model-based', model: 'test-model', mode: script.mode ?? 'default', limits: { ...LIMITS, ...script.limits }, ...(input.messages ? { messages: input.messages } : {}) },
    inspect,
  });
  actor.subscribe({ error: () => undefined });
  actor.start();
  // A turn or call path starts when the task starts; a task path sends START itself.
  if (target !== 'task') actor.send({ type: 'START', text: 'hi' });
  try {
    const pending = triggers.slice().sort((a, b) => a.at - b.at);
    for (const t of pending) {
      await changes.until(() => diverged() || (observed.length > t.at && (!t.whenHung || provider.hung > 0)), () => `trigger ${t.send.type} at ${t.at}: ${seen()}`);
      if (observed.length !== t.at + 1 || observed[t.at] !== expected[t.at]) break; // diverged; the final comparison reports it
      actor.send(t.send);
      if (t.release) provider.release();
    }
    await changes.until(() => diverged() || observed.length >= expected.length, seen);
    await settled();
    return { observed: observed.slice(), events, provider };
  } finally {
    actor.stop();
    outside?.release();
    await hub?.dispose();
  }
}

function injectTurnActors(turn: typeof turnMachine, injected: Injection): typeof turnMachine {
  let out = turn;
  if (injected.engine) {
    const decisions = injected.engine.slice();
    const permission = turn.implementations.actors.permission as typeof permissionMachine;
    out = out.provide({
      actors: {
        permission: permission.provide({
          actors: {
            evaluate: fromPromise<EngineDecision, { call: Pick<PermissionInput, 'tool' | 'input' | 'subject' | 'readOnly'>; mode: PermissionMode; toolCallId: string }>(async () => {
              const d = decisions.shift();
              if (d === undefined) return never();
              if (d === 'reject') throw new Error('the permission engine failed (injected)');
              return { decision: d, reason: `injected ${d}` };
            }),
          },
        }),
      },
    });
  }
  if (injected.stopHook) {
    const stops = injected.stopHook.slice();
    out = out.provide({
      actors: {
        stopHook: fromPromise<{ continueWith: string | null }, { taskId: string; lastMessage: string; continuations: number }>(async () => {
          const r = stops.shift();
          if (r === undefined) return never();
          if (r === 'reject') throw new Error('Stop hook runner failed (injected)');
          return { continueWith: r === 'continue' ? 'Stop hook: go on (injected)' : null };
        }),
      },
    });
  }
  if (!injected.pipeline) return out;
  const validations = injected.pipeline.validate.slice();
  const permission = injected.pipeline.permission.slice();
  const runs = injected.pipeline.runTool.slice();
  const mcps = injected.pipeline.mcp.slice();
  const result = (id: string, content: string) => ({ type: 'tool_result' as const, tool_use_id: id, content });
  const SUBJECTS: Record<'read' | 'task' | 'mcp', PermissionSubject> = {
    read: { kind: 'read', tool: 'Read', paths: ['a.txt'], summary: 'read a.txt' },
    task: { kind: 'task', tool: 'Task', summary: 'a subtask' },
    mcp: { kind: 'mcp', tool: 'mcp__srv__tool', server: 'srv', summary: 'an MCP tool' },
  };
  return out.provide({
    actors: {
      validateToolCall: fromPromise<ValidationOutcome, { taskId: string; call: ToolUseBlock }>(async ({ input }) => {
        const v = validations.shift();
        if (v === undefined) return never();
        if (v === 'reject') throw new Error('a tool could not describe its call (injected)');
        if (v === 'invalid') return { ok: false, result: { ...result(input.call.id, 'invalid'), is_error: true }, summary: 'invalid input' };
        const call: ValidatedCall = { id: input.call.id, tool: input.call.name, input: input.call.input, subject: SUBJECTS[v], readOnly: v !== 'mcp', requestId: `r-${input.call.id}` };
        return { ok: true, call };
      }),
      // A promise in the permission machine's place: its outcome, or a failure no real machine produces.
      permission: fromPromise<PermissionOutcome, { requestId: string; toolCallId: string }>(async ({ input }) => {
        const p = permission.shift();
        if (p === undefined) return never();
        if (p === 'reject') throw new Error('the permission check failed (injected)');
        if (p === 'allow') return { decision: 'allow', reason: 'injected', requestId: input.requestId };
        return { decision: 'deny', reason: 'injected', requestId: input.requestId, result: { ...result(input.toolCallId, 'denied'), is_error: true } };
      }) as unknown as typeof permissionMachine,
      runTool: fromPromise<ToolRunOutput, { taskId: string; call: ValidatedCall }>(async ({ input }) => {
        const r = runs.shift();
        if (r === undefined) return never();
        if (r === 'reject') throw new Error('tool runner failed (injected)');
        return { result: result(input.call.id, 'ran'), summary: 'ran' };
      }),
      callMcpTool: fromPromise<ToolRunOutput, { taskId: string; call: ToolUseBlock }>(async ({ input }) => {
        const r = mcps.shift();
        if (r === undefined) return never();
        if (r === 'reject') throw new Error('MCP server failed (injected)');
        return { result: result(input.call.id, 'mcp ran'), summary: 'mcp ran' };
      }),
    },
  });
}

/**
 * Kept for callers on other branches that still import it: `eventually` from
 * test/unit/helpers/changes.ts, which polls at a rate with no deadline (`_limitMs` is ignored; the
 * test's timeout bounds the wait). New code waits on a `Changes` (a run's output, the fake
 * server's requests, an actor's snapshots) instead.
 * @deprecated use `Changes.until` or `eventually` with a source.
 */
export function waitUntil(ok: () => boolean, describe: () => string, _limitMs?: number): Promise<void> {
  return eventually(ok, describe);
}
