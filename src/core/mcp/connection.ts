import { createActor, type Actor } from 'xstate';
import { mcpConnectionMachine } from '../machines/mcpConnection/mcpConnection.machine';
import { McpConnectionIo, type ConnectionIoOptions } from './connectionIo';
import { backoffDelay, type McpLimits } from './limits';
import type { McpConnectionPhase, McpServerConfig } from './types';

/**
 * One configured server in a hub: its `mcpConnection` actor (wired to an `McpConnectionIo`) and
 * what the hub needs to know about it between snapshots. A server whose configuration cannot
 * be used (missing variables) has no actor: it shows as `error` with the problem.
 */
export type ConnectionActor = Actor<typeof mcpConnectionMachine>;

const TRANSITIONAL = new Set<McpConnectionPhase>(['connecting', 'stdio', 'streamableHttp', 'sse', 'initializing']);

export class ServerConnection {
  readonly actor: ConnectionActor | null;
  readonly io: McpConnectionIo | null;
  /** Epoch ms of the next restart attempt while `restarting`. */
  restartAt: number | null = null;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly config: McpServerConfig,
    io: Omit<ConnectionIoOptions, 'name' | 'spec'>,
    private readonly limits: McpLimits,
    disabled: boolean,
    onChange: () => void,
  ) {
    if (!config.resolved) {
      this.actor = null;
      this.io = null;
      return;
    }
    this.io = new McpConnectionIo({ ...io, name: config.name, spec: config.resolved });
    const machine = mcpConnectionMachine.provide({ actors: this.io.actors() });
    this.actor = createActor(machine, {
      input: {
        server: config.name,
        transport: config.resolved.transport,
        limits: { maxRestartAttempts: limits.maxRestartAttempts, backoffMs: limits.backoffMs, stableAfterMs: limits.stableAfterMs },
        disabled,
      },
    });
    let previous: string | null = null;
    this.actor.subscribe({
      next: (s) => {
        const phase = this.phase();
        if (phase === 'restarting' && previous !== 'restarting') this.restartAt = Date.now() + backoffDelay(this.limits, s.context.attempts);
        if (phase !== 'restarting') this.restartAt = null;
        previous = phase;
        if (!TRANSITIONAL.has(phase)) for (const w of [...this.waiters]) w();
        onChange();
      },
      error: (err) => io.log('error', `MCP server ${config.name}: machine error: ${(err as Error).message}`),
    });
    this.actor.start();
  }

  get name(): string {
    return this.config.name;
  }

  /** The machine's top-level state (`error` for a server whose configuration cannot be used). */
  phase(): McpConnectionPhase {
    if (!this.actor) return 'error';
    const v = this.actor.getSnapshot().value;
    return (typeof v === 'string' ? v : Object.keys(v)[0]) as McpConnectionPhase;
  }

  /** The full state as a dotted path (`ready.toolCall`). */
  state(): string {
    if (!this.actor) return 'error';
    const v = this.actor.getSnapshot().value;
    if (typeof v === 'string') return v;
    const [k, sub] = Object.entries(v)[0] ?? ['', ''];
    return `${k}.${String(sub)}`;
  }

  isTransitional(): boolean {
    return TRANSITIONAL.has(this.phase());
  }

  /**
   * Resolves once the connection is out of its connecting states (ready, error, restarting,
   * disabled, disconnected) or after `timeoutMs`. Never rejects.
   */
  settled(timeoutMs: number): Promise<void> {
    if (!this.isTransitional()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref?.();
      this.waiters.add(done);
    });
  }

  /** Stops the machine and closes the connection (a stdio server is ended). */
  async dispose(): Promise<void> {
    this.actor?.stop();
    for (const w of [...this.waiters]) w();
    await this.io?.close();
  }
}
