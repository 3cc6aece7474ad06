import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A cloned repository's `.vscode/settings.json` is untrusted input. VS Code ignores a setting of
 * `application` scope there, so every setting that could send the person's API key elsewhere or
 * widen what commands may reach is declared so. Not `machine`: in a remote window (code-server,
 * Remote-SSH, WSL, a dev container) VS Code drops machine-scoped values from the person's user
 * settings — reliably once it knows the setting's scope, and before that not, so a window read the
 * base URL on its first start and lost it after a reload (the model requests went to
 * api.anthropic.com). (Settings that a workspace may only make stricter — the permission mode, the
 * sandbox — are read with that rule in code instead.)
 */
describe('settings a workspace cannot change', () => {
  const manifest = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { scope?: string }> } };
  };
  const props = manifest.contributes.configuration.properties;

  it.each(['keel.anthropic.baseUrl', 'keel.openai.baseUrl', 'keel.tools.passEnv', 'keel.sandbox.network.allowedDomains'])('%s is user settings only, in every window (application scope)', (key) => {
    expect(props[key], `${key} is declared`).toBeDefined();
    expect(props[key]!.scope).toBe('application');
  });
});
