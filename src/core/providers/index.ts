import type { KeelError } from '../../shared/domain/errors';
import type { ModelProvider } from './types';

export { DEFAULT_ANTHROPIC_MODEL, NO_API_KEY_MESSAGE } from './plan';
/** The one way to build a provider from its config (the host and a worker alike): load.ts. */
export { loadProvider } from './load';

/** Narrows the result of `loadProvider`. */
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
