import type { KeelError } from '../../shared/domain/errors';
import { isProviderPlan, planProvider } from './plan';
import type { ModelProvider, ProviderConfig } from './types';

/**
 * Builds the provider a config names, for the host and a worker alike (the one constructor
 * path). A config that cannot work (the anthropic provider without a key, an OpenAI-compatible
 * server without a model, a base URL that is not http(s)) is a `KeelError` (the checks:
 * `planProvider`); never throws for a bad config, rejects only if the module itself cannot load.
 * The provider's module, and so its SDK, is imported on first use, so a process loads only the
 * SDK it uses (each costs an idle worker several MB). Host and worker alike use the platform's
 * `fetch` (issue 25.7).
 */
export async function loadProvider(config: ProviderConfig): Promise<ModelProvider | KeelError> {
  const plan = planProvider(config);
  if (!isProviderPlan(plan)) return plan;
  switch (plan.kind) {
    case 'anthropic':
      return new (await import('./anthropic')).AnthropicProvider(plan.options);
    case 'openai-compatible':
      return new (await import('./openai')).OpenAICompatibleProvider(plan.options);
    case 'demo':
      return (await import('./demo')).createDemoProvider();
  }
}
