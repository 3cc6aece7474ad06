import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPermissionEngine } from '../../../src/core/permissions';
import { makeFixture, type PermissionFixture } from './fixture';
import { TRUST_EVERYTHING } from '../helpers/trustAll';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

let fx: PermissionFixture | undefined;
afterEach(() => fx?.cleanup());

const settings = (allow: string[], deny: string[] = [], ask: string[] = []) => ({ permissions: { allow, deny, ask } });

describe('modes', () => {
  it('default: reads inside allowed, edits and unknown commands ask', async () => {
    fx = await makeFixture(settings([]));
    expect((await fx.decide('Read', { file_path: 'src/a.ts' })).decision).toBe('allow');
    expect((await fx.decide('Write', { file_path: 'src/b.ts', content: 'x' })).decision).toBe('ask');
    expect((await fx.bash('npm test')).decision).toBe('ask');
  });

  it('acceptEdits: edits inside the workspace allowed; outside, protected and commands still ask', async () => {
    fx = await makeFixture(settings([]));
    expect((await fx.decide('Write', { file_path: 'src/b.ts', content: 'x' }, 'acceptEdits')).decision).toBe('allow');
    expect((await fx.bash('echo x > notes.txt', 'acceptEdits')).decision).toBe('allow');
    expect((await fx.decide('Write', { file_path: `${fx.outside}/x`, content: 'x' }, 'acceptEdits')).decision).toBe('ask');
    expect((await fx.decide('Write', { file_path: '.git/config', content: 'x' }, 'acceptEdits')).decision).toBe('ask');
    expect((await fx.bash('npm test', 'acceptEdits')).decision).toBe('ask');
  });

  it('plan: read-only tools and commands only, even with an allow rule', async () => {
    fx = await makeFixture(settings(['Bash(npm test)', 'Edit(./src/**)']));
    expect((await fx.decide('Read', { file_path: 'src/a.ts' }, 'plan')).decision).toBe('allow');
    expect((await fx.bash('git status', 'plan')).decision).toBe('allow');
    expect((await fx.bash('npm test', 'plan')).decision).toBe('deny');
    expect((await fx.decide('Write', { file_path: 'src/b.ts', content: 'x' }, 'plan')).decision).toBe('deny');
    expect((await fx.bash('ls > out.txt', 'plan')).decision).toBe('deny');
  });

  it('dontAsk: what would ask is denied, allows stay', async () => {
    fx = await makeFixture(settings(['Bash(npm test)']));
    expect((await fx.bash('npm test', 'dontAsk')).decision).toBe('allow');
    const d = await fx.bash('npm publish', 'dontAsk');
    expect(d.decision).toBe('deny');
    expect(d.reason).toContain('dontAsk');
  });

  it('bypassPermissions: allows what is not denied; deny rules, ask rules and protected files still hold', async () => {
    fx = await makeFixture(settings([], ['Bash(rm:*)'], ['Bash(git push:*)']));
    expect((await fx.bash('npm publish', 'bypassPermissions')).decision).toBe('allow');
    expect((await fx.decide('Write', { file_path: `${fx.outside}/x`, content: 'x' }, 'bypassPermissions')).decision).toBe('allow');
    expect((await fx.bash('rm -rf x', 'bypassPermissions')).decision).toBe('deny');
    expect((await fx.bash('timeout 1 rm x', 'bypassPermissions')).decision).toBe('deny');
    expect((await fx.bash('git push', 'bypassPermissions')).decision).toBe('ask');
    expect((await fx.decide('Write', { file_path: '.git/hooks/pre-commit', content: 'x' }, 'bypassPermissions')).decision).toBe('ask');
    // A command that cannot be analysed cannot be proven free of `rm`.
    expect((await fx.bash('eval "$X"', 'bypassPermissions')).decision).toBe('ask');
  });
});

