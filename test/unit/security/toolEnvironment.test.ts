import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readUserPassEnv } from '../../../src/core/security/passEnv';
import { SecretKeeper } from '../../../src/core/security/secretKeeper';
import { removalReason, toolEnvironment } from '../../../src/core/security/toolEnvironment';
import { runProcess } from '../../../src/core/tools/processRunner';
import { makeTempDir } from '../tools/helpers';

const KEY = `sk-ant-api03-${'Zx9_'.repeat(23)}yAA`;
const BASE: NodeJS.ProcessEnv = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/home/jane',
  LANG: 'C.UTF-8',
  LD_LIBRARY_PATH: '/opt/cuda/lib64',
  GIT_AUTHOR_NAME: 'Jane Doe',
  KEEL_HOME: '/home/jane/.keel',
  KEEL_MODEL: 'sonnet',
  ANTHROPIC_API_KEY: KEY,
  ANTHROPIC_AUTH_TOKEN: 'auth-token-value-1234',
  OPENAI_API_KEY: 'sk-openai-looking-value-5678',
  CLAUDE_CODE_OAUTH_TOKEN: 'oauth-value-9012',
  KEEL_TEST_TOKEN: 'keel-token-3456',
  MY_COPY_OF_THE_KEY: KEY,
  AUTH_HEADER: `x-api-key: ${KEY}`,
  BASH_ENV: '/work/ws/.hook.sh',
  ENV: '/work/ws/.hook.sh',
  CDPATH: '/',
  'BASH_FUNC_ls%%': '() {  rm -rf src\n}',
  SHELLOPTS: 'braceexpand:hashall:xtrace',
  RIPGREP_CONFIG_PATH: '/work/ws/.rgrc',
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'core.pager',
  GIT_CONFIG_VALUE_0: 'sh -c id',
  GIT_CONFIG_PARAMETERS: "'core.fsmonitor'='touch x'",
  GIT_CONFIG_GLOBAL: '/work/ws/.gitconfig',
  GIT_DIR: '/elsewhere/.git',
  LESSOPEN: '| /work/ws/pre.sh %s',
  TAR_OPTIONS: '--to-command=sh',
  LD_PRELOAD: '/work/ws/x.so',
  NODE_OPTIONS: '--require ./evil.js',
  PAGER: 'sh -c id',
};

describe('toolEnvironment', () => {
  const env = toolEnvironment({ secretValues: [KEY] }, BASE);

  it("removes Keel's provider keys and KEEL_* secrets, keeps Keel's other settings", () => {
    for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'KEEL_TEST_TOKEN']) expect(env[k], k).toBeUndefined();
    expect(env.KEEL_HOME).toBe('/home/jane/.keel');
    expect(env.KEEL_MODEL).toBe('sonnet');
  });

  it('removes any variable holding a key Keel holds, whatever its name', () => {
    expect(env.MY_COPY_OF_THE_KEY).toBeUndefined();
    expect(env.AUTH_HEADER).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain(KEY);
  });

  it('removes what would make the permission analysis unsound', () => {
    for (const k of ['BASH_ENV', 'ENV', 'CDPATH', 'BASH_FUNC_ls%%', 'SHELLOPTS', 'RIPGREP_CONFIG_PATH', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_GLOBAL', 'GIT_DIR', 'LESSOPEN', 'TAR_OPTIONS', 'LD_PRELOAD', 'NODE_OPTIONS', 'PAGER']) {
      expect(env[k], k).toBeUndefined();
    }
  });

  it('keeps what ordinary work needs', () => {
    expect(env).toEqual({ PATH: BASE.PATH, HOME: BASE.HOME, LANG: BASE.LANG, LD_LIBRARY_PATH: BASE.LD_LIBRARY_PATH, GIT_AUTHOR_NAME: 'Jane Doe', KEEL_HOME: BASE.KEEL_HOME, KEEL_MODEL: 'sonnet' });
  });

  it('passes through exactly the names the person chose', () => {
    const passed = toolEnvironment({ secretValues: [KEY], passThrough: ['OPENAI_API_KEY', 'GIT_DIR'] }, BASE);
    expect(passed.OPENAI_API_KEY).toBe(BASE.OPENAI_API_KEY);
    expect(passed.GIT_DIR).toBe('/elsewhere/.git');
    expect(passed.ANTHROPIC_API_KEY).toBeUndefined();
  });

  it('says why a variable is removed, and never changes its input', () => {
    expect(removalReason('OPENAI_API_KEY', 'x', [])).toBe('provider key');
    expect(removalReason('TOKEN_COPY', `a${KEY}b`, [KEY])).toBe('holds a key Keel holds');
    expect(removalReason('BASH_FUNC_cat%%', '() { :; }', [])).toBe('changes what commands do');
    expect(removalReason('HOME', '/home/jane', [KEY])).toBeNull();
    expect(BASE.ANTHROPIC_API_KEY).toBe(KEY);
  });
});

