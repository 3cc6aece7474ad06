import { errorMessage } from '../../../shared/domain/errors';
import { assign, enqueueActions, fromCallback, fromPromise, setup, type EventObject } from 'xstate';
import { backoffDelay } from '../../mcp/limits';
import {
  McpConnectFailure,
  type McpCallOutput,
  type McpCallsEvent,
  type McpConnectionContext,
  type McpConnectionEmitted,
  type McpConnectionEvent,
  type McpConnectionInput,
  type McpInitialized,
  type McpVia,
} from './types';

export type { McpConnectionContext, McpConnectionEmitted, McpConnectionEvent, McpConnectionInput } from './types';

/**
 * One MCP server connection (the catalog's mcp connection machine):
 *
 *   disconnected → connecting → (stdio | streamableHttp | sse) → initializing → ready.{idle,
 *   toolCall, resourceRead} → error → restarting → connecting …; a remote server that wants an
 *   OAuth sign-in → needsAuthorization ─SIGNED_IN→ connecting
 *
 * `connecting` picks the transport from the configuration; `initializing` runs the MCP handshake
 * and lists tools, resources and prompts. Streamable HTTP that answers with an old server's 4xx
 * falls back to `sse` once. A failure anywhere is `error` (the connection is closed there); a
 * retryable one restarts after a backoff (1, 2, 4, 8, 16 s by default, 30 s cap); when
 * `maxRestartAttempts` (5) restarts in a row failed too, it stays in `error` until RESTART. A
 * connection that stayed ready for `stableAfterMs` forgets its failed attempts. In `ready`, one
 * invoked `runCalls` actor runs every tool call and resource read (CALL_TOOL / READ_RESOURCE are
 * forwarded to it; it answers CALL_DONE / READ_DONE), so calls of several tasks run side by side;
 * the context counts them and the substate shows what is in flight. Each call taken ends with
 * exactly one emitted `callDone` (its output, or none when it was cancelled or the connection left
 * `ready` first). A call that finds the HTTP session expired (404) re-initializes (`connecting`).
 * Leaving `ready` ends every call in flight (their callers see no output and report the
 * connection's `lastError`). `DISABLE` from anywhere closes the connection until `ENABLE`.
 *
 * Why one actor for all calls rather than a spawned child per call: a child per call cost an
 * actor, an AbortController and a done event whose type is unique to the call — which xstate
 * memoizes per state node, so the memo grew with every call for the life of the connection.
 *
 * No I/O here: every actor is a stub that the hub replaces (`machine.provide`) with real ones
 * built on the MCP SDK. Snapshots are not persisted: a connection is live state, rebuilt by
 * connecting again.
 */
const isRetryable = (error: unknown): boolean => !(error instanceof McpConnectFailure) || error.retryable;
/** The call an event ends (CANCEL_CALL, CALL_DONE, READ_DONE); '' for any other event. */
const endedId = (event: McpConnectionEvent): string => (event.type === 'CANCEL_CALL' || event.type === 'CALL_DONE' || event.type === 'READ_DONE' ? event.callId : '');

