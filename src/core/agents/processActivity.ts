import { KEEL_VERSION } from '../../shared/version';
import { BusSocketServer } from '../events/busSocket';
import type { BusSubscription } from '../events/eventBus';
import { bridgeMcpEvents, type McpStatusSource } from '../mcp/events';
import { bridgeWorkerEvents, type WorkerEventSource } from '../events/workerEvents';
import { MetricsCollector } from '../events/metrics';
import { ActivityFeed } from '../events/activityFeed';
import { HookRunner } from '../hooks/runner';
import type { ConfiguredHook } from '../hooks/types';
import type { TrustItem, TrustView } from '../trust/items';
import { StatusBoard } from './board';
import { StatusPublisher, type PoolSource } from './statusSocket';
import { errorMessage } from '../../shared/domain/errors';

/**
 * What one Keel process (a `keel run`, a `keel loop`, a VS Code window) sets up once for its
 * tasks: its one event bus (`feed.bus`, src/core/events) and the activity view of it (`feed`),
 * the hook runner whose every event goes on the bus, the status board fed by it, the status
 * socket (`keel status`), the bus socket (`keel events --follow`), a metrics collector and a
 * logger of what goes wrong. Give `hooks` and `feed` to the TaskRuntime; call `start` to open the
 * sockets (the bus's `AppStarted`), `publishPool` / `publishMcp` to put the worker pool's and the
 * MCP hub's state changes on the bus, and `dispose` at the end (its `AppShutdown`).
 */
export interface ProcessActivityOptions {
  workspace: string;
  /** Keel's home: the status sockets live there. */
  keelHome: string;
  /** The person's approvals of the workspace: its own hooks run only as approved (docs/permissions.md, "Trust"). */
  trust: TrustView;
  /** The task storage whose `events/` folder `keel events --follow --storage` reads; no bus socket without it. */
  storage?: string;
  /** Names the host on the bus ("keel run", "VS Code window"). */
  label?: string;
  /** Home of the user settings file (tests). Default: the OS home. */
  home?: string;
  /** The environment of tool processes, which hooks get too (no provider keys). */
  environment(): NodeJS.ProcessEnv;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  onUnapproved?(hooks: ConfiguredHook[], items: TrustItem[]): void;
}

export class ProcessActivity {
  readonly feed: ActivityFeed;
  readonly hooks: HookRunner;
  readonly board: StatusBoard;
  private readonly publisher: StatusPublisher;
  readonly metrics = new MetricsCollector();
  private readonly stopObserving: () => void;
  private readonly logger: BusSubscription;
  private busSocket: BusSocketServer | null = null;
  /** Stops the worker and MCP bridges (before `AppShutdown`, which is the bus's last event). */
  private readonly bridges: (() => void)[] = [];
  private readonly label: string;

  constructor(private readonly opts: ProcessActivityOptions) {
    this.label = opts.label ?? 'keel';
    this.feed = new ActivityFeed((m) => opts.log('warn', m));
    this.hooks = new HookRunner({
      workspace: opts.workspace,
      trust: opts.trust,
      ...(opts.home ? { home: opts.home } : {}),
      environment: opts.environment,
      log: opts.log,
      ...(opts.onUnapproved ? { onUnapproved: opts.onUnapproved } : {}),
    });
    this.stopObserving = this.hooks.observe({ event: (input) => this.feed.publish({ kind: 'hook', at: Date.now(), input }) });
    this.board = new StatusBoard(this.feed);
    this.publisher = new StatusPublisher({
      keelHome: opts.keelHome,
      feed: this.feed,
      agents: () => this.board.rows().map((r) => ({ ...r, pid: process.pid })),
      onAgentsChanged: (l) => this.board.subscribe(l),
      log: opts.log,
    });
    this.metrics.attach(this.feed.bus);
    // The logger: a queued subscriber (it may fall behind; it says so) for what a person should hear of.
    this.logger = this.feed.bus.subscribe(
      (d) => {
        if (d.kind === 'Lagged') opts.log('warn', `event logger missed ${d.missed} events`);
        else if (d.kind === 'GatekeeperDecision' && d.decision === 'rejected') opts.log('info', `gatekeeper rejected a lesson of ${d.taskId} (${d.rule})`);
        else if (d.kind === 'SessionFailed') opts.log('info', `task ${d.taskId} ${d.status}${d.error ? `: ${d.error.message}` : ''}`);
      },
      { name: 'logger', filter: (e) => e.kind === 'SessionFailed' || e.kind === 'GatekeeperDecision' },
    );
  }

  /**
   * Publishes `AppStarted`, opens the bus socket (with `storage`) and the status socket. False
   * (logged) when the status socket cannot open; a bus socket that cannot is logged: Keel works on
   * without either.
   */
  async start(): Promise<boolean> {
    const hello = this.feed.bus.publish({ kind: 'AppStarted', host: this.label, pid: process.pid, version: KEEL_VERSION });
    if (this.opts.storage) {
      try {
        this.busSocket = await BusSocketServer.start(this.feed.bus, { storage: this.opts.storage, label: this.label, hello });
      } catch (err) {
        this.opts.log('warn', `event bus socket: ${errorMessage(err)}`);
      }
    }
    return this.publisher.start();
  }

  /** The process's worker pool goes on the status socket (`keel workers`), and its workers' state changes on the bus (`WorkerStateChanged`). */
  publishPool(pool: PoolSource & WorkerEventSource): void {
    this.publisher.publishPool(pool);
    this.bridges.push(bridgeWorkerEvents(this.feed.bus, pool, (err) => this.opts.log('warn', `worker events: ${errorMessage(err)}`)));
  }

  /** The MCP servers' state changes from now on go on the bus (`McpServerStateChanged`). */
  publishMcp(hub: McpStatusSource): void {
    this.bridges.push(bridgeMcpEvents(this.feed.bus, hub, (err) => this.opts.log('warn', `MCP events: ${errorMessage(err)}`)));
  }

  /** Publishes `AppShutdown`, lets bus readers take it, closes the sockets. */
  dispose(reason = 'exit'): Promise<void> {
    for (const stop of this.bridges.splice(0)) stop();
    this.feed.bus.publish({ kind: 'AppShutdown', host: this.label, pid: process.pid, reason });
    this.publisher.close();
    this.stopObserving();
    this.board.dispose();
    const closing = this.busSocket?.close() ?? Promise.resolve();
    this.busSocket = null;
    return closing.finally(() => {
      this.logger.unsubscribe();
      this.metrics.detach();
      this.feed.bus.close();
    });
  }
}
