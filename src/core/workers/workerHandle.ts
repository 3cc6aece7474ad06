import { randomUUID } from 'node:crypto';
import type { EventObject, InspectionEvent } from 'xstate';
import type { IpcConnectionEmitted } from '../machines/ipcConnection/ipcConnection.machine';
import type { WorkerEmitted, WorkerEvent } from '../machines/worker/worker.machine';
import type { ChannelStats } from './channel';
import { createWorkerActor, openIpcConnection, type HealthLimits, type IpcConnectionActor, type WorkerActor } from './workerActors';
import { PROTOCOL_VERSION, toHost, toWorker, type QueryParams, type QueryResult, type ToHost, type ToWorker } from './protocol';
import { RpcEndpoint, RpcFailure, type Handlers, type ParamsOf } from './rpc';
import { launchWorkerProcess } from './processLauncher';
import { killProcessGroup, type WorkerCommand } from './spawnWorker';
import { sweepWorkerProcesses, sweepWorkerProcessesInBackground, WORKER_TAG_ENV } from './workerSweep';

/**
 * One worker process as the pool holds it: its worker machine (its actors: workerActors.ts; the
 * `process` actor's work — the child, its ipcConnection — is done here), the protocol's endpoint on its
 * channel (rpc.ts), and the routing of the worker's query-scoped messages to the server of the
 * query that owns the worker right now (`queryHandlers`). Contract: a message for any other query
 * breaks the connection (the worker is replaced; a request is refused); when the worker dies with
 * a query attached, that query's server is told `lost` exactly once; after `dead` nothing more is
 * delivered.
 *
 * No process the worker started outlives it: a worker that ends on its own stops its commands
 * (cli/worker.ts); one that dies by a signal, or that the host kills, has every process carrying
 * its tag killed here (workerSweep.ts), and so does every live worker when the host process exits.
 */
/** How long a closed connection waits for the process's exit before it is reported on its own. */
const EXIT_AFTER_CLOSE_MS = 1000;

export interface WorkerTimeouts extends HealthLimits {
  readyMs: number;
  shutdownGraceMs: number;
}

export interface WorkerHandleOptions {
  command: WorkerCommand;
  timeouts: WorkerTimeouts;
  maxLineBytes: number;
  /** Lines waiting before reading from this worker pauses (back-pressure). */
  highWater?: number;
  /** The nice value the worker runs at (workerPriority.ts); null: the host's own. */
  niceness: number | null;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  onEmitted(event: WorkerEmitted): void;
  /** xstate inspection of the worker's machines (tests measure coverage with it). */
  inspect?: (event: InspectionEvent) => void;
}

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

/** The query the worker has now, and how to withdraw it. */
interface RunningQuery {
  queryId: string;
  server: QueryServer;
  /** Cancels the `query` request (the worker stops the turn and still answers). */
  cancel(): void;
}

export interface WorkerHealth {
  uptimeMs: number;
  rssBytes: number;
  at: number;
}

export class WorkerHandle {
  readonly actor: WorkerActor;
  /** The worker process's pid once it exists (the `ready` message says it again). */
  private childPid: number | null = null;
  private exited = false;
  /** In the worker's environment and so its commands' (workerSweep.ts). */
  private readonly tag = randomUUID();
  private swept = false;
  private query: RunningQuery | null = null;
  /** The protocol on the current connection (null before it is up and after it is down). */
  private rpc: RpcEndpoint<ToHost, ToWorker> | null = null;
  /** When the worker last sent anything, even part of a message (the health clock counts it as a sign of life). */
  private lastHeardAt = 0;
  private healthWaiters: (() => void)[] = [];
  health: WorkerHealth | null = null;
  /** The last channel statistics (back-pressure pauses, longest queue), for tests and the bench. */
  channelStats: ChannelStats | null = null;

