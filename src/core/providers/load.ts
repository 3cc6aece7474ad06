import type { KeelError } from '../../shared/domain/errors';
import { isProviderPlan, planProvider } from './plan';
import type { ModelProvider, ProviderConfig } from './types';

/**
 * `createProvider` for a process that should not load what it does not use (a pool's worker):
 * the provider's module, and so its SDK, is imported on the first query that names it (each SDK
 * costs an idle worker several MB). Same checks and errors as `createProvider`; never throws for
 * a bad config (a `KeelError`), rejects only if the module itself cannot load.
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
