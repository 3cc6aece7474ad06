import { assign, setup } from 'xstate';

/**
 * The catalog's agent-status machine: what one task, sub-agent or loop is doing, for the status
 * board. Driven only by events (hook events, task events, loop events — see board/events.ts),
 * never by polling:
 *
 *   waiting → working (PROMPT, ACTIVITY) ; working → attention.permission | attention.input ;
 *   attention → working (ANSWERED, ACTIVITY) ; working → compacting → working ;
 *   working | attention | compacting → done (STOPPED) | error (FAILED) ;
 *   done | error → working (a follow-up: PROMPT, ACTIVITY)
 *
 * Usage (tokens, cost) is counted in every state.
 */
export type AgentStatusEvent =
  | { type: 'PROMPT' }
  | { type: 'ACTIVITY' }
  | { type: 'NEEDS_PERMISSION' }
  | { type: 'NEEDS_INPUT' }
  | { type: 'ANSWERED' }
  | { type: 'COMPACTING' }
  | { type: 'STOPPED' }
  | { type: 'FAILED' }
  | { type: 'USAGE'; tokens: number; costUsd: number };

export interface AgentStatusContext {
  tokens: number;
  costUsd: number;
}

export const agentStatusMachine = setup({
  types: {
    context: {} as AgentStatusContext,
    events: {} as AgentStatusEvent,
  },
  actions: {
    addUsage: assign(({ context }, p: { tokens: number; costUsd: number }) => ({ tokens: context.tokens + p.tokens, costUsd: context.costUsd + p.costUsd })),
  },
}).createMachine({
  id: 'agentStatus',
  context: { tokens: 0, costUsd: 0 },
  initial: 'waiting',
  on: {
    USAGE: { actions: { type: 'addUsage', params: ({ event }) => ({ tokens: event.tokens, costUsd: event.costUsd }) } },
  },
  states: {
    waiting: {
      on: { PROMPT: 'working', ACTIVITY: 'working', NEEDS_PERMISSION: 'attention.permission', NEEDS_INPUT: 'attention.input', STOPPED: 'done', FAILED: 'error' },
    },
    working: {
      on: { NEEDS_PERMISSION: 'attention.permission', NEEDS_INPUT: 'attention.input', COMPACTING: 'compacting', STOPPED: 'done', FAILED: 'error' },
    },
    attention: {
      initial: 'permission',
      states: { permission: {}, input: {} },
      on: { ANSWERED: 'working', ACTIVITY: 'working', PROMPT: 'working', STOPPED: 'done', FAILED: 'error' },
    },
    compacting: {
      on: { ACTIVITY: 'working', STOPPED: 'done', FAILED: 'error', NEEDS_PERMISSION: 'attention.permission' },
    },
    done: {
      on: { PROMPT: 'working', ACTIVITY: 'working', NEEDS_INPUT: 'attention.input', FAILED: 'error' },
    },
    error: {
      on: { PROMPT: 'working', ACTIVITY: 'working', STOPPED: 'done' },
    },
  },
});
