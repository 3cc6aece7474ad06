import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { saveRule, suggestRules } from '../../../src/core/permissions';
import { makeFixture, type PermissionFixture } from './fixture';

let fx: PermissionFixture | undefined;
afterEach(() => fx?.cleanup());

describe('Always allow', () => {
  it('suggests rules per command, saves them locally, and the next identical command is allowed', async () => {
    fx = await makeFixture({ permissions: {} });
    const command = 'npm run build -- --prod && git commit -m "x"';
    expect((await fx.bash(command)).decision).toBe('ask');
    const rules = suggestRules({ tool: 'Bash', subject: { kind: 'execute', tool: 'Bash', command, cwd: fx.ws, summary: '' }, workspace: fx.ws, home: fx.home });
    expect(rules).toEqual(['Bash(npm run build:*)', 'Bash(git commit:*)']);
    await saveRule(rules, 'local', { workspace: fx.ws, home: fx.home });
    const saved = JSON.parse(readFileSync(join(fx.ws, '.keel', 'settings.local.json'), 'utf8')) as { permissions: { allow: string[] } };
    expect(saved.permissions.allow).toEqual(rules);
    expect(readFileSync(join(fx.ws, '.keel', '.gitignore'), 'utf8')).toContain('settings.local.json');
    expect((await fx.bash(command)).decision).toBe('allow');
    await saveRule(rules, 'local', { workspace: fx.ws, home: fx.home });
    expect((JSON.parse(readFileSync(join(fx.ws, '.keel', 'settings.local.json'), 'utf8')) as { permissions: { allow: string[] } }).permissions.allow).toHaveLength(2);
  });

  it('suggests path and domain rules', () => {
    const ws = '/w';
    expect(suggestRules({ tool: 'Edit', subject: { kind: 'write', tool: 'Edit', paths: ['/w/src/a/b.ts'], summary: '' }, workspace: ws, home: '/h' })).toEqual(['Edit(./src/a/**)']);
    expect(suggestRules({ tool: 'Read', subject: { kind: 'read', tool: 'Read', paths: ['/h/docs/x.md'], summary: '' }, workspace: ws, home: '/h' })).toEqual(['Read(~/docs/**)']);
    expect(suggestRules({ tool: 'WebFetch', subject: { kind: 'network', tool: 'WebFetch', url: 'https://docs.rs/x', summary: '' }, workspace: ws })).toEqual(['WebFetch(domain:docs.rs)']);
  });

  it('refuses a malformed rule and never overwrites a settings file that is not JSON', async () => {
    fx = await makeFixture({ permissions: {} });
    await expect(saveRule('Bash(npm test', 'project', { workspace: fx.ws })).rejects.toThrow(/not a valid rule/);
    writeFileSync(join(fx.ws, '.keel', 'settings.json'), '{ broken');
    await expect(saveRule('Bash(npm test)', 'project', { workspace: fx.ws })).rejects.toThrow(/not valid JSON/);
    expect(readFileSync(join(fx.ws, '.keel', 'settings.json'), 'utf8')).toBe('{ broken');
  });
});
