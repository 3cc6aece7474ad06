import { createActor, type Actor } from 'xstate';
import { mcpConnectionMachine } from '../machines/mcpConnection/mcpConnection.machine';
import type { McpCallOutput, McpCallRequest, McpConnectionEmitted, McpReadOutput, McpReadRequest } from '../machines/mcpConnection/types';
import { McpConnectionIo, type ConnectionIoOptions, type ProgressListener } from './connectionIo';
import { backoffDelay, type McpLimits } from './limits';
import type { McpConnectionPhase, McpServerConfig } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * One configured server in a hub: its `mcpConnection` actor (wired to an `McpConnectionIo`) and
 * what the hub needs to know about it between snapshots. A server whose configuration cannot
 * be used (missing variables) has no actor: it shows as `error` with the problem.
 */
export type ConnectionActor = Actor<typeof mcpConnectionMachine>;

type CallRequest = Omit<McpCallRequest, 'callId' | 'signal'>;
type ReadRequest = Omit<McpReadRequest, 'callId' | 'signal'>;

const TRANSITIONAL = new Set<McpConnectionPhase>(['connecting', 'stdio', 'streamableHttp', 'sse', 'initializing']);

export class ServerConnection {
  readonly actor: ConnectionActor | null;
  readonly io: McpConnectionIo | null;
  /** Epoch ms of the next restart attempt while `restarting`. */
  restartAt: number | null = null;
  private readonly waiters = new Set<() => void>();
  /** Callers of calls in flight, by call id: the machine's `callDone` resolves them. */
  private readonly inFlight = new Map<string, (output: McpConnectionEmitted['output']) => void>();
  private nextCallId = 0;

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
      error: (err) => io.log('error', `MCP server ${config.name}: machine error: ${errorMessage(err)}`),
    });
    this.actor.on('callDone', (e) => this.inFlight.get(e.callId)?.(e.output));
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

  /**
   * One tool call (`call`) or resource read through the machine (`ready.toolCall` /
   * `ready.resourceRead` while it runs): resolves with its output, or undefined when it ended
   * without one — `signal` aborted (the machine forwards the cancel; the SDK tells the server), the
   * connection left `ready` during the call, or it was not ready to take it. Progress
   * notifications go to `onProgress`. Never rejects.
   */
  run(kind: 'call', request: CallRequest, signal: AbortSignal, onProgress?: ProgressListener): Promise<McpCallOutput | undefined>;
  run(kind: 'read', request: ReadRequest, signal: AbortSignal): Promise<McpReadOutput | undefined>;
  run(kind: 'call' | 'read', request: CallRequest | ReadRequest, signal: AbortSignal, onProgress?: ProgressListener): Promise<McpConnectionEmitted['output']> {
    const actor = this.actor;
    if (!actor || signal.aborted) return Promise.resolve(undefined);
    const callId = String(++this.nextCallId);
    return new Promise<McpConnectionEmitted['output']>((resolve) => {
      const cancel = () => actor.send({ type: 'CANCEL_CALL', callId });
      const progress = this.io?.progress;
      if (onProgress) progress?.set(callId, onProgress);
      this.inFlight.set(callId, (output) => {
        this.inFlight.delete(callId);
        signal.removeEventListener('abort', cancel);
        if (onProgress) progress?.delete(callId);
        resolve(output);
      });
      signal.addEventListener('abort', cancel, { once: true });
      actor.send(kind === 'call' ? { type: 'CALL_TOOL', callId, signal, ...(request as CallRequest) } : { type: 'READ_RESOURCE', callId, signal, ...(request as ReadRequest) });
      // Not ready (the event was not taken): no callDone will come.
      const { calls, reads } = actor.getSnapshot().context;
      if (!calls.includes(callId) && !reads.includes(callId)) this.inFlight.get(callId)?.(undefined);
    });
  }

  /** Stops the machine and closes the connection (a stdio server is ended). */
  async dispose(): Promise<void> {
    this.actor?.stop();
    for (const done of [...this.inFlight.values()]) done(undefined);
    for (const w of [...this.waiters]) w();
    await this.io?.close();
  }
}