  constructor(
    readonly id: string,
    private readonly opts: WorkerHandleOptions,
  ) {
    this.actor = createWorkerActor(
      { workerId: id, readyTimeoutMs: opts.timeouts.readyMs, shutdownGraceMs: opts.timeouts.shutdownGraceMs },
      { process: (sendBack, receive) => this.runProcess(sendBack, receive), timeouts: opts.timeouts, lastHeardAt: () => this.lastHeardAt },
      opts.inspect,
    );
    for (const type of ['worker:ready', 'worker:busy', 'worker:idle', 'worker:crashed', 'worker:stopped'] as const) {
      // Handled after the worker's transition (the pool reacts by driving other actors).
      this.actor.on(type, (e) => queueMicrotask(() => this.onEmitted(e)));
    }
  }

  start(): void {
    this.actor.start();
  }

  get pid(): number | null {
    return this.childPid;
  }

  get state(): string {
    const v = this.actor.getSnapshot().value;
    return typeof v === 'string' ? v : Object.keys(v)[0] ?? '';
  }

  /**
   * Sends the `query` request and routes the worker's messages for it to `server` until it is
   * answered or the worker dies. The pool calls this only for a worker it has just marked busy
   * for this query.
   */
  runQuery(params: QueryParams, server: QueryServer): void {
    const rpc = this.rpc;
    const controller = new AbortController();
    const q: RunningQuery = { queryId: params.queryId, server, cancel: () => controller.abort() };
    this.query = q;
    this.actor.send({ type: 'ASSIGN', queryId: params.queryId });
    if (!rpc) return;
    rpc.request('query', params, { signal: controller.signal }).then(
      (result) => this.finishQuery(q, () => server.complete(result)),
      (err: unknown) => {
        // A refusal is the worker's answer; a closed connection is the worker's death (`lost`).
        if (err instanceof RpcFailure) this.finishQuery(q, () => server.failed(err.message));
      },
    );
  }

  /** Tells the worker something about the current query (its mode, a sub-agent's answer); nothing for another query. */
  notifyQuery<M extends 'setMode' | 'subtaskResult'>(method: M, params: ParamsOf<ToWorker, M> & { queryId: string }): void {
    if (this.query?.queryId === params.queryId) this.rpc?.notify(method, params);
  }

  private finishQuery(q: RunningQuery, tell: () => void): void {
    if (this.query !== q) return;
    this.query = null;
    tell();
    this.actor.send({ type: 'QUERY_DONE', queryId: q.queryId });
  }

  /** Asks the worker to stop `queryId`; a worker that does not answer within the grace period is killed. */
  cancelQuery(queryId: string): void {
    if (this.alive) this.actor.send({ type: 'CANCEL_QUERY', queryId });
  }

  /** Stops the worker (see the worker machine); nothing once it is dead. */
  shutdown(graceful: boolean, reason: string): void {
    if (this.alive) this.actor.send({ type: 'SHUTDOWN', graceful, reason });
  }

  private get alive(): boolean {
    return this.actor.getSnapshot().status === 'active';
  }

