import { useEffect, useState } from 'preact/hooks';
import { PROVIDER_IDS, type SettingsState } from '../../src/shared/protocol/chatMessages';
import type { FromWebviewMessage } from '../../src/shared/protocol/fromWebview';

type ProviderId = SettingsState['provider'];

export interface SettingsPageProps {
  settings: SettingsState | null;
  post(message: FromWebviewMessage): void;
}

const LABELS: Record<ProviderId, string> = { anthropic: 'Anthropic', 'openai-compatible': 'OpenAI-compatible (Ollama, LM Studio, vLLM)', demo: 'Demo (no key)' };

/**
 * Provider, base URL, model and API key. The key goes to the host, which stores it in VS Code
 * Secret Storage; the page only ever learns whether a key is stored, never the key.
 */
export function SettingsPage({ settings, post }: SettingsPageProps) {
  const [provider, setProvider] = useState<ProviderId>('anthropic');
  const [model, setModel] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [key, setKey] = useState('');
  useEffect(() => post({ type: 'getSettings' }), []);
  useEffect(() => {
    if (!settings) return;
    setProvider(settings.provider);
    setModel(settings.model);
    setBaseUrl(settings.provider === 'openai-compatible' ? settings.openaiBaseUrl : settings.anthropicBaseUrl);
  }, [settings]);

  if (!settings) return <p class="keel-note">Loading…</p>;
  const keyedProvider = provider === 'demo' ? undefined : provider;
  const keyed = keyedProvider !== undefined;
  const stored = keyedProvider ? settings.hasKey[keyedProvider] : false;
  const chooseProvider = (p: ProviderId) => {
    setProvider(p);
    setBaseUrl(p === 'openai-compatible' ? settings.openaiBaseUrl : p === 'anthropic' ? settings.anthropicBaseUrl : '');
  };
  return (
    <form
      class="keel-page keel-settings"
      data-testid="settings-page"
      aria-label="Settings"
      onSubmit={(e) => {
        e.preventDefault();
        post({ type: 'saveSettings', provider, model, baseUrl });
      }}
    >
      <label class="keel-field">
        <span>Provider</span>
        <select class="keel-select" data-testid="settings-provider" value={provider} onChange={(e) => chooseProvider(e.currentTarget.value as ProviderId)}>
          {PROVIDER_IDS.map((p) => (
            <option key={p} value={p}>
              {LABELS[p]}
            </option>
          ))}
        </select>
      </label>
      {keyed && (
        <label class="keel-field">
          <span>Base URL</span>
          <input
            class="keel-text-input"
            type="url"
            data-testid="settings-base-url"
            placeholder={provider === 'anthropic' ? 'https://api.anthropic.com' : 'http://localhost:11434/v1'}
            value={baseUrl}
            onInput={(e) => setBaseUrl(e.currentTarget.value)}
          />
        </label>
      )}
      <label class="keel-field">
        <span>Model</span>
        <input class="keel-text-input" type="text" data-testid="settings-model" placeholder="Provider default" value={model} onInput={(e) => setModel(e.currentTarget.value)} />
      </label>
      <div class="keel-settings-actions">
        <button type="submit" class="keel-button" data-testid="settings-save">
          <span class="codicon codicon-save" aria-hidden="true" /> Save settings
        </button>
      </div>
      {keyed && (
        <fieldset class="keel-field keel-key">
          <legend>API key</legend>
          <p class="keel-note" data-testid="settings-key-status">
            {stored ? 'A key is stored in VS Code Secret Storage.' : 'No key stored (the environment variable is used if set).'}
          </p>
          <input
            class="keel-text-input"
            type="password"
            autocomplete="off"
            data-testid="settings-api-key"
            aria-label="API key"
            placeholder={stored ? 'Enter a new key to replace it' : 'Paste your API key'}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <div class="keel-settings-actions">
            <button
              type="button"
              class="keel-button"
              data-testid="settings-save-key"
              disabled={!key.trim()}
              onClick={() => {
                if (!keyedProvider) return;
                post({ type: 'setApiKey', provider: keyedProvider, key });
                setKey('');
              }}
            >
              <span class="codicon codicon-key" aria-hidden="true" /> Save key
            </button>
            {stored && (
              <button
                type="button"
                class="keel-button keel-button-secondary"
                data-testid="settings-remove-key"
                onClick={() => keyedProvider && post({ type: 'setApiKey', provider: keyedProvider, key: '' })}
              >
                Remove key
              </button>
            )}
          </div>
        </fieldset>
      )}
    </form>
  );
}
