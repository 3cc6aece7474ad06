import { join, resolve } from 'node:path';
import type { AnyActorRef, AnyMachineSnapshot } from 'xstate';
import type { QueryInput } from '../../../src/core/machines/query/query.machine';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { PermissionAnswer, PermissionRequest } from '../../../src/core/permissions/gate';
import type { QueryParams } from '../../../src/core/workers/protocol';
import type { QueryServer, WorkerHandle } from '../../../src/core/workers/workerHandle';
import type { WorkerCommand } from '../../../src/core/workers/spawnWorker';
import { processAlive } from '../../../src/core/locks/processAlive';

/**
 * Helpers for tests of the host side of the pool against test/fixtures/fake-worker/worker.mjs: a
 * real Node process speaking the real protocol, steered by flags and by a query's last user text
 * (see the fixture's header).
 */
export const FAKE_WORKER = resolve(__dirname, '../../fixtures/fake-worker/worker.mjs');

export function fakeWorker(...flags: string[]): WorkerCommand {
  return { command: process.execPath, args: [FAKE_WORKER, ...flags] };
}

/** A command no process can start from. */
export const MISSING_WORKER: WorkerCommand = { command: join('/nonexistent', 'keel-node'), args: [] };

export const LIMITS = { maxTurns: 5, maxTokens: 1000, contextLimit: 100_000, retryLimit: 0, retryBaseMs: 0, lockTimeoutMs: 1000 };

export function turnInput(taskId: string, text: string): QueryInput {
  return { taskId, model: 'test-model', mode: 'default', messages: [{ role: 'user', content: [{ type: 'text', text }] }], limits: LIMITS, compactionFailures: 0, run: 1, priorCostUsd: 0 };
}

/** The parts of a query besides the turn (the fake worker ignores them; the schema does not). */
export function queryParts(): Omit<QueryParams, 'queryId' | 'taskId' | 'turn'> {
  return {
    runtime: { workspace: '/tmp', settingsFiles: [], sandbox: { enabled: false }, passEnv: [], heldSecrets: [] },
    provider: { provider: 'anthropic', model: 'test-model', baseUrl: 'http://127.0.0.1:9' },
    parentModes: [],
  };
}

export function queryParams(queryId: string, taskId: string, text: string): QueryParams {
  const t = turnInput(taskId, text);
  return { queryId, taskId, turn: { model: t.model, mode: t.mode, messages: t.messages, limits: t.limits, compactionFailures: 0, run: 1, priorCostUsd: 0 }, ...queryParts() };
}

/** One query run on a worker handle, as the host served it: what arrived (in order) and how it ended. */
export interface QueryRun {
  /** What the worker sent for the query, by kind: `session`, `event`, `permission`, then `complete`, `failed: …` or `lost: …`. */
  replies: string[];
  events: TaskEvent[];
  asked: PermissionRequest[];
  lost: string | null;
  /** Resolves once the query ended (answered, refused or lost). */
  done: Promise<string[]>;
}

/** Runs `text` as one query on `handle`, serving it like a host that answers every prompt with `answer`. */
export function runOn(handle: WorkerHandle, queryId: string, taskId: string, text: string, answer: PermissionAnswer = { decision: 'deny' }): QueryRun {
  const r: QueryRun = { replies: [], events: [], asked: [], lost: null, done: Promise.resolve([]) };
  r.done = new Promise((resolve) => {
    const end = (kind: string) => {
      r.replies.push(kind);
      resolve(r.replies);
    };
    const noMcp = () => Promise.reject(new Error('no MCP here'));
    const server: QueryServer = {
      session: () => void r.replies.push('session'),
      event: (p) => {
        r.replies.push('event');
        r.events.push(p.event);
      },
      subtaskStart: () => void r.replies.push('subtaskStart'),
      permission: async (p) => {
        r.replies.push('permission');
        r.asked.push(p.request);
        return answer;
      },
      durable: async () => ({}),
      budget: async () => ({ verdict: null }),
      mcpList: noMcp,
      mcpCall: noMcp,
      hookEvent: () => undefined,
      hookLog: () => undefined,
      hookStop: () => undefined,
      complete: () => end('complete'),
      failed: (message) => end(`failed: ${message}`),
      lost: (reason) => {
        r.lost = reason;
        end(`lost: ${reason}`);
      },
    };
    handle.runQuery(queryParams(queryId, taskId, text), server);
  });
  return r;
}

/** Resolves when `test` holds for the actor's snapshot; rejects after `ms` with what it saw. */
export function waitForSnapshot(actor: AnyActorRef, test: (s: AnyMachineSnapshot) => boolean, ms = 20_000, what = 'a state'): Promise<AnyMachineSnapshot> {
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const held: { sub?: { unsubscribe(): void } } = {};
    const check = (s: AnyMachineSnapshot) => {
      if (settled || !test(s)) return;
      settled = true;
      clearTimeout(timer);
      held.sub?.unsubscribe();
      resolvePromise(s);
    };
    const timer = setTimeout(() => {
      settled = true;
      held.sub?.unsubscribe();
      reject(new Error(`waited ${ms} ms for ${what}; the actor is in ${JSON.stringify((actor.getSnapshot() as AnyMachineSnapshot).value)}`));
    }, ms);
    check(actor.getSnapshot() as AnyMachineSnapshot);
    if (settled) return;
    const sub = actor.subscribe({ next: (s) => check(s as AnyMachineSnapshot), error: () => undefined, complete: () => check(actor.getSnapshot() as AnyMachineSnapshot) });
    held.sub = sub;
    if (settled) sub.unsubscribe();
  });
}

/** Resolves once `condition` holds (polled), rejecting after `ms`. Not a timed assertion: an upper bound on waiting. */
export async function eventually(condition: () => boolean, ms = 10_000, what = 'a condition'): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`gave up waiting for ${what} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const gone = (pid: number | null) => pid === null || !processAlive(pid);
