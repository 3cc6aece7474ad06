import type { KeelError } from '../../shared/domain/errors';
import { AnthropicProvider } from './anthropic';
import { createDemoProvider } from './demo';
import { OpenAICompatibleProvider } from './openai';
import { isProviderPlan, planProvider } from './plan';
import type { ModelProvider, ProviderConfig } from './types';

export { DEFAULT_ANTHROPIC_MODEL, NO_API_KEY_MESSAGE } from './plan';

/**
 * Builds the provider a config names. Never throws: a config that cannot work (the anthropic
 * provider without a key, an OpenAI-compatible server without a model, a base URL that is not
 * http(s)) is a `KeelError` (the checks: `planProvider`; a worker loads only the SDK it needs:
 * `loadProvider`).
 */
export function createProvider(config: ProviderConfig): ModelProvider | KeelError {
  const plan = planProvider(config);
  if (!isProviderPlan(plan)) return plan;
  switch (plan.kind) {
    case 'anthropic':
      return new AnthropicProvider(plan.options);
    case 'openai-compatible':
      return new OpenAICompatibleProvider(plan.options);
    case 'demo':
      return createDemoProvider();
  }
}

/** Narrows the result of {@link createProvider}. */
export function isModelProvider(value: ModelProvider | KeelError): value is ModelProvider {
  return 'stream' in value;
}

export type { ModelProvider, ProviderConfig, ProviderEvent, ProviderError, ProviderRequest } from './types';
export { AnthropicProvider } from './anthropic';
export { OpenAICompatibleProvider } from './openai';
export { ScriptedProvider, scriptedEvents } from './scripted';
export type { ScriptedTurn, ScriptedBlock, Script } from './scripted';
export { createDemoProvider, demoAnswer } from './demo';
export { costUsd, priceOf } from './pricing';
