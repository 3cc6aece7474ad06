import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, fromPromise, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ConversationMessage, ToolUseBlock } from '../../../src/shared/domain/messages';
import { LockManager, taskLockKey } from '../../../src/core/locks/lockManager';
import type { TaskMachineEvent } from '../../../src/core/machines/task/task.machine';
import { userText } from '../../../src/core/machines/turn/conversation';
import type { PermissionOutcome, ToolRunOutput, TurnLimits, turnMachine } from '../../../src/core/machines/turn/turn.machine';
import type { PermissionAsker } from '../../../src/core/permissions/gate';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { wireTaskMachine } from '../../../src/core/runtime/wiring';
import { createToolRegistry, type ToolRegistry } from '../../../src/core/tools/registry';
import { ScenarioProvider, type ScenarioStep } from '../helpers/scenarioProvider';
import type { CoverageRecorder } from './coverage';

/**
 * One task system as the runtime wires it (`wireTaskMachine`: real turn, call and stream
 * machines, the real LockManager, tools, permission gate and provider stream actor), with every
 * outside party a scripted fake behind its interface: the provider (ScenarioProvider), the
 * permission asker, the subtask runner, the tool registry's definitions, and the conversation
 * store that `reconstruct` reads. A script is consumed in order; anything not scripted waits
 * forever, so a replay stops exactly where its path ends.
 * `injected` replaces one turn actor with a scripted one, for the transitions no real part can
 * produce yet (an MCP permission, a tool runner or MCP call that rejects).
 */
export interface Script {
  provider: ScenarioStep[];
  /** Outcome of each initialisation (provider creation); none left: it waits. */
  init: ('ok' | 'fail')[];
  asker: ('allow' | 'deny' | 'reject')[];
  subtasks: ('resolve' | 'hang')[];
  reconstruct: ('ok' | 'fail')[];
  prepareFails: boolean[];
  duplicateKeys: string[];
  holdLock: boolean;
  limits: Partial<TurnLimits>;
  injected?: { permission?: ('allow' | 'mcp' | 'deny' | 'invalid' | 'reject')[]; runTool?: ('ok' | 'reject')[]; mcp?: ('ok' | 'reject')[]; stopHook?: ('stop' | 'continue' | 'reject')[] };
}

export function emptyScript(): Script {
  return { provider: [], init: [], asker: [], subtasks: [], reconstruct: [], prepareFails: [], duplicateKeys: [], holdLock: false, limits: {} };
}

/** Sends `send` to the task once the target machine's observed (deduplicated) states reach index `at`. */
export interface Trigger {
  at: number;
  send: TaskMachineEvent;
  /** Also wait until a provider request is hung in flight (a cancel that must find one). */
  whenHung?: boolean;
}

export const TASK_ID = 'task-mbt';
export const LIMITS: TurnLimits = { maxTurns: 3, maxTokens: 1024, contextLimit: 1e9, retryLimit: 1, retryBaseMs: 1, lockTimeoutMs: 0 };

const never = <T>() => new Promise<T>(() => undefined);

export interface ReplayResult {
  observed: string[];
  events: TaskEvent[];
  provider: ScenarioProvider;
}