describe('SecretKeeper', () => {
  it("starts with the keys in Keel's environment and remembers the ones it reads later", () => {
    const keeper = SecretKeeper.fromEnvironment({ ANTHROPIC_API_KEY: KEY, KEEL_DEPLOY_TOKEN: 'deploy-token-77', HOME: '/h' });
    expect(keeper.values().sort()).toEqual([KEY, 'deploy-token-77'].sort());
    keeper.remember('from-secret-storage-1');
    keeper.remember('short');
    keeper.remember(undefined);
    expect(keeper.values()).toContain('from-secret-storage-1');
    expect(keeper.values()).not.toContain('short');
    expect(keeper.environment({ COPY: 'from-secret-storage-1', HOME: '/h' })).toEqual({ HOME: '/h' });
    expect(keeper.redact('key from-secret-storage-1 here')).toBe('key [REDACTED:known-value] here');
  });
});

describe('real processes get the tool environment', () => {
  const saved = { ...process.env };
  let tmp: ReturnType<typeof makeTempDir> | undefined;
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    tmp?.cleanup();
  });

  async function bash(command: string, cwd: string, env?: NodeJS.ProcessEnv): Promise<string> {
    let out = '';
    const r = await runProcess('/bin/bash', ['-c', command], { cwd, signal: new AbortController().signal, ...(env ? { env } : {}), onStdout: (c) => (out += c), onStderr: (c) => (out += c) });
    expect(r.kind).toBe('exited');
    return out;
  }

  it("runProcess without an env never hands over Keel's keys (printenv, /proc/self/environ)", async () => {
    tmp = makeTempDir();
    process.env.ANTHROPIC_API_KEY = KEY;
    process.env.OPENAI_API_KEY = 'sk-openai-looking-value-5678';
    const out = await bash("printenv; env; cat /proc/self/environ | tr '\\0' '\\n'", tmp.dir);
    expect(out).toContain('PATH=');
    expect(out).not.toContain(KEY);
    expect(out).not.toContain('sk-openai-looking-value-5678');
  });

  it('BASH_ENV and an exported function in Keel\'s environment run nothing in a tool\'s bash', async () => {
    tmp = makeTempDir();
    const ws = tmp.dir;
    mkdirSync(join(ws, 'src'));
    writeFileSync(join(ws, 'hook.sh'), `touch ${join(ws, 'hooked')}\n`);
    const inherited = { ...process.env, BASH_ENV: join(ws, 'hook.sh'), 'BASH_FUNC_ls%%': '() {  rm -rf src\n}' };
    // What bash does with them, to prove they are real threats:
    await bash('ls >/dev/null', ws, inherited);
    expect(existsSync(join(ws, 'hooked'))).toBe(true);
    expect(existsSync(join(ws, 'src'))).toBe(false);
    // Through the tool environment, nothing of it happens.
    mkdirSync(join(ws, 'src'));
    writeFileSync(join(ws, 'hook.sh'), `touch ${join(ws, 'hooked2')}\n`);
    await bash('ls >/dev/null', ws, new SecretKeeper().environment(inherited));
    expect(existsSync(join(ws, 'hooked2'))).toBe(false);
    expect(existsSync(join(ws, 'src'))).toBe(true);
  });
});

describe('passEnv from the user settings file', () => {
  let tmp: ReturnType<typeof makeTempDir> | undefined;
  afterEach(() => tmp?.cleanup());

  it('reads valid names, reports bad ones, and survives a missing or broken file', () => {
    tmp = makeTempDir();
    const file = join(tmp.dir, 'settings.json');
    expect(readUserPassEnv(file)).toEqual({ names: [], problems: [] });
    writeFileSync(file, JSON.stringify({ permissions: { allow: [] }, passEnv: ['NPM_TOKEN', 'bad name', 'GIT_SSH_COMMAND', 3] }));
    const r = readUserPassEnv(file);
    expect(r.names).toEqual(['NPM_TOKEN', 'GIT_SSH_COMMAND']);
    expect(r.problems).toHaveLength(2);
    writeFileSync(file, '{ not json');
    expect(readUserPassEnv(file).names).toEqual([]);
    expect(readUserPassEnv(file).problems[0]).toMatch(/not JSON/);
    writeFileSync(file, JSON.stringify({ passEnv: 'NPM_TOKEN' }));
    expect(readUserPassEnv(file)).toMatchObject({ names: [], problems: [expect.stringMatching(/must be a list/)] });
  });
});
