/**
 * The one table of models per provider: the default a task uses when nobody chose one, and the
 * models a picker offers. Everything that needs a default model (the CLI, the extension's
 * settings, the provider factory, the model-selection machine) or a list of models (Select
 * Model, the settings page) reads it here, so the copies cannot drift apart again.
 */

/** The providers a person can choose (settings, `--provider`). */
export const PROVIDER_IDS = ['anthropic', 'openai-compatible', 'demo'] as const;
export type UserProviderId = (typeof PROVIDER_IDS)[number];

export interface KnownModel {
  id: string;
  /** One short phrase for a picker, e.g. "Balanced" (pickers add "default" and "current" themselves). */
  description: string;
}

export interface ProviderModels {
  /** The model a task uses when none is set. */
  default: string;
  /** What a picker offers, the default first. For OpenAI-compatible servers these are only examples: the server's own list wins when it answers. */
  known: readonly KnownModel[];
}

/** The current model of each Claude family (the aliases `sonnet`, `opus`, `haiku` name them). */
export const CLAUDE_FAMILIES = {
  sonnet: 'claude-sonnet-5-5',
  opus: 'claude-opus-5-5',
  haiku: 'claude-haiku-5-5',
} as const;

/** The id of the built-in demo model, and what people read for it everywhere. */
export const DEMO_MODEL_ID = 'demo';
export const DEMO_MODEL_LABEL = 'demo model';

export const PROVIDER_MODELS: Readonly<Record<UserProviderId, ProviderModels>> = {
  anthropic: {
    default: CLAUDE_FAMILIES.sonnet,
    known: [
      { id: CLAUDE_FAMILIES.sonnet, description: 'Balanced' },
      { id: CLAUDE_FAMILIES.opus, description: 'Most capable' },
      { id: CLAUDE_FAMILIES.haiku, description: 'Fastest' },
      { id: 'claude-sonnet-4-6', description: 'Previous Sonnet' },
    ],
  },
  'openai-compatible': {
    default: 'llama3.2',
    known: [
      { id: 'llama3.2', description: 'Ollama: Llama 3.2' },
      { id: 'qwen2.5-coder', description: 'Ollama: Qwen 2.5 Coder' },
      { id: 'llama3.1', description: 'Ollama: Llama 3.1' },
    ],
  },
  demo: {
    default: DEMO_MODEL_ID,
    known: [{ id: DEMO_MODEL_ID, description: 'A scripted tour of Keel: no key, no network' }],
  },
};

/** The default model of each provider (a view of {@link PROVIDER_MODELS}). */
export const DEFAULT_MODELS: Readonly<Record<UserProviderId, string>> = {
  anthropic: PROVIDER_MODELS.anthropic.default,
  'openai-compatible': PROVIDER_MODELS['openai-compatible'].default,
  demo: PROVIDER_MODELS.demo.default,
};

/** What a person reads for a model id: the demo's id (or label) reads "demo model"; any other id as it is. */
export function modelLabel(id: string): string {
  return id === DEMO_MODEL_ID || id === DEMO_MODEL_LABEL ? DEMO_MODEL_LABEL : id;
}
