import type { KeelError } from '../../shared/domain/errors';
import { isProviderPlan, planProvider } from './plan';
import type { FetchFunction } from './transport/nodeFetch';
import type { ModelProvider, ProviderConfig } from './types';

/**
 * `createProvider` for a process that should not load what it does not use (a pool's worker):
 * the provider's module, and so its SDK, is imported on the first query that names it (each SDK
 * costs an idle worker several MB). Same checks and errors as `createProvider`; never throws for
 * a bad config (a `KeelError`), rejects only if the module itself cannot load. `fetch`, when
 * given, is the SDK's transport (a worker passes `nodeFetch`: transport/nodeFetch.ts).
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
