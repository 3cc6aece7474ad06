import { describe, expect, it } from 'vitest';
import { isExternalHttpLink } from '../../../src/extension/links';
import { cliAdvice } from '../../../src/cli/advice';
import { chatConfigOf, extensionAdvice, modelOf, resolveProviderConfig } from '../../../src/extension/providerConfig';
import { CLAUDE_FAMILIES, DEFAULT_MODELS } from '../../../src/shared/domain/models';
import { contentSecurityPolicy, renderWebviewHtml } from '../../../src/extension/webviewHtml';

const settings = (over: Record<string, unknown> = {}) => ({
  provider: 'anthropic',
  model: '',
  anthropicBaseUrl: '',
  openaiBaseUrl: 'http://localhost:11434/v1',
  defaultMode: 'default',
  ...over,
});

describe('advice after a failure, in each host’s own terms', () => {
  it('the extension names its command and the key variable of the provider', () => {
    expect(extensionAdvice({ code: 'no_api_key', provider: 'anthropic' })).toBe('Run “Keel: Set API Key” or set ANTHROPIC_API_KEY, or choose the demo provider to try Keel without a key.');
    expect(extensionAdvice({ code: 'auth_failed', provider: 'openai-compatible' })).toBe('Set it with “Keel: Set API Key” or OPENAI_API_KEY.');
    expect(extensionAdvice({ code: 'overloaded', provider: 'anthropic' })).toBeUndefined();
  });

  it('the CLI names environment variables and flags, never a VS Code command', () => {
    const all = (['no_api_key', 'auth_failed', 'connection_refused'] as const).flatMap((code) => (['anthropic', 'openai-compatible'] as const).map((provider) => cliAdvice({ code, provider }) ?? ''));
    for (const advice of all) expect(advice).not.toMatch(/Keel:|keel\.\w|Set API Key/);
    expect(cliAdvice({ code: 'no_api_key', provider: 'anthropic' })).toMatch(/ANTHROPIC_API_KEY=.*--provider demo/);
    expect(cliAdvice({ code: 'auth_failed', provider: 'openai-compatible' })).toMatch(/OPENAI_API_KEY=/);
    expect(cliAdvice({ code: 'connection_refused', provider: 'anthropic' })).toMatch(/--base-url/);
    expect(cliAdvice({ code: 'max_turns', provider: 'anthropic' })).toBeUndefined();
  });
});

describe('provider config', () => {
  it('anthropic: default model, secret wins over env, env as fallback, no key is not an error', () => {
    expect(resolveProviderConfig(settings(), 'sk-secret', { ANTHROPIC_API_KEY: 'sk-env' })).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-5-5',
      apiKey: 'sk-secret',
    });
    expect(resolveProviderConfig(settings(), undefined, { ANTHROPIC_API_KEY: 'sk-env' }).apiKey).toBe('sk-env');
    expect(resolveProviderConfig(settings({ anthropicBaseUrl: 'http://127.0.0.1:9/' }), undefined, {})).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-5-5',
      baseUrl: 'http://127.0.0.1:9/',
    });
  });

  it('openai-compatible uses its own base URL and env key', () => {
    expect(resolveProviderConfig(settings({ provider: 'openai-compatible', model: 'qwen3' }), undefined, { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'no' })).toEqual({
      provider: 'openai-compatible',
      model: 'qwen3',
      baseUrl: 'http://localhost:11434/v1',
      apiKey: 'k',
    });
  });

  it('demo needs no key; unknown values fall back to defaults', () => {
    expect(resolveProviderConfig(settings({ provider: 'demo' }), undefined, { ANTHROPIC_API_KEY: 'x' })).toEqual({ provider: 'demo', model: 'demo' });
    expect(chatConfigOf(settings({ provider: 'demo' }))).toEqual({ provider: 'demo', providerLabel: 'Demo', model: 'demo model', mode: 'default' });
    expect(chatConfigOf(settings({ provider: 42, defaultMode: 'yolo', model: ' claude-opus-4-1 ' }))).toEqual({
      provider: 'anthropic',
      providerLabel: 'Anthropic',
      model: 'claude-opus-4-1',
      mode: 'default',
    });
  });
});

