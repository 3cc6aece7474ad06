import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDomainPattern, decideHost, normalizeHost } from '../../../src/core/sandbox/domains';
import { loadSandboxSettings, mergeSandboxLayers } from '../../../src/core/sandbox/settings';
import { vscodeSandboxLayers } from '../../../src/extension/sandboxConfig';
import { makeTempDir } from '../tools/helpers';

describe('the allow-list decision', () => {
  const allowed = ['github.com', '*.npmjs.org', '10.0.0.5', '::1'];
  const ok = (host: string, list = allowed, denied: string[] = []) => decideHost(host, list, denied).allowed;

  it('allows listed hosts as WebFetch rules match them', () => {
    expect(ok('github.com')).toBe(true);
    expect(ok('GitHub.COM.')).toBe(true);
    expect(ok('registry.npmjs.org')).toBe(true);
    expect(ok('a.b.npmjs.org')).toBe(true);
    expect(ok('npmjs.org')).toBe(false);
    expect(ok('api.github.com')).toBe(false);
    expect(ok('github.com.evil.test')).toBe(false);
    expect(ok('evilgithub.com')).toBe(false);
  });

  it('reaches IP addresses and localhost only when listed exactly, whatever their spelling', () => {
    expect(ok('10.0.0.5')).toBe(true);
    expect(ok('167772165')).toBe(true);
    expect(ok('[::1]')).toBe(true);
    expect(ok('127.0.0.1', ['*'])).toBe(false);
    expect(ok('2130706433', ['*'])).toBe(false);
    expect(ok('0x7f.1', ['*'])).toBe(false);
    expect(ok('localhost', ['*'])).toBe(false);
    expect(ok('x.localhost', ['*', '*.localhost'])).toBe(false);
    expect(ok('LOCALHOST.', ['localhost'])).toBe(true);
    expect(ok('anything.test', ['*'])).toBe(true);
    expect(decideHost('127.0.0.1', ['*'], [])).toMatchObject({ allowed: false, reason: expect.stringContaining('reached only when listed exactly') });
  });

  it('lets denied domains win and refuses what does not parse', () => {
    expect(ok('github.com', allowed, ['github.com'])).toBe(false);
    expect(ok('registry.npmjs.org', allowed, ['*.npmjs.org'])).toBe(false);
    expect(ok('10.0.0.5', allowed, ['10.0.0.5'])).toBe(false);
    expect(decideHost('a b', ['*'], [])).toMatchObject({ allowed: false, reason: expect.stringContaining('not a valid host') });
    expect(decideHost('x@github.com', ['*'], []).allowed).toBe(false);
    expect(normalizeHost('ex%61mple.com')).toBe('example.com');
  });

  it('accepts hosts, *.hosts, * and addresses as patterns, nothing else', () => {
    expect(checkDomainPattern('GitHub.com')).toEqual({ ok: true, pattern: 'github.com' });
    expect(checkDomainPattern('*.NPMjs.org')).toEqual({ ok: true, pattern: '*.npmjs.org' });
    expect(checkDomainPattern('*')).toEqual({ ok: true, pattern: '*' });
    expect(checkDomainPattern('[::1]')).toEqual({ ok: true, pattern: '::1' });
    for (const bad of ['https://github.com', 'github.com:443', 'github.com/x', '*.10.0.0.1', 'a*.b', '', 42]) expect(checkDomainPattern(bad)).toMatchObject({ ok: false });
  });
});

