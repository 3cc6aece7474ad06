import { dirname } from 'node:path';
import { createActor, fromPromise, toPromise, type InspectionEvent } from 'xstate';
import { sandboxMachine, type SandboxPlan } from '../machines/sandbox/sandbox.machine';
import { bwrapCommand, detectSandbox } from './bwrap';
import { decideAddresses } from './addresses';
import { checkDomainPattern, decideHost } from './domains';
import { forwarderLauncher } from './forwarder';
import { NetworkProxy, type NetworkProxyOptions } from './networkProxy';
import type { SandboxSettings } from './settings';

export interface SandboxOptions {
  log?(level: 'info' | 'warn' | 'error', message: string): void;
  /** The proxy's resolver (default: the system's). Tests map their names to a loopback server. */
  lookup?: NetworkProxyOptions['lookup'];
  /** Tests only: the port the proxy connects to for a port a command asked for (never the address). */
  portFor?: NetworkProxyOptions['portFor'];
  /** Folder for the proxy's private socket folder (default: the OS temp folder). */
  runtimeDir?: string;
  /** xstate inspection of every command's sandbox actor (tests, `keel` inspection). */
  inspect?(event: InspectionEvent): void;
  /** Default `process.platform`. */
  platform?: string;
}

export interface LaunchRequest {
  command: string;
  dangerouslyDisableSandbox?: boolean;
  workspace: string;
  /** The shell that runs `-c command`. */
  shell: string;
}

/** What to spawn for a command, or why it must not run. */
export type Launch = { kind: 'run'; file: string; args: string[]; plan: SandboxPlan } | { kind: 'refused'; reason: string };

/**
 * The Bash sandbox of one runtime: runs the sandbox machine for every command and owns the
 * network proxy, started on the first sandboxed command while the allow-list is not empty and
 * shared by every task of the runtime until `dispose`. `launch` never throws.
 */
export class Sandbox {
  private proxy: Promise<NetworkProxy> | undefined;
  private disposed: Promise<void> | undefined;

  constructor(
    readonly settings: SandboxSettings,
    private readonly opts: SandboxOptions = {},
  ) {}

  /** A sandbox that is off: every command runs directly (the machine still decides so). */
  static off(): Sandbox {
    return new Sandbox({ enabled: false });
  }

  async launch(req: LaunchRequest): Promise<Launch> {
    const plan = await this.plan(req);
    switch (plan.kind) {
      case 'refused':
        return plan;
      case 'direct':
        return { kind: 'run', file: req.shell, args: ['-c', req.command], plan };
      case 'wrapped': {
        const network = plan.proxySocket ? { socketDir: dirname(plan.proxySocket), ...forwarderLauncher(plan.proxySocket) } : undefined;
        const cmd = bwrapCommand({
          bwrap: plan.bwrap,
          shell: req.shell,
          command: req.command,
          workspace: req.workspace,
          ...(this.settings.writablePaths ? { writablePaths: this.settings.writablePaths } : {}),
          ...(network ? { network } : {}),
        });
        return { kind: 'run', ...cmd, plan };
      }
    }
  }

  /** The machine's decision for one command. */
  async plan(req: Pick<LaunchRequest, 'command' | 'dangerouslyDisableSandbox'>): Promise<SandboxPlan> {
    const s = this.settings;
    const machine = sandboxMachine.provide({
      actors: {
        probeBwrap: fromPromise(async ({ input }: { input: { bwrapPath?: string } }) => detectSandbox(input.bwrapPath)),
        startProxy: fromPromise(async () => ({ socketPath: (await this.ensureProxy()).socketPath })),
      },
    });
    const actor = createActor(machine, {
      input: {
        enabled: s.enabled,
        platform: this.opts.platform ?? process.platform,
        command: req.command,
        dangerouslyDisableSandbox: req.dangerouslyDisableSandbox === true,
        excludedCommands: s.excludedCommands ?? [],
        networkAllowed: (s.network?.allowedDomains?.length ?? 0) > 0,
        ...(s.bwrapPath !== undefined ? { bwrapPath: s.bwrapPath } : {}),
      },
      ...(this.opts.inspect ? { inspect: this.opts.inspect } : {}),
    });
    const done = toPromise(actor);
    actor.start();
    try {
      return await done;
    } catch (err) {
      return { kind: 'refused', reason: `the sandbox failed (${err instanceof Error ? err.message : String(err)})` };
    }
  }

  /**
   * Closes the proxy (cutting open connections); resolves when it is closed, however often it is
   * called. Later sandboxed commands that need the network are refused.
   */
  dispose(): Promise<void> {
    if (!this.disposed) {
      const proxy = this.proxy;
      this.proxy = undefined;
      this.disposed = proxy ? proxy.then((p) => p.close()).catch(() => undefined) : Promise.resolve();
    }
    return this.disposed;
  }

  private ensureProxy(): Promise<NetworkProxy> {
    if (this.disposed) return Promise.reject(new Error('the runtime was disposed'));
    if (!this.proxy) {
      const allowed = this.patterns(this.settings.network?.allowedDomains);
      const denied = this.patterns(this.settings.network?.deniedDomains);
      const started = NetworkProxy.start({
        decide: (host) => decideHost(host, allowed, denied),
        checkAddresses: (host, addresses) => decideAddresses(host, addresses, allowed, denied),
        ...(this.opts.lookup ? { lookup: this.opts.lookup } : {}),
        ...(this.opts.portFor ? { portFor: this.opts.portFor } : {}),
        ...(this.opts.runtimeDir ? { parentDir: this.opts.runtimeDir } : {}),
        log: (level, message) => this.opts.log?.(level, message),
      });
      this.proxy = started;
      // A proxy that could not start is tried again by the next command.
      started.catch(() => {
        if (this.proxy === started) this.proxy = undefined;
      });
      void started.then((p) => {
        if (this.disposed) void p.close(); // disposed while starting
        else this.opts.log?.('info', `sandbox network: proxy listening on ${p.socketPath} for ${allowed.join(', ')}`);
      }, () => undefined);
    }
    return this.proxy;
  }

  /** Settings given in code may not be normalised as the loaders do; a bad pattern is logged and left out. */
  private patterns(list: readonly string[] | undefined): string[] {
    const out: string[] = [];
    for (const raw of list ?? []) {
      const c = checkDomainPattern(raw);
      if (c.ok) out.push(c.pattern);
      else this.opts.log?.('warn', `sandbox network: ${c.problem}; it is ignored`);
    }
    return out;
  }
}