  /** Asks for a health answer now; resolves when it comes or after `ms`. */
  refreshHealth(ms: number): Promise<void> {
    if (this.state !== 'ready' && this.state !== 'busy') return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.healthWaiters.push(done);
      this.checkHealth();
    });
  }

  /** One health check: its answer is the worker's memory and uptime (and tells the health clock). */
  private checkHealth(): void {
    this.rpc?.request('health', {}).then(
      (h) => {
        this.health = { uptimeMs: h.uptime, rssBytes: h.rssBytes, at: Date.now() };
        this.actor.send({ type: 'HEALTH_OK' });
        this.wakeHealthWaiters();
      },
      () => undefined,
    );
  }

  /** The `process` actor: the child, its socket, and what they say, as worker-machine events. */
  private runProcess(sendBack: (e: WorkerEvent) => void, receive: (listener: (e: EventObject) => void) => void): () => void {
    const violation = (reason: string) => {
      ipc.send({ type: 'CLOSE', reason: `protocol violation: ${reason}` });
      this.opts.log('warn', `worker ${this.id}: protocol violation: ${reason}; the worker is replaced`);
      sendBack({ type: 'DISCONNECTED', reason: `protocol violation: ${reason}`, broken: true });
    };
    // The messages go between the channel and the protocol's endpoint directly; the connection's
    // machine hears its lifecycle only (ipcConnection.machine.ts).
    const { actor: ipc, door } = openIpcConnection(
      this.id,
      { maxLineBytes: this.opts.maxLineBytes, ...(this.opts.highWater ? { highWater: this.opts.highWater } : {}) },
      {
        opened: (channel) => {
          this.rpc = new RpcEndpoint<ToHost, ToWorker>((m) => channel.send(m), toHost, toWorker, { ready: (p) => this.onReady(p, sendBack, ipc), ...this.queryHandlers(violation) }, violation);
        },
        message: (m) => {
          this.lastHeardAt = Date.now();
          this.rpc?.receive(m);
        },
        stats: (s) => (this.channelStats = { ...s }),
      },
      this.opts.inspect,
    );
    let exitWait: NodeJS.Timeout | undefined;
    // The process's exit, held until its channel has given up what the worker wrote before dying.
    let heldExit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    const reportExit = () => {
      clearTimeout(exitWait);
      if (heldExit) sendBack({ type: 'EXITED', ...heldExit });
      heldExit = null;
    };
    ipc.on('ipc:disconnected', (e: Extract<IpcConnectionEmitted, { type: 'ipc:disconnected' }>) => {
      this.rpc?.close(e.reason);
      if (e.broken) {
        this.opts.log('warn', `worker ${this.id}: ${e.reason}; the worker is replaced`);
        sendBack({ type: 'DISCONNECTED', reason: e.reason, broken: true });
        return;
      }
      // The process exited first: its channel has now delivered everything, so its exit is told.
      if (heldExit) return reportExit();
      // A closed connection is usually the process dying; its exit (code, signal) says more, so
      // wait a moment for it before reporting the connection alone.
      if (this.exited) return;
      exitWait = setTimeout(() => {
        if (!this.exited) sendBack({ type: 'DISCONNECTED', reason: e.reason, broken: false });
      }, EXIT_AFTER_CLOSE_MS);
    });
    ipc.start();
    ipc.send({ type: 'OPEN' });
    // Off the event loop (processLauncher.ts): spawning blocks the thread that does it.
    const command: WorkerCommand = { ...this.opts.command, env: { ...this.opts.command.env, [WORKER_TAG_ENV]: this.tag } };
    // Below the host's CPU priority from its start (workerPriority.ts).
    const withdrawSpawn = launchWorkerProcess(command, this.id, this.opts.niceness, {
      // The worker's inherited channel: the only way to reach it (spawnWorker.ts, WORKER_CHANNEL_FD).
      channel: (stream) => {
        door.attach(stream);
        // Bytes arriving are a sign of life, even the parts of a message not yet whole (healthClock).
        stream.on('data', () => (this.lastHeardAt = Date.now()));
      },
      spawned: (pid) => {
        this.childPid = pid;
        liveWorkers.add(this);
      },
      error: (message, pid) => {
        if (pid !== undefined) return;
        door.fail(message);
        sendBack({ type: 'SPAWN_FAILED', reason: message });
      },
      exit: (code, signal) => {
        this.exited = true;
        liveWorkers.delete(this);
        // Killed (not ended by its own code): it could not stop its commands.
        if (signal) this.sweep();
        heldExit = { code, signal };
        // The exit can be seen before the last lines the worker wrote are read (a text streamed,
        // a result made durable, then a crash): those are delivered first, so nothing it said is
        // lost. A channel some other process still holds open is waited for a moment only. The
        // connection is `connected` from the channel's hand-over until it closed.
        if (ipc.getSnapshot().value !== 'connected') return reportExit();
        exitWait = setTimeout(reportExit, EXIT_AFTER_CLOSE_MS);
      },
      stderr: (text) => this.opts.log('info', `worker ${this.id}: ${text.trimEnd()}`),
      warn: (message) => this.opts.log('warn', `worker ${this.id}: ${message}`),
    });
    receive((event) => {
      switch (event.type) {
        case 'SEND_HEALTH_CHECK':
          this.checkHealth();
          break;
        case 'SEND_CANCEL':
          if (this.query?.queryId === (event as EventObject & { queryId: string }).queryId) this.query.cancel();
          break;
        case 'SEND_SHUTDOWN':
          // Answered once the worker's query has settled; its connection's close then ends it.
          this.rpc?.request('shutdown', { graceful: true }).catch(() => undefined);
          break;
      }
    });
    return () => {
      withdrawSpawn();
      clearTimeout(exitWait);
      // The worker is dead as far as the pool is concerned: make it so.
      ipc.send({ type: 'CLOSE', reason: 'the worker was stopped' });
      ipc.stop();
      this.rpc?.close('the worker was stopped');
      if (!this.exited) this.kill();
    };
  }

  /**
   * The handlers of the worker's query-scoped messages: each goes to the server of the query it
   * names, which must be the one the worker has now — a message for any other query is a protocol
   * violation (`violation` breaks the connection; a request is refused).
   */
  private queryHandlers(violation: (reason: string) => void): Omit<Handlers<ToHost>, 'ready'> {
    const route = (queryId: string, what: string): QueryServer | null => {
      if (this.query?.queryId === queryId) return this.query.server;
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

  /** SIGKILL to the worker's process group and to every process carrying its tag (`now`: synchronously, for a host on its way out). */
  kill(now = false): void {
    liveWorkers.delete(this);
    if (this.childPid === null) return;
    killProcessGroup(this.childPid);
    if (now) sweepWorkerProcesses(this.tag);
    else this.sweep();
  }

  /** Kills what the dead worker left (once; in the background: a /proc scan is 5–30 ms). */
  private sweep(): void {
    if (this.swept) return;
    this.swept = true;
    void sweepWorkerProcessesInBackground(this.tag).catch((err: unknown) => this.opts.log('warn', `worker ${this.id}: could not look for the processes it left: ${String(err)}`));
  }

  /** `ready`: the worker is up — on the pid it was started as, speaking this protocol, or it is not taken. */
  private onReady(m: { pid: number; protocol: number }, sendBack: (e: WorkerEvent) => void, ipc: IpcConnectionActor): void {
    // The channel is the process's own (inherited); a `ready` naming another pid is a lie.
    const problem =
      m.protocol !== PROTOCOL_VERSION
        ? `the worker speaks protocol ${m.protocol}, not ${PROTOCOL_VERSION}`
        : this.childPid !== null && m.pid !== this.childPid
          ? `the worker says it is pid ${m.pid}, but it was started as pid ${this.childPid}`
          : null;
    if (problem) {
      ipc.send({ type: 'CLOSE', reason: problem });
      sendBack({ type: 'DISCONNECTED', reason: problem, broken: true });
      return;
    }
    sendBack({ type: 'READY', pid: m.pid });
  }

  private onEmitted(e: WorkerEmitted): void {
    if (e.type === 'worker:crashed' || e.type === 'worker:stopped') {
      const q = this.query;
      this.query = null;
      this.rpc?.close(e.reason);
      if (q) q.server.lost(e.reason);
      this.wakeHealthWaiters();
    }
    this.opts.onEmitted(e);
  }

  private wakeHealthWaiters(): void {
    for (const w of this.healthWaiters.splice(0)) w();
  }
}

/**
 * Workers whose process exists and has not been seen to exit. When the host process exits (its
 * own end, after whatever grace it gave them), they are killed with their commands: a worker
 * never outlives its host by more than the time it takes to see its socket close, and a stuck
 * one (which would not see it) not at all.
 */
const liveWorkers = new Set<WorkerHandle>();
process.on('exit', () => {
  for (const w of [...liveWorkers]) w.kill(true);
});