export async function replay(script: Script, target: string, expected: string[], triggers: Trigger[], recorder: CoverageRecorder, input: { messages?: ConversationMessage[] } = {}, also?: CoverageRecorder): Promise<ReplayResult> {
  const workspace = mkdtempSync(join(tmpdir(), 'keel-mbt-'));
  writeFileSync(join(workspace, 'a.txt'), 'alpha\n');
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
    ask: async () => {
      const a = answers.shift();
      if (a === undefined) return never();
      if (a === 'reject') throw new Error('the permission prompt failed (scripted)');
      return { decision: a };
    },
  };
  const inits = script.init.slice();
  const subtasks = script.subtasks.slice();
  const events: TaskEvent[] = [];
  const wired = wireTaskMachine({
    taskId: TASK_ID,
    workspace,
    locks,
    tools,
    asker,
    createProvider: async () => {
      const r = inits.shift();
      if (r === undefined) return never();
      return r === 'fail' ? { code: 'no_api_key', message: 'No API key (scripted).', retryable: true } : provider;
    },
    publish: (e) => events.push(e),
    runSubtask: (_parent, sub) => ({
      result: subtasks.shift() === 'resolve' ? Promise.resolve({ result: { type: 'tool_result', tool_use_id: sub.toolCallId, content: 'subtask answer' }, summary: 'subtask completed' }) : never(),
      cancel: () => undefined,
    }),
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
  let targetSession: string | null = null;
  const inspect = (e: InspectionEvent) => {
    recorder.inspect(e);
    also?.inspect(e);
    if (e.type !== '@xstate.snapshot') return;
    const snap = e.snapshot as AnyMachineSnapshot;
    if (snap.machine?.id !== target) return;
    if (targetSession === null) targetSession = e.actorRef.sessionId;
    if (e.actorRef.sessionId !== targetSession) return;
    const v = JSON.stringify(snap.value);
    if (observed[observed.length - 1] !== v) observed.push(v);
  };
  const actor = createActor(machine, {
    input: { taskId: TASK_ID, title: 'model-based', model: 'test-model', mode: 'default', limits: { ...LIMITS, ...script.limits }, ...(input.messages ? { messages: input.messages } : {}) },
    inspect,
  });
  actor.subscribe({ error: () => undefined });
  actor.start();
  // A turn or call path starts when the task starts; a task path sends START itself.
  if (target !== 'task') actor.send({ type: 'START', text: 'hi' });
  try {
    const pending = triggers.slice().sort((a, b) => a.at - b.at);
    for (const t of pending) {
      await waitUntil(() => observed.length > t.at && (!t.whenHung || provider.hung > 0), () => `trigger ${t.send.type} at ${t.at}: observed ${observed.join(' → ')} / expected ${expected.join(' → ')}`);
      if (observed.length !== t.at + 1 || observed[t.at] !== expected[t.at]) break; // diverged; the final comparison reports it
      actor.send(t.send);
    }
    await waitUntil(() => observed.length >= expected.length, () => `observed ${observed.join(' → ')} / expected ${expected.join(' → ')}`).catch(() => undefined);
    await quiesce();
    return { observed: observed.slice(), events, provider };
  } finally {
    actor.stop();
    outside?.release();
  }
}

function injectTurnActors(turn: typeof turnMachine, injected: NonNullable<Script['injected']>): typeof turnMachine {
  const permission = (injected.permission ?? []).slice();
  const runs = (injected.runTool ?? []).slice();
  const mcps = (injected.mcp ?? []).slice();
  const stops = (injected.stopHook ?? []).slice();
  const result = (call: ToolUseBlock, content: string) => ({ type: 'tool_result' as const, tool_use_id: call.id, content });
  return turn.provide({
    actors: {
      checkPermission: fromPromise<PermissionOutcome, { taskId: string; call: ToolUseBlock; mode: PermissionMode }>(async ({ input }) => {
        const p = permission.shift();
        if (p === undefined) return never();
        if (p === 'reject') throw new Error('permission engine failed (injected)');
        if (p === 'allow') return { decision: 'allow', reason: 'injected', requestId: 'r' };
        if (p === 'mcp') return { decision: 'allow', reason: 'injected', requestId: 'r', mcp: true };
        if (p === 'deny') return { decision: 'deny', reason: 'injected', requestId: 'r', result: { ...result(input.call, 'denied'), is_error: true } };
        return { decision: 'invalid', result: { ...result(input.call, 'invalid'), is_error: true } };
      }),
      runTool: fromPromise<ToolRunOutput, { taskId: string; call: ToolUseBlock }>(async ({ input }) => {
        const r = runs.shift();
        if (r === undefined) return never();
        if (r === 'reject') throw new Error('tool runner failed (injected)');
        return { result: result(input.call, 'ran'), summary: 'ran' };
      }),
      callMcpTool: fromPromise<ToolRunOutput, { taskId: string; call: ToolUseBlock }>(async ({ input }) => {
        const r = mcps.shift();
        if (r === undefined) return never();
        if (r === 'reject') throw new Error('MCP server failed (injected)');
        return { result: result(input.call, 'mcp ran'), summary: 'mcp ran' };
      }),
      stopHook: fromPromise<{ continueWith: string | null }, { taskId: string; lastMessage: string; continuations: number }>(async () => {
        const r = stops.shift();
        if (r === undefined) return never();
        if (r === 'reject') throw new Error('Stop hook runner failed (injected)');
        return { continueWith: r === 'continue' ? 'Stop hook: go on (injected)' : null };
      }),
    },
  });
}

/** Polls until `ok()`; rejects after ~5 s with `describe()` (a hang guard, not a timed assertion). */
export async function waitUntil(ok: () => boolean, describe: () => string, limitMs = 5000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${describe()}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Lets pending promise callbacks, immediates and 1 ms timers run, so nothing is left in motion. */
export async function quiesce(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 2));
}
