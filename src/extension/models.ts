import { DEFAULT_MODELS, DEMO_MODEL_LABEL, PROVIDER_MODELS, type UserProviderId } from '../shared/domain/models';
import type { ServerModels } from '../core/providers/serverModels';

/**
 * What "Keel: Select Model" offers, per provider. Pure (commands.ts shows it): the models come
 * from the one table (src/shared/domain/models.ts), or for an OpenAI-compatible server from its
 * own `/models` list when it answers; without a list, the person types an id.
 */

export interface ModelPickItem {
  label: string;
  description: string;
  /** What picking it does: set this model, ask for an id, or open the settings to change provider. */
  action: 'set' | 'custom' | 'provider';
  id: string;
}

export type ModelPicker =
  | { kind: 'pick'; placeHolder: string; items: ModelPickItem[] }
  /** No list to pick from: an input box, prefilled with the current id. */
  | { kind: 'type'; prompt: string; value: string; placeHolder: string };

const CUSTOM: ModelPickItem = { label: 'Custom…', description: 'Type a model id', action: 'custom', id: '' };

/**
 * The picker for `provider`. `setting` is the `keel.model` setting as it is (empty: the
 * provider's default). `server` is what an OpenAI-compatible server listed (ignored otherwise).
 */
export function modelPicker(provider: UserProviderId, setting: string, server?: ServerModels): ModelPicker {
  const fallback = DEFAULT_MODELS[provider];
  const current = setting.trim() || fallback;
  const mark = (id: string, description: string) => {
    const notes = [description, id === fallback ? 'default' : '', id === current ? 'current' : ''].filter(Boolean);
    return [...new Set(notes)].join(' · ');
  };
  switch (provider) {
    case 'demo':
      return {
        kind: 'pick',
        placeHolder: 'The demo provider has one model',
        items: [
          // The demo ignores keel.model: its one model is always the current one.
          { label: DEMO_MODEL_LABEL, description: `${PROVIDER_MODELS.demo.known[0]?.description ?? ''} · current`, action: 'set', id: fallback },
          { label: 'Use another provider…', description: "Keel's settings: Anthropic or an OpenAI-compatible server", action: 'provider', id: '' },
        ],
      };
    case 'anthropic':
      return {
        kind: 'pick',
        placeHolder: 'Anthropic models',
        items: [
          ...PROVIDER_MODELS.anthropic.known.map((m) => ({ label: m.id, description: mark(m.id, m.description), action: 'set' as const, id: m.id })),
          ...(PROVIDER_MODELS.anthropic.known.some((m) => m.id === current) ? [] : [{ label: current, description: 'current', action: 'set' as const, id: current }]),
          CUSTOM,
        ],
      };
    case 'openai-compatible': {
      if (!server?.ok || server.models.length === 0) {
        const why = !server ? '' : server.ok ? ' (the server lists no models)' : ` (${server.reason})`;
        return { kind: 'type', prompt: `The model id your OpenAI-compatible server serves${why}`, value: setting.trim(), placeHolder: `e.g. ${fallback}` };
      }
      const listed = server.models.map((id) => ({ label: id, description: mark(id, ''), action: 'set' as const, id }));
      const unlisted = server.models.includes(current) ? [] : [{ label: current, description: 'current · not listed by the server', action: 'set' as const, id: current }];
      return { kind: 'pick', placeHolder: 'Models your server serves', items: [...unlisted, ...listed, CUSTOM] };
    }
  }
}
