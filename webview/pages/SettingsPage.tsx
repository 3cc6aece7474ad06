import { useEffect, useState } from 'preact/hooks';
import { DEFAULT_MODELS, DEMO_MODEL_LABEL, PROVIDER_MODELS } from '../../src/shared/domain/models';
import { PROVIDER_IDS, type SettingsState } from '../../src/shared/protocol/chatMessages';
import type { FromWebviewMessage } from '../../src/shared/protocol/fromWebview';
import type { McpStatus } from '../../src/shared/protocol/mcpMessages';
import { McpSection } from './McpSection';

type ProviderId = SettingsState['provider'];

export interface SettingsPageProps {
  settings: SettingsState | null;
  /** How the last save went (null: nothing to say). */
  result: { ok: boolean; message: string } | null;
  post(message: FromWebviewMessage): void;
  /** The person changed a field (or opened the page): an earlier result no longer applies. */
  onEdited(): void;
  /** The MCP section's state (null until the host answered). */
  mcp?: McpStatus | null;
  /** Shows the Memory page (the workspace's memories and the memory settings). */
  onMemory?(): void;
}

const LABELS: Record<ProviderId, string> = { anthropic: 'Anthropic', 'openai-compatible': 'OpenAI-compatible (Ollama, LM Studio, vLLM)', demo: 'Demo (no key)' };

/**
 * Provider, base URL, model and API key. The key goes to the host, which stores it in VS Code
 * Secret Storage; the page only ever learns whether a key is stored, never the key.
 */
export function SettingsPage({ settings, result, post, onEdited, mcp = null, onMemory }: SettingsPageProps) {
  const [provider, setProvider] = useState<ProviderId>('anthropic');
  const [model, setModel] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [key, setKey] = useState('');
  const [saving, setSaving] = useState(false);
  useEffect(() => {
    onEdited();
    post({ type: 'getSettings' });
  }, []);
  useEffect(() => setSaving(false), [result]);
  const edited = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    onEdited();
  };
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
    onEdited();
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
        onEdited();
        setSaving(true);
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
            onInput={(e) => edited(setBaseUrl)(e.currentTarget.value)}
          />
        </label>
      )}
      {provider === 'demo' ? (
        <p class="keel-note" data-testid="settings-model-demo">{`Model: ${DEMO_MODEL_LABEL} — a scripted tour of Keel (no key, no network).`}</p>
      ) : (
        <label class="keel-field">
          <span>Model</span>
          <input
            class="keel-text-input"
            type="text"
            list="keel-known-models"
            data-testid="settings-model"
            placeholder={`Default: ${DEFAULT_MODELS[provider]}`}
            value={model}
            onInput={(e) => edited(setModel)(e.currentTarget.value)}
          />
          <datalist id="keel-known-models">
            {PROVIDER_MODELS[provider].known.map((m) => (
              <option key={m.id} value={m.id}>
                {m.description}
              </option>
            ))}
          </datalist>
        </label>
      )}
      <div class="keel-settings-actions">
        <button type="submit" class="keel-button" data-testid="settings-save" disabled={saving}>
          <span class="codicon codicon-save" aria-hidden="true" /> {saving ? 'Saving…' : 'Save settings'}
        </button>
      </div>
      {result && (
        <p class={`keel-settings-status${result.ok ? '' : ' keel-settings-status-error'}`} data-testid="settings-status" data-ok={result.ok ? 'true' : 'false'} role={result.ok ? 'status' : 'alert'}>
          <span class={`codicon ${result.ok ? 'codicon-check' : 'codicon-error'}`} aria-hidden="true" /> {result.message}
        </p>
      )}
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
      {onMemory && (
        <fieldset class="keel-field">
          <legend>Project memory</legend>
          <p class="keel-note">What Keel remembers about this workspace (.keel/memory/), and whether runs use and add to it.</p>
          <div class="keel-settings-actions">
            <button type="button" class="keel-button keel-button-secondary" data-testid="settings-open-memory" onClick={onMemory}>
              <span class="codicon codicon-book" aria-hidden="true" /> Memory…
            </button>
          </div>
        </fieldset>
      )}
      <McpSection status={mcp} post={post} />
    </form>
  );
}
