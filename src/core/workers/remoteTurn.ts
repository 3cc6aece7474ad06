import { fromCallback, fromPromise, type EventObject } from 'xstate';
import { queryMachine, type QueryEvent, type QueryInput, type WorkerLease } from '../machines/query/query.machine';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { WorkerHookInput } from '../hooks/schemas';
import type { TurnHost } from '../runtime/turnHost';
import { McpHostServer, type McpHostDeps } from '../mcp/onWorkers/hostServer';
import type { PoolLease, WorkerPool } from './pool';
import type { QueryParams } from './protocol';
import type { QueryServer } from './workerHandle';

/**
 * The query machine with its real actors: `acquire` leases a worker of `pool` for the task,
 * `execute` sends it the query once and serves what its turn asks of the task's owner with the
 * task's own TurnHost (runtime/turnHost.ts) — the same code that serves a turn in the host's
 * process: its events are published, its permission prompts asked (by the prompt's id), its
 * durability barrier awaited, its MCP calls made through the host's hub (checked again first:
 * mcp/onWorkers/hostServer.ts), its Task calls handed to the task machine (SUBTASK_STARTED), and what the
 * task's hooks report goes to `hooks`.
 *
 * Contract: the query is sent at most once; if the worker dies after that, `WORKER_LOST` ends the
 * query (it is never re-sent). A cancel cancels the query's request (the worker stops the turn and
 * answers); the worker machine kills a worker that does not answer within the grace period,
 * which also ends the query.
 */
export interface RemoteTurnDeps {
  pool: WorkerPool;
  /** What the worker needs besides the turn: its runtime (workspace, env policy), the provider, the ancestors' modes. */
  queryParts(input: QueryInput): Omit<QueryParams, 'queryId' | 'taskId' | 'turn'>;
  /** The task's own TurnHost: every call of the worker's turn is served by it. */
  host: TurnHost;
  /** A sub-agent's queries may start a worker beyond the pool's size (its parent holds one while it waits). */
  overflow?: boolean;
  /** The modes of the task's ancestors now, for a SET_MODE sent down mid-query (they may have changed since the task was made). */
  parentModes?: () => PermissionMode[];
  /** How the host checks the worker's MCP calls before its hub makes them (mcp/onWorkers/hostServer.ts). */
  mcp?: McpHostDeps;
  /** Where the task's hooks run by the worker report to (docs/hooks.md, "Hooks on a worker"). */
  hooks?: RemoteHookSink;
}

/** What the host does for the hooks a worker ran: the same as for hooks it runs itself. */
export interface RemoteHookSink {
  /** An event the turn fired: the host's observers hear it; unapproved workspace hooks it matched are reported. */
  announce(input: WorkerHookInput): void;
  /** What the person must see (hook errors, `systemMessage`s). */
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /** A hook answered `"continue": false`: the task is stopped, the reason shown. */
  requestStop(reason: string): void;
}

