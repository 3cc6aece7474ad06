import type { TaskEvent } from '../../shared/domain/events';
import type { LoopEvent } from '../../shared/domain/loop';
import type { HookInput } from '../hooks/types';
import type { McpApprovalState, McpConnectionPhase } from '../mcp/types';

/**
 * The kinds of event on a process's event bus (src/core/events/eventBus.ts). Everything that
 * happens in a host passes through it: every task event as it is published (`TaskEvent`), and
 * the seed's typed kinds derived from them or published by the parts that own them. "Session" here
 * is one task (a session of work), not a view attached to it.
 *
 * Adding a kind: add it to `BusEventInit` below (a literal `kind`, typed fields). Subscribers
 * switch on `kind`; a kind they do not know is theirs to ignore.
 */
export type BusEventInit =
  /** A host (a `keel` process, an extension host) created its bus. */
  | { kind: 'AppStarted'; host: string; pid: number; version: string }
  /** The host is ending (dispose, SIGTERM): the last event of its bus. */
  | { kind: 'AppShutdown'; host: string; pid: number; reason: string }
  /** A task was started or taken over by this process (`resumed`: it came from the store). */
  | { kind: 'SessionCreated'; taskId: string; title: string; resumed: boolean; parentId?: string }
  /**
   * A machine of a task entered a state: `task` and `turn` from the task's own events,
   * `runPhases` for the run's phase (with `run`, the run's number in the task).
   */
  | { kind: 'SessionStateChanged'; taskId: string; machine: string; state: string; run?: number }
  /** A tool call of a task was made, decided or finished. */
  | {
      kind: 'ToolEventReceived';
      taskId: string;
      toolCallId: string;
      tool: string;
      stage: 'call' | 'permission' | 'result';
      decision?: 'allow' | 'deny' | 'ask';
      isError?: boolean;
      summary?: string;
    }
  /** Memories a run's memory search injected into its context. */
  | { kind: 'MemoryHit'; taskId: string; run: number; hits: { file: string; title: string; score: number }[] }
  /** The gatekeeper's decision at the end of a run, with the rule that decided and its reasons. */
  | { kind: 'GatekeeperDecision'; taskId: string; run: number; decision: 'saved' | 'rejected' | 'skipped'; rule: string; reasons: string[]; file?: string }
  /** A run of the task ended well (`done` with status completed). */
  | { kind: 'SessionCompleted'; taskId: string; stopReason: string | null }
  /** A run ended otherwise: failed (waiting for the user), aborted (cancelled) or interrupted. */
  | { kind: 'SessionFailed'; taskId: string; status: 'failed' | 'aborted' | 'interrupted'; error?: { code: string; message: string } }
  /**
   * One task event exactly as the task published it (what the views fold), after the store
   * recorded it. `parentId`: the task that started it (a sub-agent); `title`: the task's title then;
   * `taskSeq`: its number among the events this process delivered for the task (from 1; what a
   * view compares with the `eventSeq()` its snapshot covered, to skip what the snapshot holds).
   */
  | { kind: 'TaskEvent'; taskId: string; event: TaskEvent; parentId?: string; title?: string; taskSeq?: number }
  /** A hook event as Keel fires it (whether or not a hook is configured for it). */
  | { kind: 'HookEvent'; input: HookInput }
  /** An event of a loop (`keel loop`, the loop command). */
  | { kind: 'LoopEvent'; event: LoopEvent }
  /**
   * A worker process of the host's pool (src/core/workers) changed state, as its `worker` machine
   * announced it (workerEvents.ts). `workerPid`: its process (null before it was known; not `pid`,
   * which a `keel events` line uses for the host); `taskId`: the
   * task it is bound to (serving it, or last served); `queryId` when busy; `queriesProcessed` when
   * idle; `reason` when it crashed or stopped.
   */
  | {
      kind: 'WorkerStateChanged';
      workerId: string;
      state: WorkerBusState;
      workerPid: number | null;
      taskId?: string;
      queryId?: string;
      queriesProcessed?: number;
      reason?: string;
    }
  /**
   * An MCP server's connection (its `mcpConnection` machine, src/core/mcp/hub.ts) changed state
   * or approval (mcp/events.ts): `phase` the top-level state, `state` the full one (`ready.toolCall`),
   * `previous` the full state before (null for a server not seen before). `attempts`: failed
   * attempts since the last stable connection; `tools`: how many it offers once ready.
   */
  | {
      kind: 'McpServerStateChanged';
      server: string;
      phase: McpConnectionPhase;
      state: string;
      previous: string | null;
      approval: McpApprovalState;
      attempts: number;
      tools: number;
      lastError?: string;
    };

/** The states of a worker a `WorkerStateChanged` reports (the worker machine's announcements). */
export type WorkerBusState = 'ready' | 'busy' | 'idle' | 'crashed' | 'stopped';

export type BusEventKind = BusEventInit['kind'];

/** An event as subscribers receive it: numbered (per bus, from 1, no gaps) and timed (epoch ms). */
export type BusEvent = BusEventInit & { seq: number; at: number };

/** Delivered to a queued subscriber in place of the events it missed while it was behind. */
export interface LaggedNotice {
  kind: 'Lagged';
  /** How many events this subscriber will never see. */
  missed: number;
  /** The seq of the next event it will see. */
  nextSeq: number;
}

/** What a queued subscriber's handler receives, in bus order. */
export type BusDelivery = BusEvent | LaggedNotice;

/** Narrows a bus event to one kind. */
export type BusEventOf<K extends BusEventKind> = Extract<BusEvent, { kind: K }>;
