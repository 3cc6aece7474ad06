import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { passEnvOf, toolSecrets } from '../../../src/extension/toolSecrets';
import { makeTempDir } from '../tools/helpers';

describe('keel.tools.passEnv', () => {
  let tmp: ReturnType<typeof makeTempDir> | undefined;
  afterEach(() => tmp?.cleanup());

  it('takes the user value and ~/.keel/settings.json, never a workspace value', () => {
    tmp = makeTempDir();
    const file = join(tmp.dir, 'settings.json');
    writeFileSync(file, JSON.stringify({ passEnv: ['GIT_SSH_COMMAND'] }));
    const r = passEnvOf({ globalValue: ['NPM_TOKEN', 'not a name'], workspaceValue: ['ANTHROPIC_API_KEY'], workspaceFolderValue: ['OPENAI_API_KEY'] }, file);
    expect(r.names).toEqual(['NPM_TOKEN', 'GIT_SSH_COMMAND']);
    expect(r.problems.join('\n')).toMatch(/workspace settings/);
    expect(r.problems.join('\n')).toMatch(/"not a name"/);
    expect(passEnvOf(undefined, join(tmp.dir, 'missing.json'))).toEqual({ names: [], problems: [] });
  });

  it("the window's keeper holds every key in SecretStorage, not only the selected provider's", async () => {
    const keeper = await toolSecrets(['NPM_TOKEN'], [Promise.resolve('stored-anthropic-key-1'), Promise.resolve(undefined), Promise.resolve('stored-openai-key-2')]);
    expect(keeper.values()).toEqual(expect.arrayContaining(['stored-anthropic-key-1', 'stored-openai-key-2']));
    expect(keeper.environment({ A: 'stored-openai-key-2', NPM_TOKEN: 'x', HOME: '/h' })).toEqual({ NPM_TOKEN: 'x', HOME: '/h' });
  });
});
