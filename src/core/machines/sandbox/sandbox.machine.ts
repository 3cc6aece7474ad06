import { errorMessage } from '../../../shared/domain/errors';
import { assign, fromPromise, setup } from 'xstate';
import { isExcluded, type SandboxAvailability } from '../../sandbox/bwrap';

/**
 * How one Bash command runs (the catalog's sandbox machine, after Claude Code's sandbox). One
 * actor per command:
 *
 * checkConfig → disabled (the sandbox is off: run directly)
 *             | unsupported (on, but this is not Linux: refuse)
 *             | linux → classify → dangerouslyDisabled (the call asked to leave the sandbox;
 *                                    the permission engine always asked the person: run directly)
 *                                 | excluded (an excluded command prefix: run directly)
 *                                 | probing (is bwrap usable here? the `probeBwrap` actor)
 *                                     → unavailable (refuse, saying why)
 *                                     | sandboxed → checkNetwork → wrapped (no network)
 *                                                              | startingProxy (the runtime's one
 *                                                                proxy, `startProxy`) → wrapped
 *                                                                | unavailable
 *
 * Every outcome is a final state and the machine's output is the plan: run `direct`, run
 * `wrapped` in bwrap (with the proxy's socket when the allow-list is not empty), or `refused`
 * with the reason. A command is never run outside the sandbox because the sandbox failed.
 */
export interface SandboxInput {
  enabled: boolean;
  platform: string;
  command: string;
  dangerouslyDisableSandbox: boolean;
  excludedCommands: readonly string[];
  /** The allow-list is not empty: commands reach it through the proxy. */
  networkAllowed: boolean;
  bwrapPath?: string;
}

export type SandboxPlan =
  | { kind: 'direct'; why: 'disabled' | 'excluded' | 'dangerouslyDisabled' }
  | { kind: 'wrapped'; bwrap: string; proxySocket?: string }
  | { kind: 'refused'; reason: string };

interface SandboxContext extends SandboxInput {
  plan: SandboxPlan;
  bwrap: string;
}

export const sandboxMachine = setup({
  types: {
    context: {} as SandboxContext,
    input: {} as SandboxInput,
    output: {} as SandboxPlan,
  },
  actors: {
    /** Runs bwrap once (cached by the runtime) to learn whether it can sandbox here. */
    probeBwrap: fromPromise<SandboxAvailability, { bwrapPath?: string }>(async () => ({ available: false, reason: 'no bubblewrap probe wired' })),
    /** The runtime's network proxy, started on first use; resolves with its Unix socket. */
    startProxy: fromPromise<{ socketPath: string }, void>(async () => {
      throw new Error('no network proxy wired');
    }),
  },
  guards: {
    sandboxOff: ({ context }) => !context.enabled,
    notLinux: ({ context }) => context.platform !== 'linux',
    asksToLeave: ({ context }) => context.dangerouslyDisableSandbox,
    excludedCommand: ({ context }) => isExcluded(context.command, context.excludedCommands),
    bwrapUsable: (_, p: { availability: SandboxAvailability }) => p.availability.available,
    networkAllowed: ({ context }) => context.networkAllowed,
  },
}).createMachine({
  id: 'sandbox',
  context: ({ input }) => ({ ...input, plan: { kind: 'refused', reason: 'the sandbox decided nothing' }, bwrap: '' }),
  initial: 'checkConfig',
  states: {
    checkConfig: {
      always: [{ guard: 'sandboxOff', target: 'disabled' }, { guard: 'notLinux', target: 'unsupported' }, { target: 'linux' }],
    },
    disabled: { type: 'final', entry: assign({ plan: { kind: 'direct', why: 'disabled' } }) },
    unsupported: {
      type: 'final',
      entry: assign({ plan: ({ context }) => ({ kind: 'refused', reason: `the sandbox needs Linux with bubblewrap; this is ${context.platform}` }) }),
    },
    linux: {
      initial: 'classify',
      states: {
        classify: {
          always: [{ guard: 'asksToLeave', target: 'dangerouslyDisabled' }, { guard: 'excludedCommand', target: 'excluded' }, { target: 'probing' }],
        },
        dangerouslyDisabled: { type: 'final', entry: assign({ plan: { kind: 'direct', why: 'dangerouslyDisabled' } }) },
        excluded: { type: 'final', entry: assign({ plan: { kind: 'direct', why: 'excluded' } }) },
        probing: {
          invoke: {
            id: 'probeBwrap',
            src: 'probeBwrap',
            input: ({ context }) => (context.bwrapPath !== undefined ? { bwrapPath: context.bwrapPath } : {}),
            onDone: [
              {
                guard: { type: 'bwrapUsable', params: ({ event }) => ({ availability: event.output }) },
                target: 'sandboxed',
                actions: assign({ bwrap: ({ event }) => (event.output.available ? event.output.bwrap : '') }),
              },
              { target: 'unavailable', actions: assign({ plan: ({ event }) => ({ kind: 'refused', reason: event.output.available ? 'bwrap is unusable' : event.output.reason }) }) },
            ],
            onError: { target: 'unavailable', actions: assign({ plan: ({ event }) => ({ kind: 'refused', reason: `bwrap could not be checked (${errorMessage(event.error)})` }) }) },
          },
        },
        sandboxed: {
          initial: 'checkNetwork',
          states: {
            checkNetwork: {
              always: [
                { guard: 'networkAllowed', target: 'startingProxy' },
                { target: '#sandbox.linux.wrapped', actions: assign({ plan: ({ context }) => ({ kind: 'wrapped', bwrap: context.bwrap }) }) },
              ],
            },
            startingProxy: {
              invoke: {
                id: 'startProxy',
                src: 'startProxy',
                onDone: { target: '#sandbox.linux.wrapped', actions: assign({ plan: ({ context, event }) => ({ kind: 'wrapped', bwrap: context.bwrap, proxySocket: event.output.socketPath }) }) },
                onError: {
                  target: '#sandbox.linux.unavailable',
                  actions: assign({ plan: ({ event }) => ({ kind: 'refused', reason: `the sandbox's network proxy could not start (${errorMessage(event.error)})` }) }),
                },
              },
            },
          },
        },
        wrapped: { type: 'final' },
        unavailable: { type: 'final' },
      },
      onDone: 'settled',
    },
    settled: { type: 'final' },
  },
  output: ({ context }) => context.plan,
});