describe('model selection in the extension (the model-selection machine)', () => {
  it('KEEL_MODEL in the environment overrides keel.model (what Select Model writes), which beats the provider default from the one table', () => {
    expect(modelOf(settings())).toBe(DEFAULT_MODELS.anthropic);
    expect(modelOf(settings({ provider: 'openai-compatible' }))).toBe(DEFAULT_MODELS['openai-compatible']);
    expect(modelOf(settings({ model: 'claude-haiku-4-5' }))).toBe('claude-haiku-4-5');
    expect(modelOf(settings(), { KEEL_MODEL: 'opus' })).toBe(CLAUDE_FAMILIES.opus);
    expect(modelOf(settings({ model: 'claude-haiku-4-5' }), { KEEL_MODEL: 'opus' })).toBe(CLAUDE_FAMILIES.opus);
    // Blank is no choice.
    expect(modelOf(settings({ model: '  ' }), { KEEL_MODEL: '  ' })).toBe(DEFAULT_MODELS.anthropic);
  });

  it('ids are normalised: aliases name the current Claude models, Claude ids are lower-cased, others keep their case', () => {
    expect(modelOf(settings({ model: ' Sonnet ' }))).toBe(CLAUDE_FAMILIES.sonnet);
    expect(modelOf(settings({ model: 'Claude-Opus-4-1' }))).toBe('claude-opus-4-1');
    expect(modelOf(settings({ provider: 'openai-compatible', model: 'Qwen2.5-Coder:7B' }))).toBe('Qwen2.5-Coder:7B');
  });

  it('a run in plan mode uses the plan model (KEEL_PLAN_MODEL first, then keel.planModel); other modes never do', () => {
    const s = settings({ model: 'haiku', planModel: 'opus' });
    expect(modelOf(s, {}, 'plan')).toBe(CLAUDE_FAMILIES.opus);
    expect(modelOf(s, { KEEL_PLAN_MODEL: 'claude-opus-4-1' }, 'plan')).toBe('claude-opus-4-1');
    expect(modelOf(settings({ model: 'haiku' }), { KEEL_PLAN_MODEL: 'claude-opus-4-1' }, 'plan')).toBe('claude-opus-4-1');
    for (const mode of ['default', 'acceptEdits', 'dontAsk', 'bypassPermissions'] as const) expect(modelOf(s, {}, mode)).toBe(CLAUDE_FAMILIES.haiku);
    // No plan model: plan mode runs the same model as the others.
    expect(modelOf(settings({ model: 'haiku' }), {}, 'plan')).toBe(CLAUDE_FAMILIES.haiku);
    // Without a mode, the mode setting decides.
    expect(modelOf(settings({ planModel: 'opus', defaultMode: 'plan' }))).toBe(CLAUDE_FAMILIES.opus);
  });

  it('what a run starts with and what the header shows follow the mode of the run', () => {
    const s = settings({ planModel: 'opus' });
    expect(resolveProviderConfig(s, 'k', {}, 'plan').model).toBe(CLAUDE_FAMILIES.opus);
    expect(resolveProviderConfig(s, 'k', {}, 'default').model).toBe(CLAUDE_FAMILIES.sonnet);
    expect(chatConfigOf(s, {}, 'plan')).toEqual({ provider: 'anthropic', providerLabel: 'Anthropic', model: CLAUDE_FAMILIES.opus, mode: 'plan' });
  });

  it('the demo provider has its one model whatever is set', () => {
    const s = settings({ provider: 'demo', model: 'opus', planModel: 'opus' });
    expect(resolveProviderConfig(s, undefined, { KEEL_MODEL: 'opus' }, 'plan')).toEqual({ provider: 'demo', model: DEFAULT_MODELS.demo });
    expect(chatConfigOf(s, { KEEL_MODEL: 'opus' }, 'plan').model).toBe('demo model');
  });
});

describe('links', () => {
  it.each([
    ['https://example.com', true],
    ['http://localhost:3000/x', true],
    ['HTTPS://EXAMPLE.COM', true],
    ['command:workbench.action.openSettings', false],
    ['javascript:alert(1)', false],
    ['file:///etc/passwd', false],
    ['vscode://settings', false],
    ['/relative/path', false],
    ['#anchor', false],
    ['mailto:a@b.c', false],
  ])('%s -> %s', (href, ok) => {
    expect(isExternalHttpLink(href)).toBe(ok);
  });
});

describe('webview html', () => {
  const html = renderWebviewHtml({
    cspSource: 'https://webview.test',
    nonce: 'abc123',
    scriptUri: 'https://webview.test/dist/webview.js',
    styleUri: 'https://webview.test/dist/webview.css',
    codiconUri: 'https://webview.test/dist/codicon.css',
    title: 'Keel',
  });

  it('has a strict CSP: nonce scripts only, no unsafe-*', () => {
    expect(contentSecurityPolicy('https://webview.test', 'abc123')).toBe(
      "default-src 'none'; script-src 'nonce-abc123'; style-src https://webview.test; font-src https://webview.test; img-src https://webview.test data:;",
    );
    expect(html).toContain(`content="default-src 'none'; script-src 'nonce-abc123';`);
    expect(html).not.toContain('unsafe');
  });

  it('loads exactly the bundled script (with the nonce) and the two stylesheets', () => {
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="abc123" src="https://webview.test/dist/webview.js"></script>');
    expect(html).toContain('href="https://webview.test/dist/webview.css"');
    expect(html).toContain('href="https://webview.test/dist/codicon.css"');
  });

  it('refuses a nonce that could break out of the attribute', () => {
    expect(() => renderWebviewHtml({ cspSource: 'x', nonce: `a"><script>`, scriptUri: '', styleUri: '', codiconUri: '', title: '' })).toThrow();
  });
});
