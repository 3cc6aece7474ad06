import { assign, initialTransition, setup } from 'xstate';
import { DEFAULT_MODEL, normalizeModelId } from './normalize';

/**
 * Which model a request uses. Precedence: an environment override (KEEL_MODEL, set by whoever
 * started the host) > the model the user selected (setting or command) > the provider default.
 * In plan mode the plan model is used when one is configured. Every id is normalised (aliases,
 * case).
 *
 * States say where the choice came from: resolved.{fromEnv, fromUser, fromDefault}, each with a
 * plan-mode variant decided by a guard; any input change re-resolves.
 */
export interface ModelSelectionContext {
  envModel: string | null;
  userModel: string | null;
  planModel: string | null;
  providerDefault: string;
  planMode: boolean;
  /** The answer: the normalised model id to send. */
  model: string;
}

export type ModelSelectionEvent =
  | { type: 'USER_SELECTED'; model: string | null }
  | { type: 'ENV_CHANGED'; model: string | null }
  | { type: 'PLAN_MODEL_SET'; model: string | null }
  | { type: 'MODE_CHANGED'; planMode: boolean }
  | { type: 'PROVIDER_CHANGED'; providerDefault: string };

export interface ModelSelectionInput {
  envModel?: string | null;
  userModel?: string | null;
  planModel?: string | null;
  providerDefault?: string;
  planMode?: boolean;
}

const pick = (c: ModelSelectionContext, base: string | null): string => {
  if (c.planMode && c.planModel) return c.planModel;
  return base ?? c.providerDefault;
};

export const modelSelectionMachine = setup({
  types: {
    context: {} as ModelSelectionContext,
    events: {} as ModelSelectionEvent,
    input: {} as ModelSelectionInput,
  },
  guards: {
    hasEnv: ({ context }) => context.envModel !== null,
    hasUser: ({ context }) => context.userModel !== null,
  },
  actions: {
    chooseEnv: assign({ model: ({ context }) => pick(context, context.envModel) }),
    chooseUser: assign({ model: ({ context }) => pick(context, context.userModel) }),
    chooseDefault: assign({ model: ({ context }) => pick(context, null) }),
  },
}).createMachine({
  id: 'modelSelection',
  context: ({ input }) => ({
    envModel: normalizeModelId(input.envModel),
    userModel: normalizeModelId(input.userModel),
    planModel: normalizeModelId(input.planModel),
    providerDefault: normalizeModelId(input.providerDefault) ?? DEFAULT_MODEL,
    planMode: input.planMode ?? false,
    model: DEFAULT_MODEL,
  }),
  initial: 'resolving',
  on: {
    USER_SELECTED: { target: '.resolving', actions: assign({ userModel: ({ event }) => normalizeModelId(event.model) }) },
    ENV_CHANGED: { target: '.resolving', actions: assign({ envModel: ({ event }) => normalizeModelId(event.model) }) },
    PLAN_MODEL_SET: { target: '.resolving', actions: assign({ planModel: ({ event }) => normalizeModelId(event.model) }) },
    MODE_CHANGED: { target: '.resolving', actions: assign({ planMode: ({ event }) => event.planMode }) },
    PROVIDER_CHANGED: { target: '.resolving', actions: assign({ providerDefault: ({ event }) => normalizeModelId(event.providerDefault) ?? DEFAULT_MODEL }) },
  },
  states: {
    resolving: {
      always: [
        { guard: 'hasEnv', target: 'resolved.fromEnv', actions: 'chooseEnv' },
        { guard: 'hasUser', target: 'resolved.fromUser', actions: 'chooseUser' },
        { target: 'resolved.fromDefault', actions: 'chooseDefault' },
      ],
    },
    resolved: {
      initial: 'fromDefault',
      states: { fromEnv: {}, fromUser: {}, fromDefault: {} },
    },
  },
});

/**
 * The machine's answer for `input`, computed as a pure initial transition (no actor is started),
 * so hosts may call it anywhere, including from another machine's action. Pure; never throws.
 */
export function resolveModel(input: ModelSelectionInput): string {
  const [snapshot] = initialTransition(modelSelectionMachine, input);
  return snapshot.context.model;
}
