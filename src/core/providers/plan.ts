import type { KeelError } from '../../shared/domain/errors';
import { DEFAULT_MODELS } from '../../shared/domain/models';
import type { AnthropicProviderOptions } from './anthropic';
import { baseUrlError } from './connectionErrors';
import type { OpenAICompatibleProviderOptions } from './openai';
import type { ProviderConfig } from './types';

export const DEFAULT_ANTHROPIC_MODEL = DEFAULT_MODELS.anthropic;

/** The fact only: how to give a key is the host's advice (TaskRuntimeOptions.advise). */
export const NO_API_KEY_MESSAGE = 'No Anthropic API key is set.';

/** Which provider a config builds, with its constructor's options; no SDK is loaded to decide. */
export type ProviderPlan = { kind: 'anthropic'; options: AnthropicProviderOptions } | { kind: 'openai-compatible'; options: OpenAICompatibleProviderOptions } | { kind: 'demo' };

/**
 * Checks a provider config and says what to build. Never throws: a config that cannot work (the
 * anthropic provider without a key, an OpenAI-compatible server without a model, a base URL that
 * is not http(s)) is a `KeelError`. `loadProvider` builds what it says.
 */
export function planProvider(config: ProviderConfig): ProviderPlan | KeelError {
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
      return { kind: 'anthropic', options: { ...common, apiKey: config.apiKey, model: config.model || DEFAULT_ANTHROPIC_MODEL } };
    case 'openai-compatible':
      if (!config.model) {
        return {
          code: 'invalid_input',
          message: `No model is named for the OpenAI-compatible server: name one it serves (for Ollama, e.g. “${DEFAULT_MODELS['openai-compatible']}”).`,
          retryable: false,
        };
      }
      return { kind: 'openai-compatible', options: { ...common, model: config.model, ...(config.apiKey ? { apiKey: config.apiKey } : {}) } };
    case 'demo':
      return { kind: 'demo' };
  }
}

/** Narrows the result of {@link planProvider}. */
export function isProviderPlan(value: ProviderPlan | KeelError): value is ProviderPlan {
  return 'kind' in value;
}
