import type { KeelError } from '../../shared/domain/errors';
import { isProviderPlan, planProvider } from './plan';
import type { FetchFunction } from './transport/nodeFetch';
import type { ModelProvider, ProviderConfig } from './types';

/**
 * Builds the provider a config names, for the host and a worker alike (the one constructor
 * path). A config that cannot work (the anthropic provider without a key, an OpenAI-compatible
 * server without a model, a base URL that is not http(s)) is a `KeelError` (the checks:
 * `planProvider`); never throws for a bad config, rejects only if the module itself cannot load.
 * The provider's module, and so its SDK, is imported on first use, so a process loads only the
 * SDK it uses (each costs an idle worker several MB). `fetch`, when given, is the SDK's transport
 * (a worker passes `nodeFetch`: transport/nodeFetch.ts).
 */
export async function loadProvider(config: ProviderConfig, fetch?: FetchFunction): Promise<ModelProvider | KeelError> {
  const plan = planProvider(config);
  if (!isProviderPlan(plan)) return plan;
  const transport = fetch ? { fetch } : {};
  switch (plan.kind) {
    case 'anthropic':
      return new (await import('./anthropic')).AnthropicProvider({ ...plan.options, ...transport });
    case 'openai-compatible':
      return new (await import('./openai')).OpenAICompatibleProvider({ ...plan.options, ...transport });
    case 'demo':
      return (await import('./demo')).createDemoProvider();
  }
}
