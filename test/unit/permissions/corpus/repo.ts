import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionFixture } from '../fixture';

/** Runs git in `cwd` with a clean environment (no system config; `home` as HOME). */
export function git(cwd: string, home: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'k', GIT_AUTHOR_EMAIL: 'k@x', GIT_COMMITTER_NAME: 'k', GIT_COMMITTER_EMAIL: 'k@x' },
  });
}

/**
 * Makes the fixture's workspace a git repository (its `.git` folder replaced): two commits on
 * main, the second changing src/a.ts; secrets/key.pem committed in the first (so history shows
 * it); a local author (real-bash checks commit without the test's environment). Also a bare
 * repository `outside/remote.git` to clone from.
 */
export function initRepo(fx: PermissionFixture): void {
  execFileSync('rm', ['-rf', join(fx.ws, '.git')]);
  const g = (...a: string[]) => git(fx.ws, fx.home, ...a);
  g('init', '-q', '-b', 'main');
  g('config', 'user.name', 'k');
  g('config', 'user.email', 'k@x');
  g('add', 'src/a.ts', 'package.json', 'secrets/key.pem');
  g('commit', '-q', '-m', 'init');
  writeFileSync(join(fx.ws, 'src', 'a.ts'), 'export const a = 2;\n');
  g('commit', '-q', '-am', 'second');
  mkdirSync(join(fx.outside, 'remote.git'), { recursive: true });
  git(join(fx.outside, 'remote.git'), fx.home, 'init', '-q', '--bare', '-b', 'main');
  g('push', '-q', join(fx.outside, 'remote.git'), 'main');
}
