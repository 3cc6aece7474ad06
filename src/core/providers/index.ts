import type { KeelError } from '../../shared/domain/errors';
import { DEFAULT_MODELS } from '../../shared/domain/models';
import { AnthropicProvider } from './anthropic';
import { baseUrlError } from './connectionErrors';
import { createDemoProvider } from './demo';
import { OpenAICompatibleProvider } from './openai';
import type { ModelProvider, ProviderConfig } from './types';

export const DEFAULT_ANTHROPIC_MODEL = DEFAULT_MODELS.anthropic;

/** The fact only: how to give a key is the host's advice (TaskRuntimeOptions.advise). */
export const NO_API_KEY_MESSAGE = 'No Anthropic API key is set.';

/**
 * Builds the provider a config names. Never throws: a config that cannot work (the anthropic
 * provider without a key, an OpenAI-compatible server without a model, a base URL that is not
 * http(s)) is a `KeelError`.
 */
export function createProvider(config: ProviderConfig): ModelProvider | KeelError {
  const badUrl = config.provider !== 'demo' && config.baseUrl ? baseUrlError(config.baseUrl.trim()) : undefined;
  if (badUrl) return badUrl;
  const common = {
    ...(config.stallTimeoutMs !== undefined ? { stallTimeoutMs: config.stallTimeoutMs } : {}),
    ...(config.headerTimeoutMs !== undefined ? { headerTimeoutMs: config.headerTimeoutMs } : {}),
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
  };
  switch (config.provider) {
    case 'anthropic':
      if (!config.apiKey) return { code: 'no_api_key', message: NO_API_KEY_MESSAGE, retryable: false };
      return new AnthropicProvider({ ...common, apiKey: config.apiKey, model: config.model || DEFAULT_ANTHROPIC_MODEL });
    case 'openai-compatible':
      if (!config.model) {
        return {
          code: 'invalid_input',
          message: `No model is named for the OpenAI-compatible server: name one it serves (for Ollama, e.g. “${DEFAULT_MODELS['openai-compatible']}”).`,
          retryable: false,
        };
      }
      return new OpenAICompatibleProvider({ ...common, model: config.model, ...(config.apiKey ? { apiKey: config.apiKey } : {}) });
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
