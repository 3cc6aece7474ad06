import { fromCallback, fromPromise, type EventObject } from 'xstate';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent } from '../../shared/domain/events';
import { queryMachine, workerLostMessage, type QueryEvent, type QueryInput, type WorkerLease } from '../machines/query/query.machine';
import type { PermissionAsker } from '../permissions/gate';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { McpHostServer, type McpHostDeps } from './mcpHostServer';
import type { WorkerHookInput } from '../hooks/schemas';
import type { PoolLease, WorkerPool } from './pool';
import type { QueryMessage, QueryReply, ToWorker } from './protocol';

/**
 * The query machine with its real actors: `acquire` leases a worker of `pool` for the task,
 * `execute` sends the query to it once and turns its replies into query events. What the worker
 * must ask the owner of the task comes up here and is answered by the host: a permission prompt
 * (through `asker`, by the prompt's id; a later prompt never answers an earlier one), a durability
 * barrier before a tool runs (`durable`), a Task call (`SUBTASK_START` to the task machine, whose
 * SUBTASK_RESULT goes back down). What the task's hooks, run by the worker, report goes to `hooks`.
 *
 * Contract: the query is sent at most once; if the worker dies after that, `WORKER_LOST` ends the
 * query (it is never re-sent). A cancel is forwarded to the worker; the worker machine kills a
 * worker that does not answer it within the grace period, which also ends the query.
 */
export interface RemoteTurnDeps {
  pool: WorkerPool;
  /** What the worker needs besides the turn: its runtime (workspace, env policy), the provider, the ancestors' modes. */
  queryParts(input: QueryInput): Omit<QueryMessage, 'type' | 'queryId' | 'taskId' | 'turn'>;
  asker: PermissionAsker;
  publish(event: TaskEvent): void;
  durable?(): Promise<void>;
  /** How long a query may wait for a worker before it is rejected (default 5 min). */
  waitLimitMs?: number;
  /** A sub-agent's queries may start a worker beyond the pool's size (its parent holds one while it waits). */
  overflow?: boolean;
  /** The modes of the task's ancestors, for a SET_MODE sent down mid-query. */
  parentModes?: PermissionMode[];
  /**
   * The worker died while it ran the query (not after a cancel): the owner of the task marks it
   * interrupted (resumable). Called once, after the query has ended.
   */
  onWorkerLost?(message: string): void;
  /**
   * The task's MCP servers (the host's hub) and the host's permission decision for its calls:
   * the worker lists and calls their tools through the host (workers/mcpHostServer.ts).
   */
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
          // The query stopped waiting (cancel, wait limit) just as the worker came: hand it back.
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
        let cancelled = false;
        receive((event) => {
          if (event.type === 'CANCEL') {
            cancelled = true;
            return lease.handle.cancelQuery(input.queryId);
          }
          const m = toWorkerMessage(input.queryId, event, deps.parentModes ?? []);
          if (m) lease.handle.send(m);
        });
        return runOnWorker(deps, lease, input.queryId, input.input, sendBack, () => cancelled);
      }),
    },
    actions: {
      publish: (_, event) => {
        if (event) deps.publish(event);
      },
    },
    delays: { waitLimit: deps.waitLimitMs ?? 5 * 60_000 },
  });

  function runOnWorker(deps: RemoteTurnDeps, lease: PoolLease, queryId: string, turn: QueryInput, sendBack: (e: QueryEvent) => void, cancelled: () => boolean): () => void {
    const handle = lease.handle;
    let live = true;
    const prompts = new Map<string, AbortController>();
    // The host's hub serves this query's MCP calls; closed (every call aborted) when the query ends.
    const mcp = deps.mcp ? new McpHostServer(queryId, deps.mcp, (m) => send(m)) : null;
    const send = (m: ToWorker) => {
      if (live) handle.send(m);
    };
    const fail = (error: KeelError) => {
      if (live) sendBack({ type: 'QUERY_FAILED', error });
    };
    handle.runQuery(
      {
        type: 'query',
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
      {
        reply: (m: QueryReply): string | void => {
          if (!live) return;
          switch (m.type) {
            case 'session':
              return sendBack({ type: 'WORKER_STARTED', sessionId: m.sessionId, warm: m.warm });
            case 'message':
              return sendBack({ type: 'WORKER_EVENT', event: m.event });
            case 'complete':
              return sendBack({ type: 'QUERY_COMPLETE', output: m.output });
            case 'error':
              return fail(m.error);
            case 'subtask_start':
              return sendBack({ type: 'SUBTASK_START', toolCallId: m.toolCallId, description: m.description, prompt: m.prompt });
            case 'durable_request':
              void (deps.durable?.() ?? Promise.resolve()).then(() => send({ type: 'durable_ok', queryId, requestId: m.requestId }));
              return;
            case 'permission_request': {
              const controller = new AbortController();
              prompts.set(m.promptId, controller);
              deps.asker.ask({ ...m.request, requestId: m.promptId }, controller.signal).then(
                (answer) => {
                  // The host's re-check of an MCP call knows this call was allowed by the person.
                  if (answer.decision === 'allow') mcp?.recordApproval(m.request.toolCallId, m.request.tool);
                  if (prompts.delete(m.promptId)) send({ type: 'permission_answer', queryId, promptId: m.promptId, answer });
                },
                () => {
                  if (prompts.delete(m.promptId)) send({ type: 'permission_answer', queryId, promptId: m.promptId, answer: { decision: 'deny', feedback: 'The prompt was withdrawn.' } });
                },
              );
              return;
            }
            case 'permission_cancel':
              prompts.get(m.promptId)?.abort();
              prompts.delete(m.promptId);
              return;
            case 'mcp_list':
            case 'mcp_call':
            case 'mcp_cancel':
              if (!mcp) return `an ${m.type} message, but this task has no MCP servers`;
              return mcp.receive(m);
            case 'hook_event':
              return deps.hooks?.announce(m.input);
            case 'hook_log':
              return deps.hooks?.log(m.level, m.message);
            case 'hook_stop':
              return deps.hooks?.requestStop(m.reason);
          }
        },
        lost: (reason) => {
          // The worker died: its MCP calls are aborted here (never made again by the host).
          mcp?.close();
          if (!live) return;
          // The owner interrupts the task first (stopping this query with it), so the task never
          // settles as failed for what was the executor's death.
          if (deps.onWorkerLost && !cancelled()) deps.onWorkerLost(workerLostMessage(reason));
          if (live) sendBack({ type: 'WORKER_LOST', reason });
        },
      },
    );
    return () => {
      live = false;
      mcp?.close();
      for (const c of prompts.values()) c.abort();
      prompts.clear();
    };
  }
}

/** What the query machine forwards to its worker while it runs (SET_MODE, SUBTASK_RESULT; CANCEL goes through the worker machine). */
export function toWorkerMessage(queryId: string, event: EventObject, parentModes: PermissionMode[]): ToWorker | null {
  const e = event as QueryEvent;
  switch (e.type) {
    case 'CANCEL':
      return { type: 'cancel', queryId };
    case 'SET_MODE':
      return { type: 'set_mode', queryId, mode: e.mode, parentModes };
    case 'SUBTASK_RESULT':
      return { type: 'subtask_result', queryId, toolCallId: e.toolCallId, result: e.result, summary: e.summary };
    default:
      return null;
  }
}