describe('sandbox settings: the person widens, a project only narrows', () => {
  const dirs: { cleanup: () => void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.cleanup();
  });
  const write = (root: string, rel: string, json: unknown) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), typeof json === 'string' ? json : JSON.stringify(json));
  };
  const fixture = () => {
    const home = makeTempDir('keel-sbs-home-');
    const ws = makeTempDir('keel-sbs-ws-');
    dirs.push(home, ws);
    return { home: home.dir, ws: ws.dir };
  };

  it('reads Claude Code names from the user file', () => {
    const f = fixture();
    write(f.home, '.keel/settings.json', { sandbox: { enabled: true, excludedCommands: ['docker *'], network: { allowedDomains: ['GitHub.com', '*.npmjs.org'], deniedDomains: ['gist.github.com'] } } });
    expect(loadSandboxSettings({ workspace: f.ws, home: f.home })).toEqual({
      settings: { enabled: true, excludedCommands: ['docker *'], network: { allowedDomains: ['github.com', '*.npmjs.org'], deniedDomains: ['gist.github.com'] } },
      problems: [],
    });
  });

  it('lets every project file turn the sandbox on and deny domains, never widen it', () => {
    const f = fixture();
    write(f.home, '.keel/settings.json', { sandbox: { network: { allowedDomains: ['github.com'] } } });
    write(f.ws, '.claude/settings.json', { sandbox: { enabled: true, excludedCommands: ['curl'], network: { allowedDomains: ['evil.test'] } } });
    write(f.ws, '.keel/settings.local.json', { sandbox: { network: { deniedDomains: ['github.com'] } }, permissions: { deny: ['WebFetch(domain:*.corp.test)', 'Bash(rm:*)'] } });
    const { settings, problems } = loadSandboxSettings({ workspace: f.ws, home: f.home });
    expect(settings).toEqual({ enabled: true, network: { allowedDomains: ['github.com'], deniedDomains: ['*.corp.test', 'github.com'] } });
    expect(problems).toEqual([
      expect.stringMatching(/\.claude\/settings\.json: sandbox\.excludedCommands is ignored; a project cannot take commands out of the sandbox/),
      expect.stringMatching(/\.claude\/settings\.json: sandbox\.network\.allowedDomains is ignored; a project can narrow the network, not widen it \(allow evil\.test in/),
    ]);
  });

  it('never lets a project turn the sandbox off', () => {
    const f = fixture();
    write(f.home, '.keel/settings.json', { sandbox: { enabled: true } });
    write(f.ws, '.keel/settings.json', { sandbox: { enabled: false } });
    const { settings, problems } = loadSandboxSettings({ workspace: f.ws, home: f.home });
    expect(settings.enabled).toBe(true);
    expect(problems).toEqual([expect.stringContaining('sandbox.enabled: false is ignored; a project can turn the sandbox on, not off')]);
  });

  it('reports bad files and values and keeps what is good', () => {
    const f = fixture();
    write(f.home, '.keel/settings.json', { sandbox: { enabled: 'yes', network: { allowedDomains: ['https://github.com/', 'docs.rs'] }, excludedCommands: 'docker' } });
    write(f.ws, '.keel/settings.json', '{ not json');
    write(f.ws, '.claude/settings.json', { sandbox: { network: 'none' } });
    const { settings, problems } = loadSandboxSettings({ workspace: f.ws, home: f.home });
    expect(settings).toEqual({ enabled: false, network: { allowedDomains: ['docs.rs'] } });
    expect(problems).toEqual([
      expect.stringContaining('sandbox.enabled must be true or false'),
      expect.stringContaining('sandbox.excludedCommands must be a list of strings'),
      expect.stringContaining('"https://github.com/" is not a host name'),
      expect.stringContaining('.claude/settings.json: sandbox.network must be an object'),
      expect.stringMatching(/\.keel\/settings\.json: not valid JSON/),
    ]);
  });

  it('takes VS Code user settings as the person\'s own, workspace values as a project\'s', () => {
    const problems: string[] = [];
    const layers = vscodeSandboxLayers({ globalValue: false, workspaceValue: true }, { globalValue: ['docs.rs', 'bad/url'], workspaceValue: ['evil.test'] }, problems);
    expect(problems).toEqual([expect.stringContaining('keel.sandbox.network.allowedDomains: "bad/url"')]);
    const merged = mergeSandboxLayers(layers);
    expect(merged.settings).toEqual({ enabled: true, network: { allowedDomains: ['docs.rs'] } });
    expect(merged.problems).toEqual([expect.stringContaining('VS Code workspace settings: sandbox.network.allowedDomains is ignored')]);
    const off = mergeSandboxLayers(vscodeSandboxLayers({ globalValue: true, workspaceFolderValue: false }, undefined, []));
    expect(off.settings.enabled).toBe(true);
    expect(off.problems).toEqual([expect.stringContaining('VS Code workspace folder settings: sandbox.enabled: false is ignored')]);
  });
});
