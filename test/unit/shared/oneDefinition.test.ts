import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_HELP } from '../../../src/cli/help';
import { DEFAULT_MODELS } from '../../../src/shared/domain/models';
import { PERMISSION_MODE_INFO, PERMISSION_MODES } from '../../../src/shared/domain/permissionModes';
import { permissionModeSchema } from '../../../src/shared/protocol/chatMessages';

/**
 * The permission modes are defined once (src/shared/domain/permissionModes.ts). The extension's
 * manifest is JSON and cannot import it, so this holds the manifest to the definition: a mode
 * added, renamed or re-described in one place and not the other fails here.
 */
describe('one definition of the permission modes', () => {
  const manifest = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { enum?: string[]; enumDescriptions?: string[] }> } };
  };
  const setting = manifest.contributes.configuration.properties['keel.permissions.defaultMode']!;

  it('the keel.permissions.defaultMode setting offers exactly the modes, described as defined', () => {
    expect(setting.enum).toEqual([...PERMISSION_MODES]);
    expect(setting.enumDescriptions).toEqual(PERMISSION_MODES.map((m) => PERMISSION_MODE_INFO[m].summary));
  });

  it('the protocol schema and the CLI help accept the same modes', () => {
    expect(permissionModeSchema.options).toEqual([...PERMISSION_MODES]);
    expect(RUN_HELP).toContain(`--mode MODE              ${PERMISSION_MODES.join(' | ')}`);
    expect(permissionModeSchema.safeParse('yolo').success).toBe(false);
  });
});

describe('one table of default models', () => {
  const read = (rel: string) => readFileSync(join(__dirname, '../../../', rel), 'utf8');
  it('the manifest, the README and the docs name the defaults of src/shared/domain/models.ts', () => {
    const manifest = JSON.parse(read('package.json')) as { contributes: { configuration: { properties: Record<string, { description?: string }> } } };
    const texts = [manifest.contributes.configuration.properties['keel.model']!.description ?? '', read('README.md'), read('docs/cli.md')];
    for (const text of texts) {
      expect(text).toContain(DEFAULT_MODELS.anthropic);
      expect(text).toContain(DEFAULT_MODELS['openai-compatible']);
    }
  });
});

describe('one helper for each shared job (issue 25: duplication)', () => {
  const files = (dir: string): string[] =>
    readdirSync(join(__dirname, '../../..', dir), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
  const sources = files('src').map((f) => ({ file: f, text: readFileSync(join(__dirname, '../../..', f), 'utf8') }));
  const defining = (re: RegExp) => sources.filter((s) => re.test(s.text)).map((s) => s.file);

  it('a tool result, the words of an unknown error and a provider are each built in one place', () => {
    expect(defining(/function toolResult\(/)).toEqual(['src/shared/domain/messages.ts']);
    expect(defining(/function errorMessage\(/)).toEqual(['src/shared/domain/errors.ts']);
    // A local helper that turns an unknown error into words, under any name.
    expect(defining(/(const|function) \w+ = \(\w+: unknown\)(: string)? =>\s*\(?\w+ instanceof Error \? \w+\.message/)).toEqual([]);
    expect(defining(/export (async )?function (createProvider|loadProvider)\(/)).toEqual(['src/core/providers/load.ts']);
  });
});