export function remoteTurn(deps: RemoteTurnDeps) {
  const leases = new Map<string, PoolLease>();
  return queryMachine.provide({
    actors: {
      acquire: fromPromise<WorkerLease, { queryId: string; taskId: string }>(async ({ input, signal }) => {
        const lease = await deps.pool.acquire(input.taskId, signal, { overflow: deps.overflow === true });
        if (signal.aborted) {
          // The query stopped waiting (cancelled) just as the worker came: hand it back.
          lease.release();
          throw new Error('the query no longer waits for a worker');
        }
        leases.set(input.queryId, lease);
        return { workerId: lease.workerId, pid: lease.pid };
      }),
      execute: fromCallback<EventObject, { queryId: string; lease: WorkerLease; input: QueryInput }>(({ input, sendBack, receive }) => {
        const lease = leases.get(input.queryId);
        leases.delete(input.queryId);
        if (!lease) {
          sendBack({ type: 'WORKER_LOST', reason: 'the leased worker is gone' } satisfies QueryEvent);
          return () => undefined;
        }
        const { queryId } = input;
        receive((event) => {
          const e = event as QueryEvent;
          if (e.type === 'CANCEL') lease.handle.cancelQuery(queryId);
          else if (e.type === 'SET_MODE') lease.handle.notifyQuery('setMode', { queryId, mode: e.mode, parentModes: deps.parentModes?.() ?? [] });
          else if (e.type === 'SUBTASK_RESULT') lease.handle.notifyQuery('subtaskResult', { queryId, toolCallId: e.toolCallId, result: e.result, summary: e.summary });
        });
        return serve(lease, queryId, input.input, sendBack);
      }),
    },
    actions: {
      publish: (_, event) => {
        if (event) deps.host.publish(event);
      },
    },
  });

  /** Sends the query once and serves it with the task's TurnHost until it ends; returns the cleanup. */
  function serve(lease: PoolLease, queryId: string, turn: QueryInput, sendBack: (e: QueryEvent) => void): () => void {
    let live = true;
    // Prompts and MCP calls of this query end with it (the task stopped here), whatever the worker does.
    const stopped = new AbortController();
    const host = deps.host;
    // The host's hub serves this query's MCP calls, each checked again first.
    const mcp = deps.mcp ? new McpHostServer(deps.mcp) : null;
    const noMcp = () => Promise.reject(new Error('this task has no MCP servers'));
    const server: QueryServer = {
      session: (p) => live && sendBack({ type: 'WORKER_STARTED', sessionId: p.sessionId, warm: p.warm }),
      event: (p) => live && sendBack({ type: 'WORKER_EVENT', event: p.event }),
      subtaskStart: (p) => live && sendBack({ type: 'SUBTASK_START', toolCallId: p.toolCallId, description: p.description, prompt: p.prompt }),
      permission: async (p, { signal }) => {
        const answer = await host.asker.ask(p.request, AbortSignal.any([signal, stopped.signal]));
        // The host's re-check of an MCP call knows this call was allowed by the person.
        if (answer.decision === 'allow') mcp?.recordApproval(p.request.toolCallId, p.request.tool);
        return answer;
      },
      durable: async (_p, { signal }) => {
        // A record that failed never answers (main's rule, as in the host's process): the tool
        // waits, and the task (stopped as failed) cancels the query, which ends this request.
        await host.durable?.().catch(() => untilAborted(AbortSignal.any([signal, stopped.signal])));
        return {};
      },
      // The task's budget is the host's (it counts the sub-agents' spending too): it answers.
      budget: async (p) => ({ verdict: host.admit ? await host.admit({ taskId: turn.taskId, purpose: p.purpose, estimateUsd: p.estimateUsd }) : null }),
      mcpList: () => mcp?.list() ?? noMcp(),
      mcpCall: (p, context) => mcp?.call(p, { ...context, signal: AbortSignal.any([context.signal, stopped.signal]) }) ?? noMcp(),
      hookEvent: (p) => deps.hooks?.announce(p.input),
      hookLog: (p) => deps.hooks?.log(p.level, p.message),
      hookStop: (p) => deps.hooks?.requestStop(p.reason),
      complete: (result) => live && sendBack({ type: 'QUERY_COMPLETE', output: result }),
      failed: (message) => live && sendBack({ type: 'QUERY_FAILED', error: { code: 'internal', message: `The worker could not run this turn: ${message}`, retryable: false } }),
      // The query ends in `error` with `worker_lost` (or `cancelled`, after a cancel); the task
      // machine then marks the task interrupted — never failed for what was the executor's death.
      lost: (reason) => live && sendBack({ type: 'WORKER_LOST', reason }),
    };
    lease.handle.runQuery(
      {
        queryId,
        taskId: turn.taskId,
        turn: {
          model: turn.model,
          mode: turn.mode,
          messages: turn.messages,
          limits: turn.limits,
          compactionFailures: turn.compactionFailures,
          run: turn.run,
          priorCostUsd: turn.priorCostUsd,
        },
        ...deps.queryParts(turn),
        ...(mcp ? { mcp: true } : {}),
      },
      server,
    );
    return () => {
      live = false;
      stopped.abort();
    };
  }
}

/** Never resolves; rejects once `signal` aborts (a request that must not be answered, ended with its query). */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const stop = () => reject(new Error('the query ended'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}
