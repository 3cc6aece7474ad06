import { ActivityFeed } from '../hooks/feed';
import { HookRunner } from '../hooks/runner';
import type { ConfiguredHook } from '../hooks/types';
import { StatusBoard } from './board';
import { StatusPublisher, type PoolSource } from './statusSocket';

/**
 * What one Keel process (a `keel run`, a `keel loop`, a VS Code window) sets up once for its
 * tasks: the activity feed, the hook runner whose every event goes on the feed, the status board
 * fed by it, and the status socket publishing both (`keel status`). Give `hooks` and `feed` to the
 * TaskRuntime; call `start` to open the socket and `dispose` at the end.
 */
export interface ProcessActivityOptions {
  workspace: string;
  /** Keel's home: hook approvals and the status sockets live there. */
  keelHome: string;
  /** Home of the user settings file (tests). Default: the OS home. */
  home?: string;
  /** The environment of tool processes, which hooks get too (no provider keys). */
  environment(): NodeJS.ProcessEnv;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  onUnapproved?(hooks: ConfiguredHook[]): void;
}

export class ProcessActivity {
  readonly feed: ActivityFeed;
  readonly hooks: HookRunner;
  readonly board: StatusBoard;
  private readonly publisher: StatusPublisher;
  private readonly stopObserving: () => void;

  constructor(opts: ProcessActivityOptions) {
    this.feed = new ActivityFeed((m) => opts.log('warn', m));
    this.hooks = new HookRunner({
      workspace: opts.workspace,
      keelHome: opts.keelHome,
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
  }

  /** Opens the status socket; false (logged) when it cannot: Keel works on without it. */
  start(): Promise<boolean> {
    return this.publisher.start();
  }

  /** The process's worker pool goes on the status socket (`keel workers`). */
  publishPool(pool: PoolSource): void {
    this.publisher.publishPool(pool);
  }

  dispose(): void {
    this.publisher.close();
    this.stopObserving();
    this.board.dispose();
  }
}
