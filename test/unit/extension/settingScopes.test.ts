import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A cloned repository's `.vscode/settings.json` is untrusted input. VS Code ignores a setting of
 * `machine` (or `application`) scope there, so every setting that could send the person's API key
 * elsewhere or widen what commands may reach is declared so. (Settings that a workspace may only
 * make stricter — the permission mode, the sandbox — are read with that rule in code instead.)
 */
describe('settings a workspace cannot change', () => {
  const manifest = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { scope?: string }> } };
  };
  const props = manifest.contributes.configuration.properties;

  it.each(['keel.anthropic.baseUrl', 'keel.openai.baseUrl', 'keel.tools.passEnv', 'keel.sandbox.network.allowedDomains'])('%s is user settings only (machine scope)', (key) => {
    expect(props[key], `${key} is declared`).toBeDefined();
    expect(['machine', 'application']).toContain(props[key]!.scope);
  });
});
