import type { Handlers } from './rpc';
import type { QueryParams, QueryResult, ToHost } from './protocol';

/**
 * The host's side of one query on a worker: the `toHost` methods that name a query (protocol.ts),
 * served for it (workers/remoteTurn.ts serves them with the task's own TurnHost), and how the
 * query ended.
 */
export type QueryServer = Omit<Handlers<ToHost>, 'ready'> & {
  /** The worker answered the query (its turn's result). */
  complete(result: QueryResult): void;
  /** The worker refused or could not run the query (not a model failure: those are in the result). */
  failed(message: string): void;
  /** The worker died, or its connection broke, while it had the query. Called at most once. */
  lost(reason: string): void;
};

/** A query the worker has now, and how to withdraw it. */
export interface RunningQuery {
  queryId: string;
  server: QueryServer;
  /** Cancels the `query` request (the worker stops the turn and still answers). */
  cancel(): void;
}

/**
 * The host's handlers for a worker's query-scoped messages: each goes to the server of the query
 * it names, which must be the one the worker has now — a message for any other query is a
 * protocol violation (`violation` breaks the connection; a request is refused).
 */
export function queryHandlers(current: () => RunningQuery | null, violation: (reason: string) => void): Omit<Handlers<ToHost>, 'ready'> {
  const route = (queryId: string, what: string): QueryServer | null => {
    const q = current();
    if (q && q.queryId === queryId) return q.server;
    violation(`${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} for query ${queryId}, which the worker does not have`);
    return null;
  };
  const refused = (what: string) => Promise.reject(new Error(`${what} for a query this worker does not have`));
  return {
    session: (p) => route(p.queryId, 'session')?.session(p),
    event: (p) => route(p.queryId, 'event')?.event(p),
    subtaskStart: (p) => route(p.queryId, 'subtaskStart')?.subtaskStart(p),
    hookEvent: (p) => route(p.queryId, 'hookEvent')?.hookEvent(p),
    hookLog: (p) => route(p.queryId, 'hookLog')?.hookLog(p),
    hookStop: (p) => route(p.queryId, 'hookStop')?.hookStop(p),
    permission: (p, c) => route(p.queryId, 'permission')?.permission(p, c) ?? refused('a permission request'),
    durable: (p, c) => route(p.queryId, 'durable')?.durable(p, c) ?? refused('a durability request'),
    budget: (p, c) => route(p.queryId, 'budget')?.budget(p, c) ?? refused('a budget request'),
    mcpList: (p, c) => route(p.queryId, 'mcpList')?.mcpList(p, c) ?? refused('an MCP tool list'),
    mcpCall: (p, c) => route(p.queryId, 'mcpCall')?.mcpCall(p, c) ?? refused('an MCP call'),
  };
}

/** The params of the `query` request for one run. */
export type { QueryParams };