export const mcpConnectionMachine = setup({
  types: {
    context: {} as McpConnectionContext,
    input: {} as McpConnectionInput,
    events: {} as McpConnectionEvent,
    emitted: {} as McpConnectionEmitted,
  },
  actors: {
    /** Spawns the server process (closing any previous connection first). */
    openStdio: fromPromise<void, { server: string }>(async () => {
      throw new McpConnectFailure('no MCP transport wired');
    }),
    /** Prepares a Streamable HTTP transport (no request yet: initialize is the first). */
    openStreamableHttp: fromPromise<void, { server: string }>(async () => {
      throw new McpConnectFailure('no MCP transport wired');
    }),
    /** Opens the legacy SSE stream and waits for its endpoint event. */
    openSse: fromPromise<void, { server: string }>(async () => {
      throw new McpConnectFailure('no MCP transport wired');
    }),
    /** The MCP handshake, then tools/resources/prompts lists; throws McpConnectFailure. */
    initialize: fromPromise<McpInitialized, { server: string; via: McpVia }>(async () => {
      throw new McpConnectFailure('no MCP client wired');
    }),
    /**
     * Watches the live connection while ready: sends CONNECTION_LOST when it closes or breaks,
     * TOOLS_UPDATED / RESOURCES_UPDATED / PROMPTS_UPDATED after a list_changed notification.
     */
    watchConnection: fromCallback<EventObject, { server: string }>(() => () => {}),
    /** Closes the connection (kills a stdio server). Idempotent; never rejects. */
    closeConnection: fromPromise<void, { server: string }>(async () => {}),
    /**
     * Runs the calls and reads of a ready connection: receives CALL_TOOL, READ_RESOURCE and
     * CANCEL_CALL, answers each call with CALL_DONE / READ_DONE (failures are data, never a
     * rejection). Stopped when the machine leaves `ready`, which abandons what is in flight.
     */
    runCalls: fromCallback<McpCallsEvent, { server: string }>(({ receive, sendBack }) => {
      receive((e) => {
        const output = { ok: false as const, kind: 'failed' as const, message: 'no MCP client wired' };
        if (e.type === 'CALL_TOOL') sendBack({ type: 'CALL_DONE', callId: e.callId, output });
        else if (e.type === 'READ_RESOURCE') sendBack({ type: 'READ_DONE', callId: e.callId, output });
      });
    }),
  },
  delays: {
    restartDelay: ({ context }) => backoffDelay(context.limits, context.attempts),
    stableAfter: ({ context }) => context.limits.stableAfterMs,
  },
  guards: {
    startsDisabled: ({ context }) => Boolean(context.disabled),
    usesStdio: ({ context }) => context.transport === 'stdio',
    usesSse: ({ context }) => context.transport === 'sse',
    canFallBackToSse: ({ context }, p: { error: unknown }) => context.transport === 'http' && context.via === 'streamableHttp' && p.error instanceof McpConnectFailure && p.error.fallbackToSse,
    needsSignIn: (_, p: { error: unknown }) => p.error instanceof McpConnectFailure && p.error.needsSignIn,
    canRestart: ({ context }) => context.retryable && context.attempts <= context.limits.maxRestartAttempts,
    hasCalls: ({ context }) => context.calls.length > 0,
    // Whether calls / reads stay in flight once the event's call has ended (the substate after it).
    callsRemain: ({ context, event }) => context.calls.some((c) => c !== endedId(event)),
    readsRemain: ({ context, event }) => context.reads.some((r) => r !== endedId(event)),
    isNotInFlight: ({ context, event }) => !context.calls.includes(endedId(event)) && !context.reads.includes(endedId(event)),
    sessionExpired: (_, p: { output: McpCallOutput }) => !p.output.ok && p.output.kind === 'session_expired',
  },
  actions: {
    /** Counts a call or read as in flight and hands it to the runCalls actor. */
    takeCall: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'CALL_TOOL') return;
      enqueue.assign({ calls: [...context.calls, event.callId] });
      enqueue.sendTo('calls', event);
    }),
    takeRead: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'READ_RESOURCE') return;
      enqueue.assign({ reads: [...context.reads, event.callId] });
      enqueue.sendTo('calls', event);
    }),
    /**
     * Drops a finished (CALL_DONE, READ_DONE) or cancelled (CANCEL_CALL, forwarded to runCalls)
     * call from the counters and tells its caller how it ended; a call no longer in flight (a
     * late answer) changes nothing.
     */
    endCall: enqueueActions(({ context, event, enqueue }) => {
      const id = endedId(event);
      if (event.type === 'CANCEL_CALL') enqueue.sendTo('calls', event);
      if (!context.calls.includes(id) && !context.reads.includes(id)) return;
      const output = event.type === 'CALL_DONE' || event.type === 'READ_DONE' ? event.output : undefined;
      enqueue.assign({ calls: context.calls.filter((c) => c !== id), reads: context.reads.filter((r) => r !== id) });
      enqueue.emit({ type: 'callDone', callId: id, output });
    }),
    /**
     * Leaving `ready`: every call in flight ends. The one whose answer made it leave (an expired
     * session) gets that answer, so the hub can make it again; the others end without output.
     */
    endAllCalls: enqueueActions(({ context, event, enqueue }) => {
      const answered = event.type === 'CALL_DONE' ? event : undefined;
      for (const id of [...context.calls, ...context.reads]) enqueue.emit({ type: 'callDone', callId: id, output: answered?.callId === id ? answered.output : undefined });
      enqueue.assign({ calls: [], reads: [] });
    }),
  },
}).createMachine({
  id: 'mcpConnection',
  context: ({ input }) => ({ ...input, via: null, attempts: 0, lastError: null, retryable: true, initialized: null, calls: [], reads: [] }),
  initial: 'disconnected',
  on: {
    DISABLE: { target: '.disabled' },
    STOP: { target: '.disconnected' },
  },
  states: {
    disconnected: {
      always: { guard: 'startsDisabled', target: 'disabled' },
      invoke: { src: 'closeConnection', input: ({ context }) => ({ server: context.server }) },
      // A fresh start: earlier failures (before a STOP) do not count against it.
      on: {
        CONNECT: { target: 'connecting', actions: assign({ attempts: 0 }) },
        RESTART: { target: 'connecting', actions: assign({ attempts: 0 }) },
        ENABLE: { target: 'connecting', actions: assign({ attempts: 0 }) },
      },
    },
    connecting: {
      entry: assign({ via: null }),
      always: [{ guard: 'usesStdio', target: 'stdio' }, { guard: 'usesSse', target: 'sse' }, { target: 'streamableHttp' }],
    },
    stdio: {
      entry: assign({ via: 'stdio' }),
      invoke: {
        src: 'openStdio',
        input: ({ context }) => ({ server: context.server }),
        onDone: 'initializing',
        // A local process never asks for an OAuth sign-in.
        onError: { target: 'error', actions: assign({ lastError: ({ event }) => errorMessage(event.error), retryable: ({ event }) => isRetryable(event.error) }) },
      },
    },
    streamableHttp: {
      entry: assign({ via: 'streamableHttp' }),
      invoke: {
        src: 'openStreamableHttp',
        input: ({ context }) => ({ server: context.server }),
        onDone: 'initializing',
        onError: [
          { guard: { type: 'needsSignIn', params: ({ event }) => ({ error: event.error }) }, target: 'needsAuthorization', actions: assign({ lastError: ({ event }) => errorMessage(event.error) }) },
          { target: 'error', actions: assign({ lastError: ({ event }) => errorMessage(event.error), retryable: ({ event }) => isRetryable(event.error) }) },
        ],
      },
    },
    sse: {
      entry: assign({ via: 'sse' }),
      invoke: {
        src: 'openSse',
        input: ({ context }) => ({ server: context.server }),
        onDone: 'initializing',
        onError: [
          { guard: { type: 'needsSignIn', params: ({ event }) => ({ error: event.error }) }, target: 'needsAuthorization', actions: assign({ lastError: ({ event }) => errorMessage(event.error) }) },
          { target: 'error', actions: assign({ lastError: ({ event }) => errorMessage(event.error), retryable: ({ event }) => isRetryable(event.error) }) },
        ],
      },
    },
    initializing: {
      invoke: {
        src: 'initialize',
        input: ({ context }) => ({ server: context.server, via: context.via ?? 'stdio' }),
        onDone: { target: 'ready', actions: assign({ initialized: ({ event }) => event.output, lastError: null, retryable: true }) },
        onError: [
          { guard: { type: 'canFallBackToSse', params: ({ event }) => ({ error: event.error }) }, target: 'sse' },
          { guard: { type: 'needsSignIn', params: ({ event }) => ({ error: event.error }) }, target: 'needsAuthorization', actions: assign({ lastError: ({ event }) => errorMessage(event.error) }) },
          { target: 'error', actions: assign({ lastError: ({ event }) => errorMessage(event.error), retryable: ({ event }) => isRetryable(event.error) }) },
        ],
      },
    },
    ready: {
      invoke: [
        { src: 'watchConnection', input: ({ context }) => ({ server: context.server }) },
        { id: 'calls', src: 'runCalls', input: ({ context }) => ({ server: context.server }) },
      ],
      exit: 'endAllCalls',
      initial: 'idle',
      // The substate is set by the transitions that change what is in flight (no eventless
      // transitions: they would cost a microstep on every event).
      states: { idle: {}, toolCall: {}, resourceRead: {} },
      after: { stableAfter: { actions: assign({ attempts: 0 }) } },
      on: {
        CALL_TOOL: { target: '.toolCall', actions: 'takeCall' },
        READ_RESOURCE: [
          { guard: 'hasCalls', actions: 'takeRead' },
          { target: '.resourceRead', actions: 'takeRead' },
        ],
        // Each end of a call goes to the substate of what stays in flight.
        CANCEL_CALL: [
          { guard: 'isNotInFlight' },
          { guard: 'callsRemain', target: '.toolCall', actions: 'endCall' },
          { guard: 'readsRemain', target: '.resourceRead', actions: 'endCall' },
          { target: '.idle', actions: 'endCall' },
        ],
        CALL_DONE: [
          // endAllCalls (the exit) hands this answer to its caller.
          {
            guard: { type: 'sessionExpired', params: ({ event }) => ({ output: event.output }) },
            target: 'connecting',
            actions: assign({ lastError: 'the HTTP session expired (404); initializing a new one' }),
          },
          { guard: 'callsRemain', target: '.toolCall', actions: 'endCall' },
          { guard: 'readsRemain', target: '.resourceRead', actions: 'endCall' },
          { target: '.idle', actions: 'endCall' },
        ],
        READ_DONE: [
          { guard: 'hasCalls', target: '.toolCall', actions: 'endCall' },
          { guard: 'readsRemain', target: '.resourceRead', actions: 'endCall' },
          { target: '.idle', actions: 'endCall' },
        ],
        TOOLS_UPDATED: { actions: assign({ initialized: ({ context, event }) => (context.initialized ? { ...context.initialized, tools: event.tools } : null) }) },
        RESOURCES_UPDATED: { actions: assign({ initialized: ({ context, event }) => (context.initialized ? { ...context.initialized, resources: event.resources } : null) }) },
        PROMPTS_UPDATED: { actions: assign({ initialized: ({ context, event }) => (context.initialized ? { ...context.initialized, prompts: event.prompts } : null) }) },
        CONNECTION_LOST: { target: 'error', actions: assign({ lastError: ({ event }) => event.reason, retryable: true }) },
        AUTHORIZATION_REQUIRED: { target: 'needsAuthorization', actions: assign({ lastError: ({ event }) => event.reason }) },
        RESTART: { target: 'connecting', actions: assign({ attempts: 0 }) },
      },
    },
    /**
     * The server wants an OAuth sign-in (no tokens, or tokens that could not be refreshed). Not
     * an error and no restart loop: only the person can go on (Sign in on the MCP page, `keel mcp
     * login`); SIGNED_IN (or RESTART) connects again.
     */
    needsAuthorization: {
      entry: assign({ initialized: null }),
      invoke: { src: 'closeConnection', input: ({ context }) => ({ server: context.server }) },
      on: {
        SIGNED_IN: { target: 'connecting', actions: assign({ attempts: 0, lastError: null }) },
        RESTART: { target: 'connecting', actions: assign({ attempts: 0, lastError: null }) },
      },
    },
    error: {
      entry: assign({ attempts: ({ context }) => context.attempts + 1, initialized: null }),
      invoke: {
        src: 'closeConnection',
        input: ({ context }) => ({ server: context.server }),
        onDone: { guard: 'canRestart', target: 'restarting' },
      },
      on: { RESTART: { target: 'connecting', actions: assign({ attempts: 0, lastError: null }) } },
    },
    restarting: {
      after: { restartDelay: 'connecting' },
      on: { RESTART: { target: 'connecting', actions: assign({ attempts: 0 }) } },
    },
    disabled: {
      entry: assign({ initialized: null, disabled: true }),
      invoke: { src: 'closeConnection', input: ({ context }) => ({ server: context.server }) },
      on: { ENABLE: { target: 'connecting', actions: assign({ disabled: false, attempts: 0, lastError: null }) } },
    },
  },
});

export type McpConnectionMachine = typeof mcpConnectionMachine;