describe('precedence: deny rules, ask rules, mode, allow rules, user', () => {
  it('deny beats allow for the same command', async () => {
    fx = await makeFixture(settings(['Bash(git:*)'], ['Bash(git push:*)']));
    const d = await fx.bash('git push origin main');
    expect(d).toMatchObject({ decision: 'deny', rule: 'Bash(git push:*)' });
    expect(d.source).toBe(join(fx.ws, '.keel', 'settings.json'));
    expect((await fx.bash('git fetch')).decision).toBe('allow');
  });

  it('ask beats allow, and beats acceptEdits', async () => {
    fx = await makeFixture(settings(['Edit(./src/**)'], [], ['Edit(./src/generated/**)']));
    expect((await fx.decide('Write', { file_path: 'src/generated/x.ts', content: 'x' }, 'acceptEdits')).decision).toBe('ask');
    expect((await fx.decide('Write', { file_path: 'src/x.ts', content: 'x' })).decision).toBe('allow');
  });

  it('one denied part of a compound command denies the whole', async () => {
    fx = await makeFixture(settings(['Bash(npm test)'], ['Bash(curl:*)']));
    expect((await fx.bash('npm test && curl http://x')).decision).toBe('deny');
  });

  it('deny wins across files: a local allow does not undo a project deny', async () => {
    fx = await makeFixture(settings([], ['Read(./secrets/**)']));
    writeFileSync(join(fx.ws, '.keel', 'settings.local.json'), JSON.stringify(settings(['Read(./secrets/**)'])));
    expect((await fx.decide('Read', { file_path: 'secrets/key.pem' })).decision).toBe('deny');
  });

  it("reads Claude Code's .claude/settings.json and settings.local.json", async () => {
    fx = await makeFixture(settings([]));
    mkdirSync(join(fx.ws, '.claude'), { recursive: true });
    writeFileSync(join(fx.ws, '.claude', 'settings.json'), JSON.stringify(settings(['Bash(npm run lint)'])));
    writeFileSync(join(fx.ws, '.claude', 'settings.local.json'), JSON.stringify(settings([], ['Bash(npm publish:*)'])));
    expect((await fx.bash('npm run lint')).decision).toBe('allow');
    expect((await fx.bash('npm publish --tag x')).decision).toBe('deny');
  });

  it('user settings apply, `/path` rules are relative to the project, `//` absolute', async () => {
    fx = await makeFixture(settings(['Read(/src/**)', `Read(/${'/'}${'etc'}/hostname)`]));
    mkdirSync(join(fx.home, '.keel'), { recursive: true });
    writeFileSync(join(fx.home, '.keel', 'settings.json'), JSON.stringify(settings(['Bash(make:*)'])));
    expect((await fx.bash('make build')).decision).toBe('allow');
    expect((await fx.decide('Read', { file_path: '/etc/hostname' })).decision).toBe('allow');
    expect((await fx.decide('Read', { file_path: '/etc/passwd' })).decision).toBe('ask');
  });

  it('additionalDirectories widen the roots', async () => {
    fx = await makeFixture({ permissions: { additionalDirectories: ['../outside'] } });
    expect((await fx.decide('Read', { file_path: `${fx.outside}/secret.txt` })).decision).toBe('allow');
    expect((await fx.decide('Write', { file_path: `${fx.outside}/n.txt`, content: 'x' }, 'acceptEdits')).decision).toBe('allow');
  });
});

describe('malformed settings never widen permissions', () => {
  it('invalid JSON: reported, and every call asks', async () => {
    fx = await makeFixture(undefined, { settingsText: '{"permissions": {"allow": ["Bash(npm test)"' });
    expect(fx.engine.problems()[0]).toMatch(/not valid JSON/);
    expect((await fx.bash('npm test')).decision).toBe('ask');
    expect((await fx.decide('Read', { file_path: 'src/a.ts' })).decision).toBe('ask');
    expect((await fx.bash('npm test', 'bypassPermissions')).decision).toBe('ask');
  });

  it('a malformed deny rule makes its tool ask; a malformed allow rule is ignored', async () => {
    fx = await makeFixture(settings(['Bash(npm test', 'Read(./src/**)'], ['Bash(rm -rf']));
    const problems = fx.engine.problems().join('\n');
    expect(problems).toMatch(/allow rule ignored/);
    expect(problems).toMatch(/deny rule not understood/);
    expect((await fx.bash('ls', 'bypassPermissions')).decision).toBe('ask');
    expect((await fx.decide('Read', { file_path: 'src/a.ts' })).decision).toBe('allow');
  });

  it('a wrong type (allow is not a list) is reported and asks', async () => {
    fx = await makeFixture({ permissions: { allow: 'Bash' } });
    expect(fx.engine.problems()[0]).toMatch(/allow/);
    expect((await fx.bash('ls')).decision).toBe('ask');
  });

  it('a shared project file cannot turn on bypassPermissions (unless the person approved the workspace)', async () => {
    fx = await makeFixture({ permissions: { defaultMode: 'bypassPermissions' } }, { trust: NOTHING_APPROVED });
    expect(fx.engine.defaultMode()).toBeUndefined();
    expect(fx.engine.problems()[0]).toMatch(/defaultMode "bypassPermissions" ignored: a workspace settings file may only make the mode stricter/);
    fx.cleanup();
    fx = await makeFixture({ permissions: { defaultMode: 'bypassPermissions' } });
    expect(fx.engine.defaultMode()).toBe('bypassPermissions');
  });
});

it('a call asking to leave the sandbox always asks when the sandbox is on', async () => {
  fx = await makeFixture(settings(['Bash(npm test)']));
  const engine = await createPermissionEngine({ workspace: fx.ws, home: fx.home, sandbox: { enabled: true }, trust: TRUST_EVERYTHING });
  const subject = { kind: 'execute' as const, tool: 'Bash', command: 'npm test', cwd: fx.ws, summary: '' };
  expect((await engine.decide({ tool: 'Bash', input: { command: 'npm test', dangerouslyDisableSandbox: true }, subject, readOnly: false }, 'bypassPermissions')).decision).toBe('ask');
  expect((await engine.decide({ tool: 'Bash', input: { command: 'npm test' }, subject, readOnly: false }, 'default')).decision).toBe('allow');
});
